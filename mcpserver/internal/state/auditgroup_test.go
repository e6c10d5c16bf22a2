package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeTrail is a backend for AuditGroup that keeps what it commits and can
// hold a write until the test lets it go, so that records queue up.
type fakeTrail struct {
	mu        sync.Mutex
	groups    [][]string // the call ids of every write, committed or not
	committed []string
	// gate, when set, holds every write until it is closed.
	gate chan struct{}
	// refuse is blamed (AuditRowError) whenever a write holds it.
	refuse string
	// fail fails every write that holds it, blaming no record.
	fail string
}

func (f *fakeTrail) write(_ context.Context, recs []AuditRecord) error {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.CallID
	}
	f.groups = append(f.groups, ids)
	for i, id := range ids {
		if id == f.refuse {
			return &AuditRowError{Index: i, Err: fmt.Errorf("refused %s", id)}
		}
		if id == f.fail {
			return errors.New("disk full")
		}
	}
	f.committed = append(f.committed, ids...)
	return nil
}

func (f *fakeTrail) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, g := range f.groups {
		out = append(out, len(g))
	}
	return out
}

func waitFor(g *AuditGroup, queued, inFlight int) {
	for {
		q, f := g.Backlog()
		if q == queued && f == inFlight {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// queueBehind starts the call "first", waits until the writer holds it in
// a write held by f.gate, and then starts the calls ids, each once the one
// before is queued. It returns each call's outcome, by id, once they return.
func queueBehind(t *testing.T, g *AuditGroup, ids []string) func() map[string]error {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	out := map[string]error{}
	var wg sync.WaitGroup
	call := func(id string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := g.Record(ctx, AuditRecord{CallID: id})
			mu.Lock()
			out[id] = err
			mu.Unlock()
		}()
	}
	call("first")
	waitFor(g, 0, 1)
	for i, id := range ids {
		// One at a time, so that the group holds them in this order.
		call(id)
		waitFor(g, i+1, 1)
	}
	mu.Lock()
	if len(out) != 0 {
		t.Errorf("%d calls returned while their records were not written", len(out))
	}
	mu.Unlock()
	return func() map[string]error {
		wg.Wait()
		return out
	}
}

func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func TestAuditGroupCommitsWhatQueuedDuringAWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		queue int
		want  []int
	}{
		{"one", 1, []int{1, 1}},
		{"ten", 10, []int{1, 10}},
		{"exactly the most one group holds", MaxAuditGroup, []int{1, MaxAuditGroup}},
		{"one more than a group holds", MaxAuditGroup + 1, []int{1, MaxAuditGroup, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTrail{gate: make(chan struct{})}
			g := NewAuditGroup(f.write)
			defer g.Close()
			wait := queueBehind(t, g, ids("c", tc.queue))
			close(f.gate)
			for id, err := range wait() {
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}
			if got := f.sizes(); !slices.Equal(got, tc.want) {
				t.Errorf("group sizes = %v, want %v", got, tc.want)
			}
			if len(f.committed) != tc.queue+1 {
				t.Errorf("committed %d records, want %d", len(f.committed), tc.queue+1)
			}
		})
	}
}

// A record the backend refuses fails its own caller; the rest of its group
// is written again without it and succeeds.
func TestAuditGroupRefusedRecordFailsAlone(t *testing.T) {
	for _, refuse := range []string{"c-0", "c-4", "c-9"} {
		t.Run(refuse, func(t *testing.T) {
			f := &fakeTrail{gate: make(chan struct{}), refuse: refuse}
			g := NewAuditGroup(f.write)
			defer g.Close()
			wait := queueBehind(t, g, ids("c", 10))
			close(f.gate)
			for id, err := range wait() {
				if (id == refuse) != (err != nil) {
					t.Errorf("%s: err = %v", id, err)
				}
			}
			if got, want := f.sizes(), []int{1, 10, 9}; !slices.Equal(got, want) {
				t.Errorf("writes = %v, want %v (the refused record's group written again without it)", got, want)
			}
			if slices.Contains(f.committed, refuse) || len(f.committed) != 10 {
				t.Errorf("committed %v", f.committed)
			}
		})
	}
}

// A failure blamed on no record is every caller's in the group, and only
// theirs: the next group is written as usual.
func TestAuditGroupFailureIsTheGroups(t *testing.T) {
	f := &fakeTrail{gate: make(chan struct{}), fail: "c-4"}
	g := NewAuditGroup(f.write)
	defer g.Close()
	wait := queueBehind(t, g, ids("c", 10))
	close(f.gate)
	for id, err := range wait() {
		if (id != "first") != (err != nil) {
			t.Errorf("%s: err = %v", id, err)
		}
	}
	if got, want := f.sizes(), []int{1, 10}; !slices.Equal(got, want) {
		t.Errorf("writes = %v, want %v", got, want)
	}
	if err := g.Record(context.Background(), AuditRecord{CallID: "later"}); err != nil {
		t.Errorf("the next group: %v", err)
	}
}

// A caller whose context ends while its record is queued takes it back; one
// whose record is already being written waits for the outcome.
func TestAuditGroupCancel(t *testing.T) {
	f := &fakeTrail{gate: make(chan struct{})}
	g := NewAuditGroup(f.write)
	defer g.Close()
	inFlight, cancelInFlight := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- g.Record(inFlight, AuditRecord{CallID: "in-flight"}) }()
	waitFor(g, 0, 1)
	queued, cancelQueued := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- g.Record(queued, AuditRecord{CallID: "gave-up"}) }()
	waitFor(g, 1, 1)
	cancelQueued()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("queued caller: err = %v, want context.Canceled", err)
	}
	waitFor(g, 0, 1)
	cancelInFlight()
	close(f.gate)
	if err := <-first; err != nil {
		t.Fatalf("caller whose record was in flight: %v, want its write's outcome", err)
	}
	if !slices.Equal(f.committed, []string{"in-flight"}) {
		t.Fatalf("committed %v", f.committed)
	}
}

// Close writes what is queued before it returns, and refuses what comes
// after.
func TestAuditGroupCloseDrains(t *testing.T) {
	f := &fakeTrail{gate: make(chan struct{})}
	g := NewAuditGroup(f.write)
	wait := queueBehind(t, g, ids("c", 5))
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	for {
		g.mu.Lock()
		c := g.closed
		g.mu.Unlock()
		if c {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := g.Record(context.Background(), AuditRecord{CallID: "late"}); !errors.Is(err, ErrAuditClosed) {
		t.Errorf("Record after Close: %v, want ErrAuditClosed", err)
	}
	close(f.gate)
	<-closed
	for id, err := range wait() {
		if err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if len(f.committed) != 6 {
		t.Errorf("committed %v, want first and c-0 … c-4", f.committed)
	}
}
