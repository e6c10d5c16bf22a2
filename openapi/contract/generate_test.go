package contract

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// genConfig is a check with generated cases and writes against the fake,
// with MaxOrders high enough for every generated write.
func genConfig(f *fake, baseURL string, seed uint64) Config {
	cfg := config(f, baseURL)
	cfg.AllowWrites, cfg.WriteStore, cfg.MaxOrders = true, "47", 1000
	cfg.Generate, cfg.Seed = true, seed
	return cfg
}

// generatedFailures lists "phase rule" for each finding of a generated
// case.
func generatedFailures(rep *Report) []string {
	var out []string
	for _, p := range rep.Probes {
		if p.CaseID == "" || p.Verdict != Drift {
			continue
		}
		for _, f := range p.Findings {
			out = append(out, p.Phase+" "+cmpOr(f.Rule, f.Kind))
		}
	}
	return out
}

func TestGenerateAgainstConformingFake(t *testing.T) {
	t.Parallel()
	f := newFake()
	rep := check(t, genConfig(f, f.serve(t).URL, 42))
	if got := failing(rep); len(got) != 0 {
		t.Fatalf("failing against a conformant StoreLink:\n%s", strings.Join(got, "\n"))
	}
	g := rep.Generated
	if g == nil || g.Sent != g.Planned || g.Sent < 100 {
		t.Fatalf("generated %+v, want every case of a full plan sent", g)
	}
	if rep.Requests != len(f.sent()) {
		t.Errorf("report counts %d requests, the fake saw %d", rep.Requests, len(f.sent()))
	}
	// Every operation of the contract gets data and auth cases (listStores
	// has no parameter, so auth only).
	cover := map[string]bool{}
	for _, p := range rep.Probes {
		cover[p.Phase+" "+p.Operation] = true
	}
	for id := range mustSpec(t).ops {
		if !cover["auth "+id] {
			t.Errorf("operation %s has no generated auth case", id)
		}
		if id != opListStores && !cover["data "+id] {
			t.Errorf("operation %s has no generated data case", id)
		}
	}
	// The only writes are to the write store.
	for _, r := range f.sent() {
		if !strings.HasPrefix(r, "GET ") && !strings.HasPrefix(r, "POST /v1/stores/47/") &&
			!regexp.MustCompile(`^(PUT|PATCH|DELETE|POST) /v1/stores/47(/|$|\?)`).MatchString(r) {
			t.Errorf("a write outside the write store: %s", r)
		}
	}
}

func TestGenerateWithoutWritesSendsOnlyGET(t *testing.T) {
	t.Parallel()
	f := newFake()
	cfg := genConfig(f, f.serve(t).URL, 42)
	cfg.AllowWrites, cfg.WriteStore = false, ""
	rep := check(t, cfg)
	if got := failing(rep); len(got) != 0 {
		t.Fatalf("failing: %v", got)
	}
	for _, r := range f.sent() {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("sent %s without --allow-writes", r)
		}
	}
}

func TestGenerateSameSeedSameRequests(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) []string {
		f := newFake()
		check(t, genConfig(f, f.serve(t).URL, seed))
		return f.sent()
	}
	a, b := run(99), run(99)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("the same seed sent other requests (-first +second):\n%s", diff)
	}
	if c := run(100); slices.Equal(a, c) {
		t.Error("another seed sent the very same sequence: the seed decides nothing")
	}
}

func TestGenerateBounds(t *testing.T) {
	t.Parallel()
	f := newFake()
	cfg := genConfig(f, f.serve(t).URL, 1)
	cfg.MaxRequests = 60
	rep := check(t, cfg)
	if n := len(f.sent()); n > 60 {
		t.Fatalf("%d requests with --max-requests 60", n)
	}
	if g := rep.Generated; g == nil || g.NotSent == 0 || g.Sent+g.NotSent != g.Planned {
		t.Fatalf("generated %+v: want the cases beyond the budget counted as not sent", g)
	}
	if rep.Verdict != Pass {
		t.Errorf("verdict %s: cases left out by the bound are not a failure", rep.Verdict)
	}
}

