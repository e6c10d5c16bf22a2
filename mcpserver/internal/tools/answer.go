package tools

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/korral/storelink/mcpserver/internal/jsonenc"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readAnnotations are the honest hints of every read tool, all set
// explicitly: in the SDK an unset destructive or open-world hint means true.
func readAnnotations() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    true,
		DestructiveHint: ptr(false),
		IdempotentHint:  true,
		OpenWorldHint:   ptr(true),
	}
}

// table is a list of records as a header and one short row per record: the
// same facts as a list of objects at about half the bytes.
type table struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// The risk check's answer is encoded by hand: encoding/json's reflection
// walk of it was several percent of a warm risk check's CPU (issue 44).
// The functions below write exactly the bytes json.Marshal writes for the
// same values (TestRiskAnswerEncodingIsWhatJSONMarshalWrites): the struct
// tags' names, order and omitempty rules, HTML-escaped strings, and
// encoding/json's float format. A value they do not know (a table cell of
// another type, the sweep's summary) is encoded by json.Marshal.

// marshalData is json.Marshal(data), written by data itself when it can.
func marshalData(data any) ([]byte, error) {
	if o, ok := data.(*stockRiskOut); ok && o != nil {
		return o.appendJSON(make([]byte, 0, o.sizeHint()))
	}
	return json.Marshal(data)
}

// sizeHint is about the answer's encoded size, so that its buffer is
// allocated once: some 1,200 bytes a store and 40 an evidence day.
func (o *stockRiskOut) sizeHint() int {
	n := 512
	for i := range o.Stores {
		n += 256
		if r := o.Stores[i].Risk; r != nil {
			n += 1024 + 40*len(r.Evidence.Rows)
		}
	}
	return n
}

// MarshalJSON writes the answer as encoding/json would.
func (o *stockRiskOut) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }

func (o *stockRiskOut) appendJSON(b []byte) ([]byte, error) {
	if o == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, `{"sku":`...)
	b = appendJSONString(b, o.SKU)
	if o.Product != nil {
		b = append(b, `,"product":`...)
		b = appendProduct(b, o.Product)
	}
	b = append(b, `,"stores":`...)
	if o.Stores == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range o.Stores {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendStoreRisk(b, &o.Stores[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if o.Sweep != nil {
		b = append(b, `,"sweep":`...)
		if b, err = appendMarshaled(b, o.Sweep); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendProduct(b []byte, p *productInfo) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, p.Name)
	b = append(b, `,"supplier":`...)
	b = appendJSONString(b, p.Supplier)
	b = append(b, `,"chilled":`...)
	b = strconv.AppendBool(b, p.Chilled)
	b = append(b, `,"case_pack":`...)
	b = strconv.AppendInt(b, p.CasePack, 10)
	if p.ShelfLifeDays != 0 {
		b = append(b, `,"shelf_life_days":`...)
		b = strconv.AppendInt(b, p.ShelfLifeDays, 10)
	}
	b = append(b, `,"lead_time_days":`...)
	if p.SupplierLeadTimeDays == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*p.SupplierLeadTimeDays), 10)
	}
	if len(p.Unknown) > 0 {
		b = append(b, `,"unknown":`...)
		b = appendStrings(b, p.Unknown)
	}
	return append(b, '}')
}

