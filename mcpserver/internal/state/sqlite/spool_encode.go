package sqlite

import (
	"errors"
	"math"

	"github.com/korral/storelink/mcpserver/internal/jsonenc"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// errUnencodable is a record JSON cannot hold: a NaN or infinite duration,
// or a time outside the years 0 to 9999.
var errUnencodable = errors.New("state: audit record has a value JSON cannot hold")

// appendAuditLine appends r's spool line to b: the bytes a json.Encoder
// with SetEscapeHTML(false) writes for r, newline included, without
// reflection or allocation. TestAuditLineMatchesEncodingJSON holds the two
// equal. On errUnencodable, b is returned unchanged.
func appendAuditLine(b []byte, r *state.AuditRecord) ([]byte, error) {
	d := r.DurationMS
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return b, errUnencodable
	}
	start := len(b)
	b = append(b, `{"time":"`...)
	// AppendText is MarshalJSON without the quotes: RFC 3339 with
	// nanoseconds, refusing a year outside 0 to 9999.
	b, err := r.Time.AppendText(b)
	if err != nil {
		return b[:start], errUnencodable
	}
	b = append(b, `","call_id":`...)
	b = appendJSONString(b, r.CallID)
	b = append(b, `,"client":`...)
	b = appendJSONString(b, r.Client)
	b = append(b, `,"session":`...)
	b = appendJSONString(b, r.Session)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, r.Tool)
	if r.StoreID != "" {
		b = append(b, `,"store_id":`...)
		b = appendJSONString(b, r.StoreID)
	}
	if r.SKU != "" {
		b = append(b, `,"sku":`...)
		b = appendJSONString(b, r.SKU)
	}
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, r.Outcome)
	if r.ErrorCode != "" {
		b = append(b, `,"error_code":`...)
		b = appendJSONString(b, r.ErrorCode)
	}
	b = append(b, `,"summary":`...)
	b = appendJSONString(b, r.Summary)
	b = append(b, `,"duration_ms":`...)
	b = jsonenc.AppendFloat(b, d)
	if r.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendJSONString(b, r.TraceID)
	}
	return append(b, '}', '\n'), nil
}

// appendJSONString appends s quoted as an Encoder with SetEscapeHTML(false)
// quotes it.
func appendJSONString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, false) }
