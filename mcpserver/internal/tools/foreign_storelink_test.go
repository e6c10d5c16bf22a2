package tools

import (
	"regexp"
	"strings"
	"testing"
)

// Against a StoreLink whose ids are not ours, the tools must ask rather
// than declare, and say only what they know.

// foreignOrder is an order id of another StoreLink's shape.
const foreignOrder = "rpl_9f7dcc5d27"

// Every id of our spec's shape, every approval id and every idempotency key
// is admitted by the schema; every spec-shaped id is a plausible order id.
func TestOrderIDPatternsNest(t *testing.T) {
	plausible, ref := regexp.MustCompile(storeLinkOrderIDPattern), regexp.MustCompile(orderRefPattern)
	spec, key := regexp.MustCompile(orderIDPattern), regexp.MustCompile(idempotencyKeyPattern)
	for _, id := range []string{"RO-47-000123", "apr-0123456789abcdef", foreignOrder, "a", strings.Repeat("9", 64)} {
		if spec.MatchString(id) && !plausible.MatchString(id) {
			t.Errorf("spec-shaped %q is not plausible", id)
		}
		if plausible.MatchString(id) != ref.MatchString(id) && len(id) <= 64 && !strings.Contains(id, ":") {
			t.Errorf("%q: plausible %v, admitted %v", id, plausible.MatchString(id), ref.MatchString(id))
		}
	}
	for _, k := range []string{"agent:2026-11-27:butter-47", strings.Repeat("k", 128), "apr-0123456789abcdef"} {
		if key.MatchString(k) && !ref.MatchString(k) {
			t.Errorf("idempotency key %q is not admitted", k)
		}
	}
}
