package storelinkclient

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"
)

// parseTime reads the common form of an RFC 3339 time,
// YYYY-MM-DDTHH:MM:SS, an optional fraction of 1 to 9 digits, then Z or
// ±hh:mm, to the time.Time that time.Time.UnmarshalJSON gives for it:
// UTC for Z; for an offset time.Local when the local zone has that
// offset at that instant, else an unnamed fixed zone. ok is false for
// anything else (an out-of-range field, a lowercase t or z, a leap
// second, a longer fraction), which the caller leaves to
// time.Time.UnmarshalJSON. z keeps the local zone last looked up.
func parseTime(b []byte, z *localZone) (t time.Time, ok bool) {
	if len(b) < len("2006-01-02T15:04:05Z") || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	century, year := num2(b[0:2]), num2(b[2:4])
	if century < 0 || year < 0 {
		return time.Time{}, false
	}
	year += century * 100
	month, day := num2(b[5:7]), num2(b[8:10])
	hour, minute, sec := num2(b[11:13]), num2(b[14:16]), num2(b[17:19])
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	rest := b[19:]
	nsec := 0
	if rest[0] == '.' {
		n := 1
		for ; n < len(rest) && rest[n] >= '0' && rest[n] <= '9'; n++ {
			nsec = nsec*10 + int(rest[n]-'0')
		}
		if n == 1 || n > 10 {
			return time.Time{}, false
		}
		for range 10 - n {
			nsec *= 10
		}
		rest = rest[n:]
	}
	unix := unixDays(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	if len(rest) == 1 && rest[0] == 'Z' {
		return time.Unix(unix, int64(nsec)).UTC(), true
	}
	if len(rest) != len("+07:00") || rest[0] != '+' && rest[0] != '-' || rest[3] != ':' {
		return time.Time{}, false
	}
	hh, mm := num2(rest[1:3]), num2(rest[4:6])
	if hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return time.Time{}, false
	}
	offset := (hh*60 + mm) * 60
	if rest[0] == '-' {
		offset = -offset
	}
	unix -= int64(offset)
	// time.Unix's value is in time.Local: kept when the local zone has
	// the offset at that instant, as time.Time.UnmarshalJSON picks.
	if t = time.Unix(unix, int64(nsec)); z.offsetAt(unix) == offset {
		return t, true
	}
	return t.In(time.FixedZone("", offset)), true
}

// localZone is the offset of time.Local over the instants [from, to),
// Unix seconds, as last looked up; known is false before the first.
type localZone struct {
	from, to int64
	offset   int
	known    bool
}

// offsetAt is time.Local's offset from UTC at the Unix second unix.
func (z *localZone) offsetAt(unix int64) int {
	if z.known && unix >= z.from && unix < z.to {
		return z.offset
	}
	t := time.Unix(unix, 0)
	_, z.offset = t.Zone()
	start, end := t.ZoneBounds()
	z.from, z.to, z.known = math.MinInt64, math.MaxInt64, true
	if !start.IsZero() {
		z.from = start.Unix()
	}
	if !end.IsZero() {
		z.to = end.Unix()
	}
	return z.offset
}

// unixDays is the number of days from 1970-01-01 to the given date of
// the proleptic Gregorian calendar (negative before), by eras of 400
// years that start on 1 March.
func unixDays(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := year - era*400
	doy := (153*((month+9)%12)+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era*146097 + doe - 719468)
}

// num2 is the value of two decimal digits; -1 when they are not.
func num2(b []byte) int {
	hi, lo := int(b[0])-'0', int(b[1])-'0'
	if hi < 0 || hi > 9 || lo < 0 || lo > 9 {
		return -1
	}
	return hi*10 + lo
}

// daysIn is the number of days of month in year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// plainEnd is the index of the first byte at or after i that is not an
// ASCII character standing for itself in a JSON string (special), or
// len(data). It looks at eight bytes at a time.
func plainEnd(data []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		// A byte below 0x20, a quote, a backslash, or a byte with its
		// high bit set: the standard test for a zero byte, on x less
		// 0x20, on x xor '"' and on x xor '\\'. A borrow may flag a
		// byte above a flagged one, never one below: the lowest flag
		// is the first special byte.
		q, bs := x^(ones*'"'), x^(ones*'\\')
		if m := ((x-ones*0x20)&^x | (q-ones)&^q | (bs-ones)&^bs | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(data) && !special[data[i]] {
		i++
	}
	return i
}
