package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

func TestBreakerOpensFailsFastAndRecovers(t *testing.T) {
	var requests atomic.Int32
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if !healthy.Load() {
			w.WriteHeader(503)
			_, _ = io.WriteString(w, errorBody("unavailable"))
			return
		}
		_, _ = io.WriteString(w, inventoryBody)
	}))
	defer srv.Close()
	c, logs := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.Inventory(ctx, "47", "8847291"); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if c.BreakerState() != "open" {
		t.Fatalf("breaker %s after 3 failures", c.BreakerState())
	}
	before := requests.Load()
	_, err := c.Inventory(ctx, "47", "8847291")
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.UpstreamUnavailable || ae.RetryAfterSeconds < 0 {
		t.Fatalf("open breaker: %v", err)
	}
	if requests.Load() != before {
		t.Fatal("a request left while the breaker was open")
	}
	healthy.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for c.BreakerState() == "open" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Inventory(ctx, "47", "8847291"); err != nil {
		t.Fatalf("after cool-down: %v", err)
	}
	if c.BreakerState() != "closed" {
		t.Fatalf("breaker %s after a good probe", c.BreakerState())
	}
	if !strings.Contains(logs.String(), `"msg":"breaker.state"`) {
		t.Fatal("no breaker state change logged")
	}
}

func TestFourXXDoesNotTripBreaker(t *testing.T) {
	c, _ := newClient(t, answering(t, 404, nil, errorBody("not_found")), keys47(), nil)
	for i := 0; i < 10; i++ {
		_, _ = c.Inventory(context.Background(), "47", "8847291")
	}
	if c.BreakerState() != "closed" {
		t.Fatalf("breaker %s after 404s", c.BreakerState())
	}
}

// TestFanOutAfterCoolDownSucceeds: after the cool-down, concurrent requests
// wait for the half-open probe's result: a good probe lets them through, a
// bad one fails them fast.
func TestFanOutAfterCoolDownSucceeds(t *testing.T) {
	var requests atomic.Int32
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if !healthy.Load() {
			w.WriteHeader(503)
			_, _ = io.WriteString(w, errorBody("unavailable"))
			return
		}
		_, _ = io.WriteString(w, inventoryBody)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	ctx := context.Background()
	trip := func() {
		t.Helper()
		for c.BreakerState() != "open" {
			if _, err := c.Inventory(ctx, "47", "8847291"); err == nil {
				t.Fatal("a failing StoreLink answered")
			}
		}
	}
	coolDown := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for c.BreakerState() == "open" {
			if time.Now().After(deadline) {
				t.Fatal("the breaker never left the open state")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	fanOut := func() (errs []error) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Inventory(ctx, "47", "8847291")
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}()
		}
		wg.Wait()
		return errs
	}

	// StoreLink still down after the cool-down: one probe, the rest fail fast.
	trip()
	coolDown()
	before := requests.Load()
	for _, err := range fanOut() {
		if apperr.CodeOf(err) != apperr.UpstreamUnavailable {
			t.Fatalf("fan-out against a failing StoreLink: %v", err)
		}
	}
	if n := requests.Load() - before; n != 1 {
		t.Fatalf("%d requests reached a failing StoreLink after the cool-down, want the one probe", n)
	}

	// StoreLink recovered: every request of the fan-out succeeds.
	coolDown()
	healthy.Store(true)
	for _, err := range fanOut() {
		if err != nil {
			t.Fatalf("first fan-out after recovery: %v", err)
		}
	}
	if c.BreakerState() != "closed" {
		t.Fatalf("breaker %s", c.BreakerState())
	}
}
