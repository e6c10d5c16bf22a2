package contract

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/korral/storelink/openapi"
)

// renameOf checks one answer and returns its rename findings.
func renameOf(t *testing.T, op, path string, query url.Values, body string) []Finding {
	t.Helper()
	sp := mustSpec(t)
	p := &probe{op: op, name: "valid key", expect: []int{200}}
	_, _, fs := sp.judge(context.Background(), p, get(path, query, keyOwn, "47"), nil, judgeNow, 200,
		http.Header{"Content-Type": {"application/json"}}, []byte(body))
	var out []Finding
	for _, f := range fs {
		if f.Kind == FindingRename {
			out = append(out, f)
		}
	}
	return out
}

const (
	madetaPath = "/v1/suppliers/SUP-MADETA"
	orderPath  = "/v1/stores/47/replenishment/RO-47-000123"
	// orderRest is an order without its id, quantity and reason.
	orderRest = `"store_id":"47","sku":"8847291","status":"submitted","submitted_at":"2026-11-28T10:20:00+01:00","expected_arrival":"2026-11-30T06:00:00+01:00"`
)

// TestRenameDoubtsAtCheck: a doubtful rename carries its doubts, never a
// value; a plain one carries none; the undoubted pair wins.
func TestRenameDoubtsAtCheck(t *testing.T) {
	inv := url.Values{"sku": {"8847291"}}
	for _, tc := range []struct {
		name, op, path string
		query          url.Values
		body           string
		declared       string   // the rename's declared property
		against        []string // each is in the evidence; none: no doubt
	}{{
		name: "plain rename", op: opGetInventory, path: "/v1/stores/47/inventory", query: inv,
		body:     `{"store_id":"47","sku":"8847291","on_hand":9,"counted_at":"2026-11-28T06:30:00+01:00"}`,
		declared: "on_hand_units",
	}, {
		name: "plain rename with a synonym", op: opGetSupplier, path: madetaPath,
		body:     `{"supplier_id":"SUP-MADETA","name":"Madeta a.s.","lead_time_days":2,"min_order_qty":12}`,
		declared: "minimum_order_units",
	}, {
		name: "another unit", op: opGetSupplier, path: madetaPath,
		body:     `{"supplier_id":"SUP-MADETA","name":"Madeta a.s.","lead_time_hours":48}`,
		declared: "lead_time_days", against: []string{"lead_time_hours is in hours, lead_time_days in days"},
	}, {
		name: "another unit and other bounds", op: opGetSupplier, path: madetaPath,
		body:     `{"supplier_id":"SUP-MADETA","name":"Madeta a.s.","lead_time_hours":72}`,
		declared: "lead_time_days", against: []string{"lead_time_hours is in hours, lead_time_days in days",
			"values of lead_time_hours fall outside lead_time_days's bounds (0 to 60)"},
	}, {
		name: "a unit on one side only", op: opGetSupplier, path: madetaPath,
		body:     `{"supplier_id":"SUP-MADETA","name":"Madeta a.s.","lead_time":2}`,
		declared: "lead_time_days", against: []string{"lead_time_days is in days, lead_time names no unit"},
	}, {
		name: "the answer's time for the count's", op: opGetInventory, path: "/v1/stores/47/inventory", query: inv,
		body:     `{"store_id":"47","sku":"8847291","on_hand_units":9,"as_of":"2026-11-28T06:30:00+01:00"}`,
		declared: "counted_at", against: []string{"as_of and counted_at share no word"},
	}, {
		name: "an id for free text", op: opGetOrder, path: orderPath,
		body:     `{"order_id":"RO-47-000123","quantity_units":24,"id":"ord_9f7dcc5d27",` + orderRest + `}`,
		declared: "reason", against: []string{"values of id look like identifiers (one token with digits), reason is free text",
			"id names an identifier, reason is none"},
	}, {
		name: "the order id, not the reason", op: opGetOrder, path: orderPath,
		body:     `{"id":"RO-47-000123","quantity_units":24,` + orderRest + `}`,
		declared: "order_id",
	}, {
		// reason_id fits reason's schema and shares a word with it, more
		// than with order_id, whose pattern its value breaks; but what
		// speaks against reason makes order_id the pair.
		name: "the pair nothing speaks against wins", op: opGetOrder, path: orderPath,
		body:     `{"reason_id":"ord_9f7dcc5d27","quantity_units":24,` + orderRest + `}`,
		declared: "order_id",
	}, {
		name: "a time that is no date-time", op: opGetOrder, path: orderPath,
		body:     `{"order_id":"RO-47-000123","quantity_units":24,"reason":"r","store_id":"47","sku":"8847291","status":"submitted","submitted":"28.11.2026 10:20","expected_arrival":"2026-11-30T06:00:00+01:00"}`,
		declared: "submitted_at", against: []string{"submitted_at is a date-time, values of submitted are not"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := renameOf(t, tc.op, tc.path, tc.query, tc.body)
			at := slices.IndexFunc(fs, func(f Finding) bool { return f.Evidence != nil && f.Evidence.Property == tc.declared })
			if at < 0 {
				t.Fatalf("no rename of %s among %+v", tc.declared, fs)
			}
			checkDoubts(t, fs[at], tc.against)
		})
	}
}

