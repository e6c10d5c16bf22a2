package sqlite

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// encodeAuditJSON is the line encoding/json writes for r, as the spool
// wrote it before appendAuditLine.
func encodeAuditJSON(r *state.AuditRecord) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	return buf.Bytes(), err
}

// auditTexts are strings that exercise every escaping rule.
var auditTexts = []string{
	"", "ok", "call-0123", `quote " and backslash \`, "<b>&amp;</b>", "line\nbreak\r\ttab",
	"\b\f\x00\x01\x1f\x7f", "caf\u00e9 \u20ac \U0001F9C8", "sep\u2028para\u2029end",
	"bad \xff byte", "\xc3", "\xe2\x82", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too high",
	"mixed \"\xff\n\u2028<>", strings.Repeat("long text ", 50),
}

// auditFloats are durations on each side of encoding/json's switches
// between plain and exponent notation.
var auditFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.25, 12.345, 1e-6, 9.99e-7, 1e-7, 1.5e-10,
	1e20, 1e21, 1.2345e22, -3e-9, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1 + 0.2}

// TestAuditLineMatchesEncodingJSON: appendAuditLine writes the bytes
// json.Encoder (HTML escaping off) writes, over fixed and random records
// with strings needing escapes and invalid UTF-8.
func TestAuditLineMatchesEncodingJSON(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 12, 3, 9, 45, 0, 0, time.UTC),
		time.Date(2026, 12, 3, 9, 45, 0, 123456789, time.UTC),
		time.Date(2026, 12, 3, 9, 45, 0, 120000000, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		{},
	}
	var recs []state.AuditRecord
	for i, s := range auditTexts {
		recs = append(recs, state.AuditRecord{Time: times[i%len(times)], CallID: s, Client: s, Session: s, Tool: s,
			StoreID: s, SKU: s, Outcome: s, ErrorCode: s, Summary: s, DurationMS: auditFloats[i%len(auditFloats)], TraceID: s})
	}
	for _, f := range auditFloats {
		recs = append(recs, state.AuditRecord{Time: times[0], Tool: "korral_check_stock_risk", Outcome: "ok", DurationMS: f})
	}
	rng := rand.New(rand.NewPCG(44, 1))
	pick := func() string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return auditTexts[rng.IntN(len(auditTexts))] + auditTexts[rng.IntN(len(auditTexts))]
	}
	for range 2000 {
		recs = append(recs, state.AuditRecord{
			Time:   time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).UTC(),
			CallID: pick(), Client: pick(), Session: pick(), Tool: pick(), StoreID: pick(), SKU: pick(),
			Outcome: pick(), ErrorCode: pick(), Summary: pick(), TraceID: pick(),
			DurationMS: math.Float64frombits(rng.Uint64()),
		})
	}
	for i := range recs {
		r := &recs[i]
		want, werr := encodeAuditJSON(r)
		got, gerr := appendAuditLine([]byte("prefix"), r)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("record %d %+v: encoding/json error %v, appendAuditLine error %v", i, r, werr, gerr)
		}
		if werr != nil {
			if string(got) != "prefix" {
				t.Errorf("record %d: a refused record left %q", i, got)
			}
			continue
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got[len("prefix"):], want)
		}
	}
}

// TestAuditLineRefusesWhatJSONCannotHold: the records encoding/json
// refuses are refused too, so they go to the table as before.
func TestAuditLineRefusesWhatJSONCannotHold(t *testing.T) {
	ok := time.Date(2026, 12, 3, 9, 45, 0, 0, time.UTC)
	for _, r := range []state.AuditRecord{
		{Time: ok, DurationMS: math.NaN()},
		{Time: ok, DurationMS: math.Inf(1)},
		{Time: ok, DurationMS: math.Inf(-1)},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := encodeAuditJSON(&r); err == nil {
			t.Fatalf("encoding/json took %+v", r)
		}
		if got, err := appendAuditLine(nil, &r); err == nil {
			t.Errorf("appendAuditLine took %+v: %s", r, got)
		}
	}
}

// BenchmarkAuditLine compares appendAuditLine with the json.Encoder it
// replaced, for a typical row.
func BenchmarkAuditLine(b *testing.B) {
	r := state.AuditRecord{Time: time.Date(2026, 12, 3, 9, 45, 0, 123456789, time.UTC), CallID: "c-0123456789abcdef",
		Client: "claude-desktop/1.0 session 7", Session: "s-1", Tool: "korral_check_stock_risk", StoreID: "47", SKU: "8847291",
		Outcome: "ok", Summary: "butter at store 47: 5 on hand, 2.1 days of cover, risk high", DurationMS: 0.612}
	b.Run("append", func(b *testing.B) {
		var line []byte
		b.ReportAllocs()
		for b.Loop() {
			line, _ = appendAuditLine(line[:0], &r)
		}
	})
	b.Run("encoder", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(&r)
		}
	})
}
