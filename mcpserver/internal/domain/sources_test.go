package domain

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestADRListsTheTable holds ADR 0030's list to Sources: the same names,
// each with the same role and sentence, no more and no fewer.
func TestADRListsTheTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "decisions", "0030-decision-and-qualifier-fields.md"))
	if err != nil {
		t.Skipf("docs not next to the module: %v", err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (decision|qualifier) \\| (.+) \\|$").FindAllStringSubmatch(string(b), -1) {
		listed = append(listed, m[1]+" | "+m[2]+" | "+m[3])
	}
	var table []string
	for _, s := range Sources {
		table = append(table, s.Name+" | "+string(s.Role)+" | "+s.Means)
	}
	slices.Sort(listed)
	slices.Sort(table)
	for _, row := range table {
		if !slices.Contains(listed, row) {
			t.Errorf("ADR 0030 does not list %q", row)
		}
	}
	for _, row := range listed {
		if !slices.Contains(table, row) {
			t.Errorf("ADR 0030 lists %q, which domain.Sources does not hold", row)
		}
	}
}

// TestSourceOf: a field path finds its entry, array indexes and deeper
// properties included; a path the table does not name is no qualifier.
func TestSourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"store.opening_hours":                 "store.opening_hours",
		"store.opening_hours.monday.opens":    "store.opening_hours",
		"pos.transactions.0.units":            "pos.transactions.units",
		"pos.transactions.12":                 "pos.transactions",
		"supplier.lead_time_days":             "supplier.lead_time_days",
		"inventory.on_hand_units":             "inventory.on_hand_units",
		"order.expected_arrival":              "order.expected_arrival",
		"store.opening_hours_extra":           "",
		"inventory":                           "",
		"sku.case_pack.0":                     "sku.case_pack",
		"supplier.minimum_order_units.nested": "supplier.minimum_order_units",
	} {
		s, ok := SourceOf(path)
		if ok != (want != "") || s.Name != want {
			t.Errorf("SourceOf(%q) = %q, %v; want %q", path, s.Name, ok, want)
		}
	}
	if _, q := IsQualifier("inventory.on_hand_units"); q {
		t.Error("on hand is a qualifier")
	}
	if _, q := IsQualifier("store.city"); q {
		t.Error("a field the table does not name is a qualifier")
	}
	if s, q := IsQualifier("store.opening_hours.sunday"); !q || s.Name != "store.opening_hours" {
		t.Errorf("opening hours: %v %v", s, q)
	}
}

// TestUnknownCaveatsFollowTheTable: each unknown qualifier gives its
// table sentence once, in the table's order; a decision never does.
func TestUnknownCaveatsFollowTheTable(t *testing.T) {
	var u Unknown
	u.Add("supplier.lead_time_days")
	u.Add("store.opening_hours")
	u.Add("store.opening_hours")
	u.Add("inventory.on_hand_units")
	got := u.Caveats()
	if len(got) != 2 || got[0] != "store.opening_hours: no before-close answer, no open or close time; rate per clock hour" ||
		got[1] != "supplier.lead_time_days: no delivery date or days of cover" {
		t.Errorf("caveats %q", got)
	}
	if m := Merge(Unknown{"supplier.name"}, Unknown{"store.name", "supplier.name"}); !slices.Equal(m, Unknown{"store.name", "supplier.name"}) {
		t.Errorf("merge %v", m)
	}
	if o := (Unknown{"supplier.name", "inventory.counted_at", "store.name"}).Of("store", "inventory"); !slices.Equal(o, Unknown{"store.name", "inventory.counted_at"}) {
		t.Errorf("of %v", o)
	}
}

// TestEveryQualifierSaysWhatIsNotClaimed: a caveat is never empty.
func TestEveryQualifierSaysWhatIsNotClaimed(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Sources {
		if s.Means == "" || (s.Role != Decision && s.Role != Qualifier) || seen[s.Name] {
			t.Errorf("entry %+v", s)
		}
		seen[s.Name] = true
	}
}
