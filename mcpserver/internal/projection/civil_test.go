package projection

import (
	"fmt"
	"testing"
	"time"
)

// civil.String writes the date as fmt's %04d-%02d-%02d does, for every day
// of several years and the years at the edges of four digits.
func TestCivilStringIsTheISODate(t *testing.T) {
	for _, start := range []civil{{2024, time.January, 1}, {0, time.January, 1}, {9998, time.December, 1}} {
		for c, n := start, 0; n < 400; c, n = c.addDays(1), n+1 {
			if got, want := c.String(), fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d); got != want {
				t.Fatalf("civil%v.String() = %q, want %q", c, got, want)
			}
		}
	}
	for _, c := range []civil{{-1, time.March, 5}, {10000, time.March, 5}, {999, time.October, 31}} {
		if got, want := c.String(), fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d); got != want {
			t.Errorf("civil%v.String() = %q, want %q", c, got, want)
		}
	}
}
