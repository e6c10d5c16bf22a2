package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// without is a JSON body with the property at a JSON Pointer left out.
func without(t *testing.T, body []byte, pointer string) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	tokens := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	at := doc
	for _, tok := range tokens[:len(tokens)-1] {
		switch v := at.(type) {
		case map[string]any:
			at = v[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			at = v[i]
		}
	}
	delete(at.(map[string]any), tokens[len(tokens)-1])
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAbsentFieldIsItsOwnCause leaves out the field each rule's violating
// example breaks. A required decision field's absence is one cause
// (schema.required), never the rule on a zero value; an optional field's or
// a qualifier's absence is no cause (ADR 0030).
func TestAbsentFieldIsItsOwnCause(t *testing.T) {
	optional := []string{"/next_cursor", "/order_cutoff_local", "/opening_hours/monday/opens"}
	for _, ex := range rules.Examples() {
		route, reads := routes[ex.Operation]
		if !reads {
			continue
		}
		t.Run(ex.Rule+"/"+ex.Operation+ex.Field, func(t *testing.T) {
			q := ex.Query
			body := without(t, ex.Bad(), ex.Field)
			c, _ := newClient(t, serving(t, ex.Operation, body).URL, &fakeKeys{current: map[string]string{"47": "k47"}},
				func(o *Options) { o.Now = func() time.Time { return q.Now } })
			unknown, err := read(context.Background(), c, ex.Operation, q)
			field := pointerPath(resources[route], ex.Field)
			qualifier, isQualifier := domain.IsQualifier(field)
			var faults []*fault
			var f *fault
			if ae := apperr.From(err); ae != nil && errors.As(ae.Cause, &f) {
				faults = f.all()
			}
			named := 0
			for _, f := range faults {
				if f.field == field || strings.HasPrefix(f.field, field+".") {
					if f.id != RuleRequired {
						t.Errorf("fault %s (%s) at the absent field, want only %s", f.rule, f.id, RuleRequired)
					}
					named++
				}
			}
			switch {
			case isQualifier && named != 0:
				t.Errorf("a qualifier left out: %d causes name %s, want none: %v", named, field, err)
			case isQualifier && !slices.Contains(optional, ex.Field) && !unknown.Has(qualifier.Name):
				t.Errorf("a required qualifier left out is not named unknown: %v", unknown)
			case isQualifier:
			case slices.Contains(optional, ex.Field) && named != 0:
				t.Errorf("an optional field left out is a cause: %v", err)
			case !slices.Contains(optional, ex.Field) && named != 1:
				t.Errorf("%d causes name %s, want one: %v", named, field, err)
			}
		})
	}
}

// TestCheckedFindsTheAbsentFields: the walk that refuses missing fields
// hands the absent ones to the rules.
func TestCheckedFindsTheAbsentFields(t *testing.T) {
	q := rules.ExampleQuery(rules.OpGetSupplier)
	good, err := json.Marshal(rules.Good(rules.OpGetSupplier, q))
	if err != nil {
		t.Fatal(err)
	}
	body := without(t, good, "/order_cutoff_local")
	c, _ := newClient(t, serving(t, rules.OpGetSupplier, body).URL, &fakeKeys{current: map[string]string{"47": "k47"}}, nil)
	var absent sl.Absent
	resp, err := c.api.GetSupplierWithResponse(context.Background(), q.SupplierID, sl.WithStoreKey("k47"))
	v, err := checked(context.Background(), c, "GET", "/v1/suppliers/{supplier_id}", "47", resp, err, &absent, nil)
	if err != nil || v == nil {
		t.Fatalf("checked: %v", err)
	}
	if got := absent.Pointers(); !slices.Equal(got, []string{"/order_cutoff_local"}) {
		t.Errorf("absent %v, want the cut-off", got)
	}
}

// TestStoreWithoutHoursHasUnknownHours: a store whose hours the rules do
// not check is never read as open with no times; its hours are unknown
// (ADR 0030).
func TestStoreWithoutHoursHasUnknownHours(t *testing.T) {
	opens, closes := "07:00", "22:00"
	for _, absent := range []string{"/opening_hours", "/opening_hours/monday", "/opening_hours/monday/closed"} {
		v := &sl.Store{StoreID: "47", Name: "N", Timezone: "Europe/Prague"}
		if absent != "/opening_hours" {
			for _, d := range []*sl.DayHours{&v.OpeningHours.Tuesday, &v.OpeningHours.Wednesday, &v.OpeningHours.Thursday,
				&v.OpeningHours.Friday, &v.OpeningHours.Saturday, &v.OpeningHours.Sunday} {
				d.Opens, d.Closes = &opens, &closes
			}
		}
		found := rules.CheckStore(v, rules.Query{StoreID: "47", Absent: sl.NewAbsent(absent)})
		st, err := convertStore(v, found, nil)
		if err != nil || !st.Unknown.Has("store.opening_hours") || st.Hours != [7]domain.DayHours{} {
			t.Errorf("%s absent: %+v, %v; want the hours unknown", absent, st, err)
		}
	}
}
