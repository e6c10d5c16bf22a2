package projection

import (
	"fmt"
	"math"
	"time"
)

// DayHours is one weekday's opening hours in store-local minutes after
// midnight, [Opens, Closes). A day with out-of-range or reversed times
// counts as closed.
type DayHours struct {
	Closed bool
	Opens  int // 0..1439
	Closes int // Opens+1..1440; 1440 is the end of the day
}

// WeeklyHours is a store's opening hours, indexed by time.Weekday.
type WeeklyHours [7]DayHours

// aroundTheClock is every day open all day, used when hours are unknown.
var aroundTheClock = WeeklyHours{{Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}, {Closes: 1440}}

// open reports whether the day trades, with valid times.
func (d DayHours) open() bool {
	return !d.Closed && d.Opens >= 0 && d.Opens < d.Closes && d.Closes <= 24*60
}

// ParseClock reads a store-local "HH:MM" into minutes after midnight.
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

// civil is a calendar date without a zone. Date arithmetic is done in UTC,
// so a DST change can never skip or repeat a date.
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

// dayNumber is the number of days from 1970-01-01 to the date, in the
// proleptic Gregorian calendar (days_from_civil, H. Hinnant), for a date as
// civilOf gives it.
func (c civil) dayNumber() int {
	y, m := c.y, int(c.m)
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	doy := (153*((m+9)%12)+2)/5 + c.d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// localDays reads instants' local day numbers (civil.dayNumber) in loc,
// keeping the zone of the last instant read: a window's sales fall in one
// or two zones, and Time.In(loc).Date() looks the zone up for every
// instant outside the location's current zone.
type localDays struct {
	loc        *time.Location
	start, end int64 // the kept zone's bounds, Unix seconds
	offset     int64
	ok         bool
}

// dayNumber is civilOf(t.In(loc)).dayNumber().
func (z *localDays) dayNumber(t time.Time) int {
	u := t.Unix()
	if !z.ok || u < z.start || u >= z.end {
		lt := t.In(z.loc)
		_, off := lt.Zone()
		start, end := lt.ZoneBounds()
		z.offset, z.start, z.end, z.ok = int64(off), math.MinInt64, math.MaxInt64, true
		if !start.IsZero() {
			z.start = start.Unix()
		}
		if !end.IsZero() {
			z.end = end.Unix()
		}
	}
	local := u + z.offset
	days := local / 86400
	if local%86400 < 0 {
		days--
	}
	return int(days)
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

// weekday is the date's day of the week; 1970-01-01 was a Thursday.
func (c civil) weekday() time.Weekday {
	w := (c.dayNumber() + int(time.Thursday)) % 7
	if w < 0 {
		w += 7
	}
	return time.Weekday(w)
}

func (c civil) String() string {
	var b [10]byte
	return string(c.appendTo(b[:0]))
}

// appendTo appends the date as YYYY-MM-DD, as fmt's "%04d-%02d-%02d"
// writes it; called for every day of every projection.
func (c civil) appendTo(b []byte) []byte {
	if c.y < 0 || c.y > 9999 {
		return fmt.Appendf(b, "%04d-%02d-%02d", c.y, c.m, c.d)
	}
	return append(b, byte('0'+c.y/1000), byte('0'+c.y/100%10), byte('0'+c.y/10%10), byte('0'+c.y%10), '-',
		byte('0'+int(c.m)/10), byte('0'+int(c.m)%10), '-', byte('0'+c.d/10), byte('0'+c.d%10))
}

// at returns the instant of a store-local clock time on this date; minutes
// may be 1440 (next midnight). DST days are an hour shorter or longer.
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

// nominalHoursPerDay is the average trading hours per calendar day over a
// week, ignoring DST.
func (h WeeklyHours) nominalHoursPerDay() float64 {
	total := 0
	for _, d := range h {
		if d.open() {
			total += d.Closes - d.Opens
		}
	}
	return float64(total) / 60 / 7
}

// consume spends units at rate units per trading hour from now and returns
// when they run out, if within HorizonDays.
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

// firstTrading returns the first trading instant on or after date c and not
// before now, looking a week ahead.
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
