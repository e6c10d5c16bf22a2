package projection

import (
	"fmt"
	"time"
)

// DayHours is one weekday's opening hours in store-local minutes after
// midnight. A day that is not Closed trades from Opens up to (not including)
// Closes. A day whose times are out of range or not in order counts as closed:
// the projection cannot trade in hours it cannot place.
type DayHours struct {
	Closed bool
	Opens  int // 0..1439
	Closes int // Opens+1..1440; 1440 is the end of the day
}

// WeeklyHours is a store's opening hours, indexed by time.Weekday.
type WeeklyHours [7]DayHours

// aroundTheClock is every day open from midnight to midnight: the week a
// projection uses when the store's hours are unknown (Input.HoursUnknown).
var aroundTheClock = WeeklyHours{{Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}}

// open reports whether the day trades, with valid times.
func (d DayHours) open() bool {
	return !d.Closed && d.Opens >= 0 && d.Opens < d.Closes && d.Closes <= 24*60
}

// ParseClock reads a store-local "HH:MM" (00:00 to 23:59) into minutes after
// midnight, the unit DayHours uses.
func ParseClock(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' || !digit(s[0]) || !digit(s[1]) || !digit(s[3]) || !digit(s[4]) {
		return 0, fmt.Errorf("time %q is not HH:MM", s)
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, fmt.Errorf("time %q is not a time of day", s)
	}
	return h*60 + m, nil
}

func digit(b byte) bool { return b >= '0' && b <= '9' }

// civil is a calendar date without a zone. Date arithmetic is done on it in
// UTC, where every day has 24 hours, so a DST change in the store's zone can
// never skip or repeat a date.
type civil struct {
	y int
	m time.Month
	d int
}

func civilOf(t time.Time) civil {
	y, m, d := t.Date()
	return civil{y, m, d}
}

func (c civil) addDays(n int) civil {
	return civilOf(time.Date(c.y, c.m, c.d+n, 12, 0, 0, 0, time.UTC))
}

func (c civil) before(o civil) bool {
	if c.y != o.y {
		return c.y < o.y
	}
	if c.m != o.m {
		return c.m < o.m
	}
	return c.d < o.d
}

func (c civil) weekday() time.Weekday {
	return time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC).Weekday()
}

func (c civil) String() string { return fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d) }

// at returns the instant of a store-local clock time on this date. Minutes may
// be 1440, the next midnight. The zone database resolves DST, so a trading
// day that spans a change is an hour shorter or longer, as it really is.
func (c civil) at(minutes int, loc *time.Location) time.Time {
	return time.Date(c.y, c.m, c.d, minutes/60, minutes%60, 0, 0, loc)
}

// span is a half-open interval of trading time [start, end).
type span struct{ start, end time.Time }

func (s span) hours() float64 { return s.end.Sub(s.start).Hours() }

// tradingSpan returns the date's trading interval, if the store opens.
func (h WeeklyHours) tradingSpan(c civil, loc *time.Location) (span, bool) {
	d := h[c.weekday()]
	if !d.open() {
		return span{}, false
	}
	s := span{c.at(d.Opens, loc), c.at(d.Closes, loc)}
	if !s.end.After(s.start) {
		// Only possible if both ends fall inside a DST gap.
		return span{}, false
	}
	return s, true
}

// nominalHoursPerDay is the schedule's average trading hours per calendar day
// over a week, ignoring DST: the rate at which future days consume stock.
func (h WeeklyHours) nominalHoursPerDay() float64 {
	total := 0
	for _, d := range h {
		if d.open() {
			total += d.Closes - d.Opens
		}
	}
	return float64(total) / 60 / 7
}

// consume walks forward through trading time from now, spending units at
// rate units per trading hour, and returns the instant they run out, if that
// is within HorizonDays.
func consume(now time.Time, units, rate float64, h WeeklyHours, loc *time.Location) (time.Time, bool) {
	if rate <= 0 {
		return time.Time{}, false
	}
	need := units / rate // trading hours
	end := now.AddDate(0, 0, HorizonDays)
	today := civilOf(now)
	for i := 0; i <= HorizonDays; i++ {
		sp, ok := h.tradingSpan(today.addDays(i), loc)
		if !ok {
			continue
		}
		if sp.start.Before(now) {
			sp.start = now
		}
		if sp.end.After(end) {
			sp.end = end
		}
		if !sp.end.After(sp.start) {
			continue
		}
		avail := sp.hours()
		if need <= avail {
			return sp.start.Add(time.Duration(need * float64(time.Hour))), true
		}
		need -= avail
	}
	return time.Time{}, false
}

// firstTrading returns the first trading instant on or after the start of
// date c and not before now, looking a week past c for an open day.
func firstTrading(c civil, now time.Time, h WeeklyHours, loc *time.Location) (time.Time, bool) {
	for i := 0; i <= 7; i++ {
		sp, ok := h.tradingSpan(c.addDays(i), loc)
		if !ok || !sp.end.After(now) {
			continue
		}
		if sp.start.Before(now) {
			return now, true
		}
		return sp.start, true
	}
	return time.Time{}, false
}