// isPOS matches the fake's POS path of store 47.
func isPOS(r *http.Request) bool { return r.URL.Path == "/v1/stores/47/pos" }

// acceptsNegativePOS answers 200 where the fake refuses a POS query as
// malformed: a StoreLink that does not validate its parameters.
func acceptsNegativePOS(next http.Handler) http.Handler {
	return rewrite(isPOS, func(status int, body map[string]any) (int, any) {
		if status != http.StatusBadRequest {
			return status, body
		}
		return 200, map[string]any{"store_id": "47", "sku": fakeSKU, "since": "2026-11-20T14:30:00Z", "transactions": []any{}, "total_count": 0}
	})(next)
}

func TestGeneratedCasesCatchMutations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		want string // "phase rule"
	}{
		{"2xx for negative data", acceptsNegativePOS, "data " + RuleNegativeAccepted},
		{"5xx", rewrite(func(r *http.Request) bool { return isPOS(r) && r.URL.Query().Get("limit") == "1000" },
			func(int, map[string]any) (int, any) {
				return 500, map[string]any{"error": map[string]any{"code": "internal", "message": "boom"}}
			}), "data " + RuleServerError},
		{"ignored auth: a missing key is accepted", func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Korral-Store-Key") == "" {
					r.Header.Set("X-Korral-Store-Key", "slk_47_0123456789abcdef")
				}
				next.ServeHTTP(w, r)
			})
		}, "auth " + RuleAuthIgnored},
		{"wrong auth status", rewrite(func(r *http.Request) bool { return r.URL.Path == "/v1/skus/"+fakeSKU },
			func(status int, body map[string]any) (int, any) {
				if status == 401 {
					return 403, body
				}
				return status, body
			}), "auth " + RuleAuthStatus},
		{"an unsupported method accepted", rewrite(func(r *http.Request) bool { return r.Method == http.MethodDelete },
			func(int, map[string]any) (int, any) { return 204, []byte{} }), "method " + RuleMethodAccepted},
		{"chain: the order reads back with another quantity", rewrite(func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/replenishment/RO-47-0005")
		}, func(status int, body map[string]any) (int, any) {
			if status == 200 {
				n, _ := strconv.Atoi(string(body["quantity_units"].(interface{ String() string }).String()))
				body["quantity_units"] = n * 2
			}
			return status, body
		}), "chain order.readback"},
		{"chain: the order cannot be read back", rewrite(func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/replenishment/RO-47-0005")
		}, func(int, map[string]any) (int, any) {
			return 404, map[string]any{"error": map[string]any{"code": "not_found", "message": "no such order"}}
		}), "chain " + RuleLinkStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			rep := check(t, genConfig(f, f.serve(t, tc.wrap).URL, 5))
			if got := generatedFailures(rep); !slices.Contains(got, tc.want) {
				t.Fatalf("no %q among the generated cases' findings:\n%s", tc.want, strings.Join(got, "\n"))
			}
			if rep.ExitCode() != 1 {
				t.Errorf("exit %d, want 1", rep.ExitCode())
			}
		})
	}
}

func TestFailingCasesAreShrunk(t *testing.T) {
	t.Parallel()
	f := newFake()
	rep := check(t, genConfig(f, f.serve(t, acceptsNegativePOS).URL, 5))
	file := rep.ReplayFile()
	if len(file.Cases) == 0 || rep.Generated.Shrunk == 0 {
		t.Fatalf("%d failing cases, %d shrunk: want failures, some shrunk", len(file.Cases), rep.Generated.Shrunk)
	}
	for _, c := range file.Cases {
		if c.Operation != opListPOS || c.Phase != PhaseData {
			continue
		}
		if !strings.HasPrefix(c.Name, "query limit") {
			// limit is optional: a failure that does not need it drops it.
			if _, has := c.Query["limit"]; has {
				t.Errorf("case %s (%s) still sends limit: not shrunk", c.ID, c.Name)
			}
			continue
		}
		if n, err := strconv.Atoi(c.Query["limit"]); err == nil && n > 1000 && strings.Contains(c.Name, "far above") {
			if !strings.HasSuffix(c.Name, "(shrunk)") {
				t.Errorf("case %s limit=%d far above the maximum was not moved toward it", c.ID, n)
			}
		}
		if !slices.Contains(c.Rules, RuleNegativeAccepted) {
			t.Errorf("case %s keeps rules %v, want %s", c.ID, c.Rules, RuleNegativeAccepted)
		}
	}
}

