package console

import (
	"fmt"
	"math"
	"time"
)

// CompareStockout orders two stockout windows for the inbox: the sooner
// projected stockout first, then those projected to last beyond the
// horizon, then those no projection could be made for. It returns -1, 0
// or +1 as sort.Slice and slices.SortFunc expect.
func CompareStockout(a, b Stockout) int {
	rank := func(s Stockout) int {
		switch {
		case !s.Known:
			return 2
		case s.Earliest.IsZero():
			return 1
		}
		return 0
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return a.Earliest.Compare(b.Earliest)
}

// shelfView is the time to stockout as a page prints it.
type shelfView struct {
	// Left is the time until the earliest projected stockout in words
	// ("1 h 30 min"); Window the store-local window it falls in.
	Left, Window string
	// Kind styles it: soon (within a day), later, none or unknown.
	Kind string
}

// soonWithin is how close a stockout must be for the inbox to mark it.
const soonWithin = 24 * time.Hour

// shelf words s at now.
func shelf(now time.Time, s Stockout) shelfView {
	switch {
	case !s.Known:
		return shelfView{Left: "unknown", Window: "no projection could be made", Kind: "unknown"}
	case s.Earliest.IsZero():
		return shelfView{Left: fmt.Sprintf("more than %d days", s.HorizonDays), Window: "no stockout projected", Kind: "none"}
	}
	latest := s.Latest
	if latest.Before(s.Earliest) {
		latest = s.Earliest
	}
	v := shelfView{Window: "between " + when(s.Earliest) + " and " + when(latest), Kind: "later"}
	d := s.Earliest.Sub(now)
	if d < soonWithin {
		v.Kind = "soon"
	}
	if d <= 0 {
		v.Left = "may already be empty"
		return v
	}
	v.Left = "about " + span(d)
	return v
}

// span is a duration in the words of a shelf: minutes under an hour,
// hours and minutes under two days, else days and hours.
func span(d time.Duration) string {
	m := int64(math.Ceil(d.Minutes()))
	switch {
	case m < 60:
		return fmt.Sprintf("%d min", m)
	case m < 48*60:
		return fmt.Sprintf("%d h %02d min", m/60, m%60)
	}
	h := m / 60
	return fmt.Sprintf("%d days %d h", h/24, h%24)
}
