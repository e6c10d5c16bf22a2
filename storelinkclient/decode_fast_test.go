package storelinkclient_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

// posTimes are the timestamps of the POS bodies: the common form with
// offsets either side, fractions of 1 to 10 digits, Z, -00:00, and forms
// the fast reading leaves to time.Time (or that time.Time refuses).
func posTimes() []string {
	return []string{
		"2026-11-28T10:14:07+01:00", "2026-11-28T10:14:07Z", "2026-11-28T10:14:07-00:00", "2026-11-28T10:14:07+00:00",
		"2026-11-28T10:14:07.1Z", "2026-11-28T10:14:07.12+05:30", "2026-11-28T10:14:07.123-03:30",
		"2026-11-28T10:14:07.1234+14:00", "2026-11-28T10:14:07.12345-12:00", "2026-11-28T10:14:07.123456+23:59",
		"2026-11-28T10:14:07.1234567-23:59", "2026-11-28T10:14:07.12345678Z", "2026-11-28T10:14:07.123456789+02:00",
		"2026-11-28T10:14:07.1234567891Z", "2026-11-28T10:14:07.Z", "2026-11-28T10:14:07,5Z",
		"2026-07-01T09:00:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00", "2026-03-29T02:30:00+01:00",
		"2026-02-28T23:59:59Z", "2026-02-29T00:00:00Z", "2026-02-30T00:00:00Z", "2024-02-29T00:00:00Z",
		"2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-12-31T23:59:59-00:01",
		"0000-01-01T00:00:00Z", "0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-23:59", "2026-00-10T00:00:00Z",
		"2026-13-10T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-28T24:00:00Z", "2026-11-28T10:60:00Z",
		"2026-11-28T10:14:60Z", "2026-11-28T10:14:07+24:00", "2026-11-28T10:14:07+01:60", "2026-11-28t10:14:07Z",
		"2026-11-28T10:14:07z", "2026-11-28T10:14:07", "2026-11-28T10:14:07+0100", "2026-11-28T10:14:07+01:00:00",
		"2026-11-28 10:14:07Z", "2026-11-28T1:14:07Z", "20a6-11-28T10:14:07Z", "2026-1a-28T10:14:07Z",
		"2026-11-28T10:14:07+1a:00", "2026-11-28T10:14:07*01:00", "+2026-11-28T10:14:07Z", "2026-11-28T10:14:07.+01:00",
		"2026-11-28T10:14:07.-1Z", "2026-11-28T10:14:07ZZ", "",
	}
}

// posLine is one POS line with the given timestamp, identifier and units
// (each as its JSON text).
func posLine(ts, id, units string) string {
	return `{"timestamp":"` + ts + `","transaction_id":` + id + `,"units":` + units + `}`
}

// posEdges are POS pages at the edges of the fast reading of lines: every
// time above, keys in other orders, repeated or missing or unknown keys,
// escapes in keys and values, values of other types, white space, large
// pages, and a first line much shorter or longer than the rest.
func posEdges() []string {
	page := func(lines ...string) string {
		return `{"store_id":"47","sku":"8847291","since":"2026-11-27T10:00:00Z","total_count":2,"transactions":[` +
			strings.Join(lines, ",") + `]}`
	}
	good := posLine("2026-11-28T10:14:07+01:00", `"T-47-20261128-000431"`, "2")
	out := []string{}
	for _, ts := range posTimes() {
		out = append(out, page(good, posLine(ts, `"T-1"`, "1")), page(posLine(ts, `"T-1"`, "1")))
	}
	for _, line := range []string{
		`{"units":2,"transaction_id":"T","timestamp":"2026-11-28T10:14:07Z"}`,
		`{"transaction_id":"T","timestamp":"2026-11-28T10:14:07Z","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T"}`, `{}`, `{"units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T","units":2,"units":3}`,
		`{"timestamp":"2026-11-28T10:14:07Z","timestamp":"2026-11-28T10:14:08Z","transaction_id":"T","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T","units":2,"extra":1}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T","unit":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T","Units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_ix":"T","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transbction_id":"T","units":2}`,
		`{"timestamX":"2026-11-28T10:14:07Z","transaction_id":"T","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T","unitz":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T","\u0075nits":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_\u0069d":"T","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07\u005a","transaction_id":"T","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T\"\\\/\n\u00e9` + "é\xff" + `","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"T` + "\x01" + `","units":2}`,
		`{"timestamp":"2026-11-28T10:14:07Z","transaction_id":"","units":-0}`,
		` { "timestamp" : "2026-11-28T10:14:07Z" , "transaction_id" : "T" , "units" : 2 } `,
		"{\n\t\"timestamp\":\"2026-11-28T10:14:07Z\",\r\n\"transaction_id\":\"T\",\"units\":2\n}",
	} {
		out = append(out, page(good, line), page(line, good))
	}
	for _, units := range []string{"0", "-1", "01", "1.0", "1e2", "1E2", "-", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", `"2"`, "null", "true", "[]", "{}", "2x", "2 ", "2}"} {
		out = append(out, page(good, posLine("2026-11-28T10:14:07Z", `"T"`, units)))
	}
	for _, id := range []string{`null`, `5`, `"T`, `"T" "U"`, `true`} {
		out = append(out, page(good, posLine("2026-11-28T10:14:07Z", id, "2")))
	}
	for _, ts := range []string{`null`, `5`} {
		out = append(out, page(good, strings.Replace(good, `"2026-11-28T10:14:07+01:00"`, ts, 1)))
	}
	long := posLine("2026-11-28T10:14:07.123456789+01:00", `"T-47-`+strings.Repeat("x", 300)+`"`, "123456")
	short := posLine("2026-11-28T10:14:07Z", `"T"`, "2")
	many := func(first, rest string, n int) string {
		lines := []string{first}
		for range n - 1 {
			lines = append(lines, rest)
		}
		return page(lines...)
	}
	return append(out, many(short, long, 50), many(long, short, 500), many(good, good, 5000),
		many(short, good, 1200), many(good, `{}`, 300), many(`[]`, good, 30), page(good, good)+" ", page(good, good)+"]",
		page(good, good)[:200], `{"transactions":[`+good+`,`+good)
}