// checkDoubts checks the doubts of the rename f: each of against, by its
// start, in the evidence and the message, and no value in the evidence;
// none at all when against is empty.
func checkDoubts(t *testing.T, f Finding, against []string) {
	t.Helper()
	if len(against) == 0 {
		if len(f.Evidence.Against) > 0 || strings.Contains(f.Message, "against") {
			t.Fatalf("a plain rename has doubts: %q %q", f.Message, f.Evidence.Against)
		}
		return
	}
	for _, want := range against {
		if !slices.ContainsFunc(f.Evidence.Against, func(d string) bool { return strings.HasPrefix(d, want) }) {
			t.Errorf("evidence %q lacks %q", f.Evidence.Against, want)
		}
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	for _, value := range []string{"ord_9f7dcc5d27", "48", "72", "28.11.2026"} {
		if strings.Contains(strings.Join(f.Evidence.Against, " "), value) {
			t.Errorf("the evidence holds a value: %q", f.Evidence.Against)
		}
	}
}

// renameCause is a rename cause of the property prop of comp, found as
// found (of JSON type typ), seen twice in getThing, with what speaks against
// it.
func renameCause(id, comp, prop, found, typ string, against ...string) Cause {
	return Cause{ID: id, Kind: FindingRename, Count: 2, Operations: []string{"getThing"},
		Evidence: &Evidence{Component: comp, Property: prop, Found: found, JSONType: typ, Against: against}}
}

// TestSuggestReviewsDoubtfulRenames: a doubtful rename is a note and a
// comment in the patch, not a change.
func TestSuggestReviewsDoubtfulRenames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause Cause
		why   []string // in the note and in the patch's comment
	}{
		{"another unit", renameCause("u", "Supplier", "lead_time_days", "lead_time_hours", "integer"),
			[]string{"lead_time_hours is in hours, lead_time_days in days"}},
		{"cases for units", renameCause("d", "OrderRequest", "quantity_units", "quantity_cases", "integer"),
			[]string{"quantity_cases is in cases, quantity_units in units"}},
		{"a scaled unit on one side", renameCause("s", "SKU", "shelf_life_days", "shelf_life", "integer"),
			[]string{"shelf_life_days is in days, shelf_life names no unit"}},
		{"another type", renameCause("t", "Supplier", "lead_time_days", "lead_days", "string"),
			[]string{"StoreLink sends lead_days as string, lead_time_days is integer"}},
		{"a date-time for text", Cause{ID: "f", Kind: FindingRename, Count: 1, Operations: []string{"getThing"},
			Evidence: &Evidence{Component: "Order", Property: "reason", Found: "reason_at", JSONType: "string", Format: "date-time"}},
			[]string{"reason_at holds date-times, reason is not a date-time"}},
		{"an id for the reason", renameCause("i", "Order", "reason", "id", "string",
			"values of id look like identifiers (one token with digits), reason is free text"),
			[]string{"values of id look like identifiers (one token with digits), reason is free text", "id names an identifier, reason is none"}},
		{"no shared word", renameCause("w", "Inventory", "counted_at", "as_of", "string"),
			[]string{"as_of and counted_at share no word: only the value's type pairs them"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Suggest(openapi.YAML, withSentinel([]Cause{tc.cause}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Proposals) != 0 || len(got.Notes) != 1 {
				t.Fatalf("proposals %+v, notes %+v; want one note", got.Proposals, got.Notes)
			}
			ev := tc.cause.Evidence
			note := got.Notes[0].Why
			side := "StoreLink sends " + ev.Found + " where the contract declares " + ev.Component + "." + ev.Property
			if !strings.HasPrefix(note, "review, not renamed: "+side) || !strings.Contains(note, "decide whether "+ev.Found+" is "+ev.Property) {
				t.Errorf("note %q", note)
			}
			block := reviewComment(t, got, ev, side)
			for _, w := range tc.why {
				if !strings.Contains(note, w) || !strings.Contains(block, w) {
					t.Errorf("%q is not in the note and the comment:\n%s\n%s", w, note, block)
				}
			}
			checkSuggestion(t, openapi.YAML, got)
		})
	}
}

