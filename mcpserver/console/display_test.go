package console

import (
	"testing"

	"github.com/korral/storelink/mcpserver/internal/projection"
)

// Pages keep the words for people and drop those written for the model.
func TestForPeopleDropsTextForTheModel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"There are too few trading days of sales history to project a stockout time; widen lookback_days or judge from the evidence rows.",
			"There are too few trading days of sales history to project a stockout time."},
		{"Stock runs out before close. Tell the user this before relaying any figure or order.", "Stock runs out before close."},
		{"call again with confirm:true and this idempotency_key", ""},
		{"at the low sell rate the stock lasts only 1.3 days after delivery, less than the 2-day lead time of the next order",
			"at the low sell rate the stock lasts only 1.3 days after delivery, less than the 2-day lead time of the next order"},
	} {
		if got := forPeople(tc.in); got != tc.want {
			t.Errorf("forPeople(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Every flag the projection can raise has words on the pages.
func TestEveryFlagHasWords(t *testing.T) {
	var all []string
	for _, f := range projection.Flags() {
		all = append(all, string(f))
	}
	for _, f := range projection.DayFlags() {
		all = append(all, string(f))
	}
	for _, f := range all {
		if w := flagWords([]string{f})[0]; w == f || w == "" {
			t.Errorf("flag %s has no words", f)
		}
	}
}
