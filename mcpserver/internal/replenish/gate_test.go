package replenish

import (
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// The gate at its edges, and the fix it names in each case.
func TestQuantityLimitsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lim      quantityLimits
		qty      int64
		codes    []apperr.Code
		fixSays  string
		fixLacks string
	}{
		{"at the minimum", quantityLimits{ceiling: 500, minimum: 48, casePack: 6}, 48, nil, "", ""},
		{"one below", quantityLimits{ceiling: 500, minimum: 48, casePack: 6}, 47, []apperr.Code{apperr.OrderQuantityRefused}, "48 units (8 cases of 6)", ""},
		{"minimum not a whole case", quantityLimits{ceiling: 500, minimum: 50, casePack: 12}, 24, []apperr.Code{apperr.OrderQuantityRefused}, "Order at least 50 units: 60 units (5 cases of 12)", ""},
		{"no case pack", quantityLimits{ceiling: 500, minimum: 50, casePack: 1}, 24, []apperr.Code{apperr.OrderQuantityRefused}, "Order at least 50 units, the supplier's minimum", "cases"},
		{"whole case above the ceiling", quantityLimits{ceiling: 55, minimum: 50, casePack: 12}, 24, []apperr.Code{apperr.OrderQuantityRefused}, "Order at least 50 units, the supplier's minimum", "60"},
		{"minimum above the ceiling", quantityLimits{ceiling: 40, minimum: 48, casePack: 6}, 24, []apperr.Code{apperr.OrderQuantityRefused}, "outside this tool", "Order at least"},
		{"no minimum", quantityLimits{ceiling: 500, casePack: 6}, 1, nil, "", ""},
		{"above the ceiling", quantityLimits{ceiling: 100, minimum: 48, casePack: 6}, 101, []apperr.Code{apperr.OrderLimitExceeded}, "", ""},
		{"both", quantityLimits{ceiling: 40, minimum: 48, casePack: 6}, 45, []apperr.Code{apperr.OrderLimitExceeded, apperr.OrderQuantityRefused}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := tc.lim.refusals(tc.qty)
			var codes []apperr.Code
			for _, r := range rs {
				codes = append(codes, r.code)
				if r.reason == "" || r.message == "" || !strings.HasSuffix(r.remediation, ".") {
					t.Errorf("incomplete refusal: %+v", r)
				}
			}
			if !slices.Equal(codes, tc.codes) {
				t.Fatalf("codes %v, want %v", codes, tc.codes)
			}
			if tc.fixSays == "" {
				return
			}
			fix := rs[len(rs)-1].remediation
			if !strings.Contains(fix, tc.fixSays) || tc.fixLacks != "" && strings.Contains(fix, tc.fixLacks) {
				t.Errorf("fix %q: want %q, without %q", fix, tc.fixSays, tc.fixLacks)
			}
		})
	}
}
