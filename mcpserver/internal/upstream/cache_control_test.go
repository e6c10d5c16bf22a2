package upstream

import (
	"context"
	"testing"
	"time"
)

func TestCacheControlMaxAgeCapsTheTTL(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47"})
	clock := newClock()
	c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, clock, nil)
	ctx := context.Background()
	read := func() {
		t.Helper()
		if _, err := c.Store(ctx, "47"); err != nil {
			t.Fatal(err)
		}
	}

	s.set(func(s *standIn) { s.headers[opStore] = "private, max-age=1" })
	read()
	clock.Advance(999 * time.Millisecond)
	read()
	if n := s.count(opStore); n != 1 {
		t.Fatalf("within max-age=1: %d requests, want 1", n)
	}
	clock.Advance(time.Millisecond)
	read()
	if n := s.count(opStore); n != 2 {
		t.Fatalf("a second after max-age=1: %d requests, want 2", n)
	}

	// A max-age beyond the TTL does not lengthen it.
	s.set(func(s *standIn) { s.headers[opStore] = "max-age=86400" })
	clock.Advance(time.Second)
	read()
	clock.Advance(DefaultMasterDataTTL)
	read()
	if n := s.count(opStore); n != 4 {
		t.Fatalf("max-age beyond the TTL: %d requests, want 4", n)
	}

	// An intermediary's Age counts against the lifetime.
	s.set(func(s *standIn) { s.headers[opStore] = "max-age=60"; s.age = "50" })
	clock.Advance(DefaultMasterDataTTL)
	read()
	clock.Advance(9 * time.Second)
	read()
	if n := s.count(opStore); n != 5 {
		t.Fatalf("max-age=60 with Age 50, read 9 s later: %d requests, want 5", n)
	}
	clock.Advance(time.Second)
	read()
	if n := s.count(opStore); n != 6 {
		t.Fatalf("max-age=60 with Age 50, read 10 s later: %d requests, want 6", n)
	}
}

func TestCacheControlNoStoreKeepsNothing(t *testing.T) {
	for _, cc := range []string{"no-store", "No-Cache", "private, no-store", "max-age=0", `max-age="x"`} {
		t.Run(cc, func(t *testing.T) {
			s := newStandIn(t, map[string]string{"47": "k47"})
			s.set(func(s *standIn) { s.headers[opSKU] = cc })
			c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, newClock(), nil)
			for range 3 {
				if _, err := c.SKU(context.Background(), "47", "1"); err != nil {
					t.Fatal(err)
				}
			}
			if n := s.count(opSKU); n != 3 {
				t.Fatalf("Cache-Control %q: %d requests for 3 reads, want 3", cc, n)
			}
		})
	}
}

func TestLifetimeFromCacheControl(t *testing.T) {
	ttl := 5 * time.Minute
	for _, tc := range []struct {
		cc, age string
		want    time.Duration
	}{
		{"", "", ttl},
		{"private", "", ttl},
		{"public, max-age=60", "", time.Minute},
		{"MAX-AGE=60", "", time.Minute},
		{`max-age="30"`, "", 30 * time.Second},
		{"max-age=600", "", ttl},
		{"max-age=60, s-maxage=10", "", 10 * time.Second},
		{"max-age=60,max-age=20", "", 20 * time.Second},
		{"max-age=99999999999999999999", "", ttl},
		{"max-age=60", "20", 40 * time.Second},
		{"", "299", time.Second},
		{"", "nonsense", ttl},
		{"max-age=60", "60", 0},
		{"max-age=0", "", 0},
		{"max-age=-1", "", 0},
		{"max-age=1.5", "", 0},
		{"max-age", "", 0},
		{"no-store", "", 0},
		{"max-age=60, no-cache", "", 0},
		{`no-cache="set-cookie"`, "", 0},
		{"must-revalidate, max-age=60", "", time.Minute},
	} {
		got, reason := lifetime(freshnessHeaders{cacheControl: tc.cc, age: tc.age}, ttl)
		if got != tc.want || (got == 0) != (reason != "") {
			t.Errorf("Cache-Control %q, Age %q: %s (%q), want %s", tc.cc, tc.age, got, reason, tc.want)
		}
	}
}