func TestReplayResendsExactlyTheFailingCases(t *testing.T) {
	t.Parallel()
	f := newFake()
	broken := f.serve(t, acceptsNegativePOS)
	rep := check(t, genConfig(f, broken.URL, 5))
	file := rep.ReplayFile()
	if len(file.Cases) == 0 {
		t.Fatal("no failing case to replay")
	}
	var want []string
	for _, c := range file.Cases {
		want = append(want, c.Method+" "+c.target())
	}
	before := len(f.sent())
	cfg := config(f, broken.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	again, err := Replay(context.Background(), cfg, file)
	if err != nil {
		t.Fatal(err)
	}
	got := f.sent()[before:]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("replay sent other requests than the file's (-file +sent):\n%s", diff)
	}
	if again.ExitCode() != 1 || again.Summary.Drift != len(file.Cases) {
		t.Errorf("replay against the same StoreLink: exit %d, %d of %d still failing; want all", again.ExitCode(), again.Summary.Drift, len(file.Cases))
	}

	fixed := newFake()
	cfg = config(fixed, fixed.serve(t).URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	passed, err := Replay(context.Background(), cfg, file)
	if err != nil {
		t.Fatal(err)
	}
	if passed.ExitCode() != 0 || passed.Summary.Pass != len(file.Cases) || len(fixed.sent()) != len(file.Cases) {
		t.Errorf("replay against a fixed StoreLink: exit %d, %d pass of %d, %d sent; want all passing", passed.ExitCode(), passed.Summary.Pass, len(file.Cases), len(fixed.sent()))
	}
}

func TestReplayChainResolvesTheLink(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	c := Case{ID: "case-001", Phase: PhaseChain, Operation: opCreateOrder, Name: "then getReplenishmentOrder", Method: http.MethodPost,
		Path: "/v1/stores/47/replenishment", Body: strp(`{"sku":"8847291","quantity_units":12,"reason":"replay"}`), ContentType: "application/json",
		Key: roleOwn, Store: "47", Expect: expectValid,
		Then: &LinkedCase{Link: "GetOrderByID", Operation: opGetOrder, Method: http.MethodGet, PathTemplate: "/v1/stores/{store_id}/replenishment/{order_id}",
			Parameters: map[string]string{"store_id": "$request.path.store_id", "order_id": "$response.body#/order_id"}, Status: 201}}
	cfg := config(f, srv.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep, err := Replay(context.Background(), cfg, &ReplayFile{Format: ReplayFormat, Cases: []Case{c}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"POST /v1/stores/47/replenishment", "GET /v1/stores/47/replenishment/RO-47-000501"}, f.sent()); diff != "" {
		t.Fatalf("chain requests (-want +got):\n%s", diff)
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d: %v", rep.ExitCode(), failing(rep))
	}
	// Without --allow-writes the write is not replayed at all.
	cfg.AllowWrites, cfg.WriteStore = false, ""
	rep, err = Replay(context.Background(), cfg, &ReplayFile{Format: ReplayFormat, Cases: []Case{c}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.sent()) != 2 || rep.Probes[0].Verdict != Skipped {
		t.Errorf("a write replayed without --allow-writes: %d requests, verdict %s", len(f.sent()), rep.Probes[0].Verdict)
	}
}