func appendStoreRisk(b []byte, s *storeRisk) ([]byte, error) {
	var err error
	b = append(b, `{"store_id":`...)
	b = appendJSONString(b, s.StoreID)
	if s.StoreName != "" {
		b = append(b, `,"store_name":`...)
		b = appendJSONString(b, s.StoreName)
	}
	if s.Risk != nil {
		b = append(b, `,"risk":`...)
		if b, err = appendStoreFacts(b, s.Risk); err != nil {
			return nil, err
		}
	}
	if e := s.Error; e != nil {
		b = append(b, `,"error":{"code":`...)
		b = appendJSONString(b, e.Code)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, e.Message)
		b = append(b, `,"remediation":`...)
		b = appendJSONString(b, e.Remediation)
		if e.RetryAfterSeconds != 0 {
			b = append(b, `,"retry_after_seconds":`...)
			b = strconv.AppendInt(b, int64(e.RetryAfterSeconds), 10)
		}
		if e.IncidentID != "" {
			b = append(b, `,"incident_id":`...)
			b = appendJSONString(b, e.IncidentID)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

func appendStoreFacts(b []byte, f *storeFacts) ([]byte, error) {
	var err error
	b = append(b, `{"headline":`...)
	b = appendJSONString(b, f.Headline)
	b = append(b, `,"as_of":`...)
	b = appendJSONString(b, f.AsOf)
	b = append(b, `,"on_hand_units":`...)
	b = strconv.AppendInt(b, f.OnHandUnits, 10)
	b = append(b, `,"on_hand_as_of":`...)
	b = appendJSONString(b, f.OnHandAsOf)
	b = append(b, `,"estimated_on_hand_now":`...)
	b = strconv.AppendInt(b, f.EstimatedOnHandNow, 10)
	b = append(b, `,"units_sold_today":`...)
	b = strconv.AppendInt(b, f.UnitsSoldToday, 10)
	b = append(b, `,"units_sold_last_24h":`...)
	b = strconv.AppendInt(b, f.UnitsSoldLast24h, 10)
	b = append(b, `,"units_per_trading_hour":`...)
	if f.UnitsPerTradingHour == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, x := range f.UnitsPerTradingHour {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONFloat(b, x); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"velocity_basis":`...)
	b = appendJSONString(b, f.VelocityBasis)
	b = append(b, `,"stockout_window":[`...)
	b = appendOptString(b, f.StockoutWindow[0])
	b = append(b, ',')
	b = appendOptString(b, f.StockoutWindow[1])
	b = append(b, `],"confidence":`...)
	b = appendJSONString(b, string(f.Confidence))
	b = append(b, `,"will_stockout_before_close_today":`...)
	b = appendJSONString(b, string(f.WillStockoutBeforeCloseToday))
	b = append(b, `,"units_short_by_close":`...)
	if f.UnitsShortByClose == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *f.UnitsShortByClose, 10)
	}
	b = append(b, `,"closes_at_today":`...)
	b = appendOptString(b, f.ClosesAtToday)
	b = append(b, `,"order_cutoff_passed":`...)
	b = strconv.AppendBool(b, f.OrderCutoffPassed)
	b = append(b, `,"earliest_delivery":`...)
	b = appendOptString(b, f.EarliestArrival)
	b = append(b, `,"arrival_beats_stockout":`...)
	b = appendJSONString(b, string(f.ArrivalBeatsStockout))
	b = append(b, `,"evidence":`...)
	if b, err = appendTable(b, &f.Evidence); err != nil {
		return nil, err
	}
	b = append(b, `,"data_quality_flags":`...)
	b = appendStringsOf(b, f.DataQualityFlags)
	b = append(b, `,"data_quality_notes":`...)
	b = appendStrings(b, f.DataQualityNotes)
	b = append(b, `,"caveat":`...)
	b = appendJSONString(b, f.Caveat)
	if len(f.Unknown) > 0 {
		b = append(b, `,"unknown":`...)
		b = appendStrings(b, f.Unknown)
	}
	return append(b, '}'), nil
}

func appendTable(b []byte, t *table) ([]byte, error) {
	var err error
	b = append(b, `{"columns":`...)
	b = appendStrings(b, t.Columns)
	b = append(b, `,"rows":`...)
	if t.Rows == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '[')
	for i, row := range t.Rows {
		if i > 0 {
			b = append(b, ',')
		}
		if row == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, cell := range row {
			if j > 0 {
				b = append(b, ',')
			}
			if b, err = appendCell(b, cell); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, "]}"...), nil
}

// appendCell writes one table cell: the types compactEvidence puts in a
// row by hand, anything else through json.Marshal.
func appendCell(b []byte, cell any) ([]byte, error) {
	switch v := cell.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, v), nil
	case *string:
		return appendOptString(b, v), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case *int64:
		if v == nil {
			return append(b, "null"...), nil
		}
		return strconv.AppendInt(b, *v, 10), nil
	case float64:
		return appendJSONFloat(b, v)
	case *float64:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendJSONFloat(b, *v)
	case []projection.DayFlag:
		return appendStringsOf(b, v), nil
	case *[]projection.DayFlag:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendStringsOf(b, *v), nil
	}
	return appendMarshaled(b, cell)
}

// appendMarshaled appends json.Marshal(v).
func appendMarshaled(b []byte, v any) ([]byte, error) {
	m, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, m...), nil
}

// appendStrings writes a slice of strings; nil is null.
func appendStrings(b []byte, ss []string) []byte { return appendStringsOf(b, ss) }

// appendStringsOf writes a slice of a string type; nil is null.
func appendStringsOf[S ~string](b []byte, ss []S) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, string(s))
	}
	return append(b, ']')
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONFloat writes f as encoding/json does: the shortest decimal,
// with an exponent below 1e-6 and from 1e21. NaN and infinities are
// errors, as in json.Marshal.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	return jsonenc.AppendFloat(b, f), nil
}

// appendJSONString writes s quoted as json.Marshal does, HTML escaping
// included.
func appendJSONString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, true) }