// reviewComment is the review comment of the patch in got: the three lines
// right above the declared property, naming side. It fails the test when
// the patch renames the property or changes more than the comment.
func reviewComment(t *testing.T, got *Suggestion, ev *Evidence, side string) string {
	t.Helper()
	patched := string(got.Patched)
	comment := "# review, not renamed (seen "
	at := strings.Index(patched, comment)
	if at < 0 {
		t.Fatalf("no review comment in the patch:\n%s", got.Diff)
	}
	at = strings.LastIndex(patched[:at], "\n") + 1
	// The comment is right above the declared property, which is
	// unchanged.
	block := patched[at:]
	block = block[:strings.Index(block, "\n        "+ev.Property+":\n")+1]
	if strings.Count(block, "\n") != 3 || !strings.Contains(block, side) {
		t.Errorf("the comment is not the three lines above %s:\n%s", ev.Property, block)
	}
	if strings.Contains(patched, "\n        "+ev.Found+":") {
		t.Error("the property was renamed")
	}
	stripped := strings.ReplaceAll(patched, block, "")
	if stripped != string(openapi.YAML) {
		t.Error("the patch changes more than the comment")
	}
	return block
}

// TestSuggestMakesPlainRenames: the shapes of the doubtful renames, as plain
// renames, are a change each.
func TestSuggestMakesPlainRenames(t *testing.T) {
	for _, c := range []Cause{
		renameCause("q", "Order", "quantity_units", "quantity", "integer"),
		renameCause("o", "Inventory", "on_hand_units", "on_hand", "integer"),
		renameCause("l", "Supplier", "lead_time_days", "lead_days", "integer"),
		renameCause("i", "Order", "order_id", "id", "string"),
		renameCause("c", "Inventory", "counted_at", "counted_time", "string"),
	} {
		got, err := Suggest(openapi.YAML, withSentinel([]Cause{c}))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Proposals) != 1 {
			t.Errorf("%s.%s to %s: proposals %+v, notes %+v; want a change", c.Evidence.Component, c.Evidence.Property, c.Evidence.Found, got.Proposals, got.Notes)
			continue
		}
		checkSuggestion(t, openapi.YAML, got)
	}
}

// TestRenameDoubtsFromTheDescription: the name's unit wins over the
// description's.
func TestRenameDoubtsFromTheDescription(t *testing.T) {
	integer := func(desc string) *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"integer"}, Description: desc})
	}
	for _, tc := range []struct {
		desc, declared, found, want string
	}{
		{"Days from an order to its delivery.", "lead", "lead_hours", "lead_hours is in hours, lead in days"},
		{"Days from an order to its delivery.", "lead", "lead_days", ""},
		{"Units to order (not cases).", "quantity_units", "quantity", ""},
		{"Units to order (not cases).", "quantity_units", "quantity_cases", "quantity_cases is in cases, quantity_units in units"},
		{"How long a delivery takes.", "lead", "lead_hours", "lead_hours is in hours, lead names no unit"},
	} {
		got := renameDoubts(integer(tc.desc), tc.declared, tc.found, "integer", "")
		if tc.want == "" && len(got) > 0 || tc.want != "" && !slices.Contains(got, tc.want) {
			t.Errorf("%s for %s (%q): %q, want %q", tc.found, tc.declared, tc.desc, got, tc.want)
		}
	}
}

func TestRenameDoubtsOfMixedTypes(t *testing.T) {
	ref := openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"integer"}})
	got := renameDoubts(ref, "case_pack", "case_size", "mixed", "")
	if !slices.Contains(got, "StoreLink sends case_size with values of different types, case_pack is integer") {
		t.Errorf("doubts %q", got)
	}
}