// TestPOSBodiesDecodeAsEncodingJSON: the POS edge bodies decode as
// json.Unmarshal reads them, into every type.
func TestPOSBodiesDecodeAsEncodingJSON(t *testing.T) {
	for i, body := range posEdges() {
		for _, v := range decodeTypes() {
			sameDecode(t, fmt.Sprintf("POS body %d", i), []byte(body), v)
		}
	}
}

// TestParseTimeMatchesUnmarshalJSON: where the fast reading of a time
// takes it, it gives time.Time.UnmarshalJSON's value, zone included; it
// takes the common forms. It runs again under other local zones.
func TestParseTimeMatchesUnmarshalJSON(t *testing.T) {
	inputs := posTimes()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		ts := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", r.IntN(10000), r.IntN(14), r.IntN(33), r.IntN(25), r.IntN(61), r.IntN(61))
		if n := r.IntN(11); n > 0 {
			ts += "." + fmt.Sprint(r.Int64())[:min(n, 18)]
		}
		if r.IntN(4) == 0 {
			ts += "Z"
		} else {
			ts += fmt.Sprintf("%c%02d:%02d", "+-"[r.IntN(2)], r.IntN(25), []int{0, 30, 45, 59, 60}[r.IntN(5)])
		}
		inputs = append(inputs, ts)
	}
	// Runs of times across the changes of daylight saving time in Europe
	// (25 October, 29 March) and India's one-off changes, in order, so a
	// kept look-up of the local zone is used and renewed.
	for _, day := range []string{"2026-10-25", "2026-03-29", "1942-09-01", "1945-10-15"} {
		for m := range 6 * 60 / 5 {
			for _, off := range []string{"Z", "+01:00", "+02:00", "+05:30", "+06:30", "-03:30", "-02:30"} {
				inputs = append(inputs, fmt.Sprintf("%sT%02d:%02d:00%s", day, m/12, m%12*5, off))
			}
		}
	}
	fast, kept := 0, sl.TimeReader()
	for _, s := range inputs {
		var want time.Time
		wantErr := want.UnmarshalJSON([]byte(`"` + s + `"`))
		got, ok := sl.ParseTime([]byte(s))
		if again, okAgain := kept([]byte(s)); okAgain != ok || !reflect.DeepEqual(again, got) {
			t.Fatalf("%s: %v with the look-up kept, %v without", s, again, got)
		}
		if !ok {
			continue
		}
		fast++
		// A zone UnmarshalJSON shares (UTC, Local, a whole-hour fixed
		// zone) is the same pointer; another fixed zone is new each time.
		_, off := want.Zone()
		shared := want.Location() == time.FixedZone("", off) || want.Location() == time.Local || want.Location() == time.UTC
		if wantErr != nil || !reflect.DeepEqual(got, want) || shared && got != want {
			t.Fatalf("%s: %v (%v), UnmarshalJSON %v (%v, %v)", s, got, got.Location(), want, want.Location(), wantErr)
		}
	}
	for _, s := range []string{"2026-11-28T10:14:07+01:00", "2026-11-28T10:14:07Z", "2026-11-28T10:14:07.123456789-03:30",
		"2026-11-28T10:14:07.1-00:00", "2024-02-29T00:00:00+14:00"} {
		if _, ok := sl.ParseTime([]byte(s)); !ok {
			t.Errorf("%s: left to time.Time", s)
		}
	}
	t.Logf("local zone %v: %d of %d times read by the fast reading", time.Local, fast, len(inputs))
	if os.Getenv("STORELINK_TZ_CHILD") != "" {
		return
	}
	for _, tz := range []string{"Europe/Prague", "Asia/Kolkata", "America/St_Johns", "UTC"} {
		cmd := exec.Command(os.Args[0], "-test.run=^(TestParseTimeMatchesUnmarshalJSON|TestPOSBodiesDecodeAsEncodingJSON)$")
		cmd.Env = append(os.Environ(), "TZ="+tz, "STORELINK_TZ_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("PASS")) {
			t.Errorf("under TZ=%s: %v\n%s", tz, err, out)
		}
	}
}

