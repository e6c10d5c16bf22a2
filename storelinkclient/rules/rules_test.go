package rules_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

var operations = []string{rules.OpListStores, rules.OpGetStore, rules.OpGetInventory, rules.OpListPOS,
	rules.OpCreateOrder, rules.OpGetOrder, rules.OpGetSKU, rules.OpGetSupplier}

func check(t *testing.T, op string, body []byte, q rules.Query) []rules.Finding {
	t.Helper()
	fs, err := rules.Check(op, body, q)
	if err != nil {
		t.Fatalf("Check(%s): %v", op, err)
	}
	return fs
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoodAnswersKeepEveryRule: the passing fixture of every operation.
func TestGoodAnswersKeepEveryRule(t *testing.T) {
	for _, op := range operations {
		q := rules.ExampleQuery(op)
		if fs := check(t, op, mustJSON(t, rules.Good(op, q)), q); len(fs) != 0 {
			t.Errorf("%s: the good answer breaks %v", op, fs)
		}
	}
}

// TestEveryExampleBreaksItsRuleOnly: the violating fixture of every rule
// gives exactly one finding, of that rule, at the example's field.
func TestEveryExampleBreaksItsRuleOnly(t *testing.T) {
	for _, ex := range rules.Examples() {
		t.Run(ex.Rule+"/"+ex.Operation, func(t *testing.T) {
			fs := check(t, ex.Operation, ex.Bad(), ex.Query)
			want := []string{ex.Rule + " at " + ex.Field}
			var got []string
			for _, f := range fs {
				got = append(got, f.Rule+" at "+f.Field)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryRuleHasAnExample: the registry and the examples cover each
// other, and every example checks an operation its rule applies to.
func TestEveryRuleHasAnExample(t *testing.T) {
	byID := map[string]rules.Rule{}
	for _, r := range rules.Rules() {
		if _, dup := byID[r.ID]; dup {
			t.Errorf("rule %s is registered twice", r.ID)
		}
		byID[r.ID] = r
		if r.Text == "" || len(r.Operations) == 0 {
			t.Errorf("rule %s has no text or no operation", r.ID)
		}
		for _, op := range r.Operations {
			if !slices.Contains(operations, op) {
				t.Errorf("rule %s names an unknown operation %q", r.ID, op)
			}
		}
	}
	covered := map[string]bool{}
	for _, ex := range rules.Examples() {
		r, ok := byID[ex.Rule]
		if !ok {
			t.Errorf("example of unregistered rule %s", ex.Rule)
			continue
		}
		if !slices.Contains(r.Operations, ex.Operation) {
			t.Errorf("example of %s judges %s, which the rule does not cover", ex.Rule, ex.Operation)
		}
		covered[ex.Rule] = true
	}
	for id := range byID {
		if !covered[id] {
			t.Errorf("rule %s has no example", id)
		}
	}
	if _, ok := rules.Lookup(rules.POSWindow); !ok {
		t.Error("Lookup does not find pos.window")
	}
	if _, ok := rules.Lookup("pos.nothing"); ok {
		t.Error("Lookup finds an unknown id")
	}
}

// leaves lists the strings and long numbers of a JSON document.
func leaves(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			leaves(e, out)
		}
	case []any:
		for _, e := range x {
			leaves(e, out)
		}
	case string:
		if len(x) >= 3 {
			out[x] = true
		}
	case json.Number:
		if len(x) >= 3 {
			out[string(x)] = true
		}
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFindingsQuoteNothingOfTheAnswer: no finding repeats a value the
// violating answer carries and the good one does not.
func TestFindingsQuoteNothingOfTheAnswer(t *testing.T) {
	for _, ex := range rules.Examples() {
		bad, good := map[string]bool{}, map[string]bool{}
		leaves(decode(t, ex.Bad()), bad)
		leaves(decode(t, mustJSON(t, rules.Good(ex.Operation, ex.Query))), good)
		for _, f := range check(t, ex.Operation, ex.Bad(), ex.Query) {
			for v := range bad {
				if !good[v] && strings.Contains(f.Field+" "+f.Problem, v) {
					t.Errorf("%s: finding %q quotes %q", ex.Rule, f, v)
				}
			}
		}
	}
}

func TestValidTimezone(t *testing.T) {
	for _, tz := range []string{"Europe/Prague", "Europe/Vienna", "America/Argentina/Buenos_Aires", "Etc/GMT+5",
		"Etc/GMT-14", "UTC", "America/Port-au-Prince"} {
		if !rules.ValidTimezone(tz) {
			t.Errorf("%q refused", tz)
		}
	}
	for _, tz := range []string{"", "Local", "Mars/Olympus_Mons", "dolor ipsum eu nostru", "../etc/passwd",
		"/etc/localtime", "Europe/Prague ", "Europe//Prague", "europe/prague_x"} {
		if rules.ValidTimezone(tz) {
			t.Errorf("%q accepted", tz)
		}
	}
}

func TestParseClock(t *testing.T) {
	for s, want := range map[string]int{"00:00": 0, "07:05": 425, "23:59": 1439} {
		if got, ok := rules.ParseClock(s); !ok || got != want {
			t.Errorf("ParseClock(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"24:00", "7:00", "07:60", "0700", "07:00:00", "", "ab:cd", "-1:00"} {
		if _, ok := rules.ParseClock(s); ok {
			t.Errorf("ParseClock(%q) accepted", s)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func page(since time.Time, cursor string, at ...time.Time) *sl.POSPage {
	p := &sl.POSPage{StoreID: "47", SKU: "8847291", Since: since, TotalCount: 100}
	for i, t := range at {
		p.Transactions = append(p.Transactions, sl.POSTransaction{TransactionID: fmt.Sprint(i), Timestamp: t, Units: 1})
	}
	if cursor != "" {
		p.NextCursor = ptr(cursor)
	}
	return p
}

func ids(fs []rules.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+" at "+f.Field)
	}
	return out
}

// TestPOSWalk: the rules that span pages, and the edges of the window.
func TestPOSWalk(t *testing.T) {
	now := rules.ExampleNow
	since := now.Add(-24 * time.Hour)
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	q := func(w *rules.Walk, cursor string) rules.Query {
		return rules.Query{StoreID: "47", SKU: "8847291", Since: since, Now: now, Walk: w, Cursor: cursor}
	}
	cases := []struct {
		name  string
		pages []*sl.POSPage
		want  [][]string // findings per page
	}{{
		name:  "newest first across pages, equal times allowed",
		pages: []*sl.POSPage{page(since, "a", h(1), h(2), h(2)), page(since, "b", h(2), h(3)), page(since, "", h(4))},
		want:  [][]string{nil, nil, nil},
	}, {
		name:  "second page newer than the first",
		pages: []*sl.POSPage{page(since, "a", h(3), h(4)), page(since, "", h(2))},
		want:  [][]string{nil, {"pos.order at /transactions/0/timestamp"}},
	}, {
		name:  "a cursor that comes back after two pages",
		pages: []*sl.POSPage{page(since, "a", h(1)), page(since, "b", h(2)), page(since, "a", h(3))},
		want:  [][]string{nil, nil, {"pos.cursor at /next_cursor"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &rules.Walk{}
			cursor := ""
			for i, p := range tc.pages {
				got := ids(rules.CheckPOSPage(p, q(w, cursor)))
				if diff := cmp.Diff(tc.want[i], got); diff != "" {
					t.Errorf("page %d (-want +got):\n%s", i+1, diff)
				}
				if p.NextCursor != nil {
					cursor = *p.NextCursor
				}
			}
		})
	}
	t.Run("the window's edges: since itself, and the clock skew", func(t *testing.T) {
		for at, want := range map[time.Time][]string{
			since:                                  nil,
			now.Add(rules.ClockSkew):               nil,
			since.Add(-time.Second):                {"pos.window at /transactions/0/timestamp"},
			now.Add(rules.ClockSkew + time.Second): {"pos.window at /transactions/0/timestamp"},
		} {
			if got := ids(rules.CheckPOSPage(page(since, "", at), q(nil, ""))); !slices.Equal(got, want) {
				t.Errorf("a line at %s: %v, want %v", at, got, want)
			}
		}
	})
	t.Run("since to the second", func(t *testing.T) {
		frac := since.Add(400 * time.Millisecond)
		p := page(since, "", since)
		if got := ids(rules.CheckPOSPage(p, rules.Query{Since: frac, Now: now})); got != nil {
			t.Errorf("a since echoed without its fraction: %v", got)
		}
	})
}

func TestOrderReadBack(t *testing.T) {
	o := &sl.Order{OrderID: "RO-47-1", StoreID: "47", SKU: "8847291", QuantityUnits: 12, Status: sl.OrderStatusSubmitted}
	raised := &sl.OrderRequest{SKU: "8847291", QuantityUnits: 12}
	if got := ids(rules.CheckOrder(o, rules.Query{StoreID: "47", Raised: raised})); got != nil {
		t.Errorf("the order as raised: %v", got)
	}
	o.SKU = "1234567"
	if got := ids(rules.CheckOrder(o, rules.Query{StoreID: "47", Raised: raised})); !slices.Equal(got, []string{"order.readback at /sku"}) {
		t.Errorf("another SKU: %v", got)
	}
	if got := ids(rules.CheckOrder(o, rules.Query{StoreID: "47"})); got != nil {
		t.Errorf("without what was raised, nothing to compare: %v", got)
	}
}

func TestCheckRefusesWhatDoesNotDecode(t *testing.T) {
	if _, err := rules.Check(rules.OpGetStore, []byte(`{"store_id":47}`), rules.Query{}); err == nil {
		t.Error("a store id as a number decoded")
	}
	if _, err := rules.Check("deleteStore", []byte(`{}`), rules.Query{}); err == nil {
		t.Error("an unknown operation was judged")
	}
}

// TestStoreIDOrderIsNumeric: the contract's store ids are digits of
// varying length, so 47 comes before 102, which a string order reverses.
func TestStoreIDOrderIsNumeric(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"47", "102", true}, {"102", "47", false}, {"47", "55", true}, {"047", "47", false}, {"47", "047", false},
		{"9", "10", true}, {"999999", "1000000", true}, {"47", "abc", true}, {"abc", "47", false}, {"abc", "abd", true},
	} {
		if got := rules.StoreIDLess(tc.a, tc.b); got != tc.less {
			t.Errorf("StoreIDLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.less)
		}
	}
	list := func(ids ...string) []byte {
		var stores []any
		for _, id := range ids {
			stores = append(stores, map[string]any{"store_id": id, "name": "S", "timezone": "Europe/Prague"})
		}
		return mustJSON(t, map[string]any{"stores": stores})
	}
	if fs := check(t, rules.OpListStores, list("47", "55", "102", "210"), rules.Query{}); len(fs) != 0 {
		t.Errorf("a numeric order breaks %v", fs)
	}
	fs := check(t, rules.OpListStores, list("102", "210", "47", "55"), rules.Query{})
	if len(fs) != 1 || fs[0].Rule != rules.StoresOrder || fs[0].Field != "/stores/2/store_id" {
		t.Errorf("a string order: %v, want stores.order at /stores/2/store_id", fs)
	}
}

// TestPOSLimitIsTheQuerys: a page holds at most the limit asked, and the
// contract's default when none was asked.
func TestPOSLimitIsTheQuerys(t *testing.T) {
	q := rules.ExampleQuery(rules.OpListPOS)
	body := rules.Good(rules.OpListPOS, q) // three lines
	for _, tc := range []struct {
		limit int
		broke bool
	}{{0, false}, {3, false}, {2, true}, {1, true}} {
		q := rules.ExampleQuery(rules.OpListPOS)
		q.Limit = tc.limit
		fs := check(t, rules.OpListPOS, mustJSON(t, body), q)
		broke := slices.ContainsFunc(fs, func(f rules.Finding) bool { return f.Rule == rules.POSLimit })
		if broke != tc.broke {
			t.Errorf("limit %d: findings %v, want pos.limit %v", tc.limit, fs, tc.broke)
		}
	}
	if rules.DefaultPOSLimit != 200 {
		t.Errorf("DefaultPOSLimit %d: the contract's default of limit is 200", rules.DefaultPOSLimit)
	}
}

// TestPOSUnitsAtTheirBounds: a line's units at the contract's bounds are
// taken, one past either bound is refused with POSUnits at that line.
func TestPOSUnitsAtTheirBounds(t *testing.T) {
	now := rules.ExampleNow
	since := now.Add(-24 * time.Hour)
	q := rules.Query{StoreID: "47", SKU: "8847291", Since: since, Now: now}
	for _, c := range []struct {
		units int64
		want  []string
	}{
		{1, nil},
		{100000, nil},
		{0, []string{rules.POSUnits + " at /transactions/1/units"}},
		{100001, []string{rules.POSUnits + " at /transactions/1/units"}},
	} {
		p := page(since, "", now.Add(-time.Hour), now.Add(-2*time.Hour))
		p.Transactions[1].Units = c.units
		if got := ids(rules.CheckPOSPage(p, q)); !slices.Equal(got, c.want) {
			t.Errorf("units %d: %v, want %v", c.units, got, c.want)
		}
	}
}
