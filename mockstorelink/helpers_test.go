package mockstorelink_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/storelinkclient"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// start serves a mock for one test and checks, when the test ends, that the
// mock never broke the contract itself.
func start(t *testing.T, opts mockstorelink.Options) *mockstorelink.Running {
	t.Helper()
	if opts.Now == nil {
		opts.Now = mockstorelink.DefaultNow
	}
	return startRaw(t, opts, true)
}

// startRaw is start without a default clock; checkViolations false is for
// the tests that provoke violations on purpose.
func startRaw(t *testing.T, opts mockstorelink.Options, checkViolations bool) *mockstorelink.Running {
	t.Helper()
	r, err := mockstorelink.Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if checkViolations {
			if v := r.Server.Violations(); len(v) > 0 {
				t.Errorf("the mock broke the contract:\n%s", strings.Join(v, "\n"))
			}
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

func newClient(t *testing.T, url string) *storelinkclient.ClientWithResponses {
	t.Helper()
	c, err := storelinkclient.NewClientWithResponses(url, storelinkclient.WithHTTPClient(&http.Client{Timeout: 20 * time.Second}))
	if err != nil {
		t.Fatalf("NewClientWithResponses: %v", err)
	}
	return c
}

// key authenticates one request.
func key(k string) storelinkclient.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set(mockstorelink.StoreKeyHeader, k)
		return nil
	}
}

// rawGet sends a GET and returns status, headers and body.
func rawGet(t *testing.T, url, storeKey string) (int, http.Header, []byte) {
	t.Helper()
	return rawDo(t, http.MethodGet, url, storeKey, nil)
}

func rawDo(t *testing.T, method, url, storeKey string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if storeKey != "" {
		req.Header.Set(mockstorelink.StoreKeyHeader, storeKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, resp.Header, b
}

// errorCode decodes the contract's error body strictly and returns its code;
// it fails the test when the body is anything else.
func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e storelinkclient.Error
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("body is not the contract's error body (%v): %.300s", err, body)
	}
	return e.Error.Code
}

// allTransactions walks every page of a POS query.
func allTransactions(t *testing.T, c *storelinkclient.ClientWithResponses, storeKey, storeID, sku string, since time.Time, limit int) []storelinkclient.POSTransaction {
	t.Helper()
	var out []storelinkclient.POSTransaction
	params := &storelinkclient.ListPOSTransactionsParams{SKU: sku, Since: since, Limit: &limit}
	var total int64 = -1
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatal("pagination does not end")
		}
		resp, err := c.ListPOSTransactionsWithResponse(t.Context(), storeID, params, key(storeKey))
		if err != nil {
			t.Fatalf("ListPOSTransactions: %v", err)
		}
		if resp.JSON200 == nil {
			t.Fatalf("ListPOSTransactions: status %d: %s", resp.StatusCode(), resp.Body)
		}
		p := resp.JSON200
		if total >= 0 && p.TotalCount != total {
			t.Fatalf("total_count changed between pages: %d then %d", total, p.TotalCount)
		}
		total = p.TotalCount
		if len(p.Transactions) > limit {
			t.Fatalf("page of %d transactions exceeds limit %d", len(p.Transactions), limit)
		}
		out = append(out, p.Transactions...)
		if p.NextCursor == nil {
			break
		}
		params.Cursor = p.NextCursor
	}
	if int64(len(out)) != total {
		t.Fatalf("walked %d transactions, total_count says %d", len(out), total)
	}
	return out
}

func sumUnits(txns []storelinkclient.POSTransaction) int64 {
	var n int64
	for _, x := range txns {
		n += x.Units
	}
	return n
}

// step is one named check over a world shared by a test's steps.
type step[W any] struct {
	name string
	run  func(*testing.T, W)
}

// runSteps runs the steps over w as subtests, in order.
func runSteps[W any](t *testing.T, w W, steps []step[W]) {
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { s.run(t, w) })
	}
}