// TestEstimateItems: the capacity hint of an array is the bytes after
// its first item over that item's length, bounded.
func TestEstimateItems(t *testing.T) {
	for _, c := range []struct {
		after string
		want  int
	}{
		{`1]`, 1},
		{`{"a":"x,y"}]`, 1},
		{`1,2,3,4]`, 4},
		{`{"a":[1,2]},{"a":[3,4]},{"a":[5,6]}]`, 3},
		{`"\\",1]`, 1}, // two items, the second shorter than the first
		{`12345,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]`, 1 + 52/6},
		{strings.Repeat(`1,`, 5000) + `1]`, 4096},
		{`1,2`, 2},
	} {
		if got := sl.EstimateItems([]byte(c.after)); got != c.want {
			t.Errorf("[%.40s: %d items, want %d", c.after, got, c.want)
		}
	}
}

// TestPlainEnd: the end of a string's plain bytes is the first quote,
// backslash, control or non-ASCII byte, at any place in the 8-byte words.
func TestPlainEnd(t *testing.T) {
	for _, stop := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff} {
		for n := range 20 {
			for from := range 3 {
				b := bytes.Repeat([]byte{'a'}, 24)
				for i := range b {
					b[i] = byte(0x20 + (i*7)%0x5f)
					if b[i] == '"' || b[i] == '\\' {
						b[i] = 'x'
					}
				}
				want := len(b)
				if from+n < len(b) {
					b[from+n], want = stop, from+n
				}
				if got := sl.PlainEnd(b, from); got != want {
					t.Fatalf("stop %#x at %d from %d: %d", stop, from+n, from, got)
				}
			}
		}
	}
}

// BenchmarkDecodePOSPage is the typed decode alone of a page of 1,000
// lines.
func BenchmarkDecodePOSPage(b *testing.B) {
	body := posPageBody(b, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var page sl.POSPage
		if _, err := sl.DecodeBody(body, &page); err != nil || len(page.Transactions) != 1000 {
			b.Fatal(err)
		}
	}
}

// TestUnevenLinesInOneAllocation: a page whose first line is a byte
// longer than the rest (units 10, then 2) still sizes its slice of lines
// once, as the allocation's size class leaves room; a page whose first
// line is much longer allocates once more, not once per doubling.
func TestUnevenLinesInOneAllocation(t *testing.T) {
	skipUnderRace(t)
	allocs := func(firstID, firstUnits string, n int) float64 {
		lines := []string{posLine("2026-11-28T10:14:07+01:00", `"`+firstID+`"`, firstUnits)}
		for range n - 1 {
			lines = append(lines, posLine("2026-11-28T10:14:07+01:00", `"T-47-20261128-000431"`, "2"))
		}
		body := []byte(`{"store_id":"47","sku":"1","since":"2026-11-27T10:00:00Z","total_count":1,"transactions":[` +
			strings.Join(lines, ",") + `]}`)
		return testing.AllocsPerRun(20, func() {
			var page sl.POSPage
			if _, err := sl.DecodeBody(body, &page); err != nil || len(page.Transactions) != n {
				t.Fatalf("%d lines: %d decoded, %v", n, len(page.Transactions), err)
			}
		})
	}
	id := "T-47-20261128-000431"
	one := allocs(id, "2", 1)
	for _, n := range []int{93, 1000} {
		if got := allocs(id, "10", n); got != one {
			t.Errorf("%d lines, the first a byte longer: %.0f allocations, one line %.0f", n, got, one)
		}
		if got := allocs(id+strings.Repeat("x", 3000), "2", n); got != one+1 {
			t.Errorf("%d lines, the first much longer: %.0f allocations, want %.0f", n, got, one+1)
		}
	}
}
