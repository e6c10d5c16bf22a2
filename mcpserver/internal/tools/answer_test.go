package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// reflectedRiskOut is stockRiskOut without its MarshalJSON: encoding/json
// encodes it by reflection, the encoding the hand-written one must equal.
type reflectedRiskOut stockRiskOut

// hostile are strings every escaping rule of encoding/json applies to.
var hostile = []string{
	"", "plain", `quote " and \ backslash`, "<b>Tom & Jerry</b>", "line\u2028para\u2029end",
	"ctl \x00\x01\x1f\x7f \b\f\n\r\t", "bad utf-8 \xff\xfe and \xe2\x80", "Praha Smíchov ✓ 🧈", "\u2027\u202a",
}

// riskAnswerVariants are answers the encodings are compared over: real
// projections and hand-built values with empty, nil, zero and odd parts.
func riskAnswerVariants(t *testing.T) []*stockRiskOut {
	t.Helper()
	var outs []*stockRiskOut
	for _, days := range []int{1, 3, 14, 28} {
		out, err := riskAnswer(days)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	outs = append(outs, &stockRiskOut{}, &stockRiskOut{Stores: []storeRisk{}},
		&stockRiskOut{SKU: "1", Stores: []storeRisk{{}, {Risk: &storeFacts{}}, {Error: &ErrorBody{}}}})
	lead := 0
	short := int64(-3)
	for i, s := range hostile {
		f := &storeFacts{
			Headline: s, AsOf: s, OnHandUnits: int64(-i), OnHandAsOf: s, EstimatedOnHandNow: math.MaxInt64, UnitsSoldToday: math.MinInt64,
			UnitsPerTradingHour: []float64{}, VelocityBasis: s, StockoutWindow: [2]*string{&hostile[i], nil},
			Confidence: projection.Confidence(s), WillStockoutBeforeCloseToday: projection.Answer(s), UnitsShortByClose: &short,
			ClosesAtToday: &hostile[i], OrderCutoffPassed: i%2 == 0, EarliestArrival: &hostile[i], ArrivalBeatsStockout: projection.No,
			Evidence: table{Columns: []string{s}, Rows: [][]any{nil, {}, {s, &hostile[i], (*string)(nil), int64(i), &short, (*int64)(nil),
				1e-7, 1e21, 123456789.125, math.Copysign(0, -1), 0.1, (*float64)(nil), []projection.DayFlag{}, []projection.DayFlag(nil),
				[]projection.DayFlag{projection.DayFlag(s)}, &[]projection.DayFlag{"a"}, (*[]projection.DayFlag)(nil), nil, true, 7, map[string]any{"<": s}, []any{1.5, "x"}}}},
			DataQualityFlags: []projection.Flag{projection.Flag(s)}, DataQualityNotes: []string{s, s}, Caveat: s, Unknown: []string{s},
		}
		if i%2 == 1 {
			f.UnitsPerTradingHour, f.Evidence.Rows, f.Evidence.Columns, f.DataQualityFlags, f.DataQualityNotes, f.Unknown = []float64{1e-6, 5e-324, -1e22, 2.5}, nil, nil, nil, nil, []string{}
			f.UnitsShortByClose = nil
		}
		out := &stockRiskOut{SKU: s, Product: &productInfo{Name: s, Supplier: s, Chilled: i%2 == 0, CasePack: int64(i), ShelfLifeDays: int64(i % 3),
			SupplierLeadTimeDays: &lead, Unknown: []string{s}},
			Stores: []storeRisk{{StoreID: s, StoreName: s, Risk: f},
				{StoreID: s, Error: &ErrorBody{Code: s, Message: s, Remediation: s, RetryAfterSeconds: i, IncidentID: s}}}}
		if i%3 == 0 {
			out.Product.SupplierLeadTimeDays, out.Product.Unknown = nil, []string{}
			out.Sweep = &sweepOut{StoresChecked: i, MoreAtRisk: table{Columns: []string{s}, Rows: [][]any{{s, i}}}, Errors: []sweepError{}}
		}
		outs = append(outs, out)
	}
	return outs
}

// TestRiskAnswerEncodingIsWhatJSONMarshalWrites pins the hand-written
// encoding of the risk answer to encoding/json's, byte for byte.
func TestRiskAnswerEncodingIsWhatJSONMarshalWrites(t *testing.T) {
	for i, out := range riskAnswerVariants(t) {
		want, err := json.Marshal((*reflectedRiskOut)(out))
		if err != nil {
			t.Fatal(err)
		}
		got, err := out.MarshalJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("answer %d: MarshalJSON = %s, %v\nwant %s", i, got, err, want)
		}
		viaMarshal, err := json.Marshal(out)
		if err != nil || !bytes.Equal(viaMarshal, want) {
			t.Errorf("answer %d: json.Marshal = %s, %v\nwant %s", i, viaMarshal, err, want)
		}
		env, err := successEnvelope(out, false)
		wantEnv, _ := json.Marshal(success[*reflectedRiskOut]{OK: true, Data: (*reflectedRiskOut)(out)})
		if err != nil || !bytes.Equal(env, wantEnv) {
			t.Errorf("answer %d: successEnvelope = %s, %v\nwant %s", i, env, err, wantEnv)
		}
	}
	var nilOut *stockRiskOut
	if got, err := marshalData(nilOut); err != nil || string(got) != "null" {
		t.Errorf("a nil answer encodes as %s, %v", got, err)
	}
}

// TestRiskAnswerEncodingRefusesWhatJSONMarshalRefuses: a rate that is not
// a number is an error, as in encoding/json, never invalid JSON.
func TestRiskAnswerEncodingRefusesWhatJSONMarshalRefuses(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, f := range []*storeFacts{{UnitsPerTradingHour: []float64{1, x}}, {Evidence: table{Rows: [][]any{{x}}}}, {Evidence: table{Rows: [][]any{{&x}}}}} {
			out := &stockRiskOut{Stores: []storeRisk{{Risk: f}}}
			if _, err := json.Marshal((*reflectedRiskOut)(out)); err == nil {
				t.Fatalf("encoding/json encodes %v", x)
			}
			if got, err := out.MarshalJSON(); err == nil {
				t.Errorf("%v encodes as %s", x, got)
			}
		}
	}
}

// riskSummaryByFmt is riskSummary as it was written with fmt, before it
// appended into one buffer (issue 44): the sentence must not change.
func riskSummaryByFmt(sku string, stores []storeRisk, found []*replenish.Assessment) string {
	parts := make([]string, 0, len(stores))
	failed, next := 0, 0
	for _, st := range stores {
		switch {
		case st.Risk != nil && next < len(found):
			a := found[next]
			next++
			parts = append(parts, fmt.Sprintf("store %s: on hand %d, stockout before close today: %s, confidence %s",
				a.Identity.StoreID, a.Risk.OnHandUnits, a.Risk.WillStockoutBeforeCloseToday, a.Risk.Confidence))
		case st.Error != nil:
			failed++
			parts = append(parts, fmt.Sprintf("store %s: %s", st.StoreID, st.Error.Code))
		default:
			failed++
			parts = append(parts, fmt.Sprintf("store %s: not checked", st.StoreID))
		}
	}
	summary := fmt.Sprintf("Checked stock risk of %s at %d store(s): %s.", productLabel(sku, found), len(stores), strings.Join(parts, "; "))
	if failed > 0 {
		summary += fmt.Sprintf(" %d store(s) could not be checked.", failed)
	}
	return summary
}

func TestRiskSummaryIsTheSentenceFmtWrote(t *testing.T) {
	a := func(store, name string, onHand int64, will projection.Answer, c projection.Confidence) *replenish.Assessment {
		return &replenish.Assessment{Identity: replenish.Identity{StoreID: store, ProductName: name},
			Risk: projection.Result{OnHandUnits: onHand, WillStockoutBeforeCloseToday: will, Confidence: c}}
	}
	cases := []struct {
		stores []storeRisk
		found  []*replenish.Assessment
	}{
		{nil, nil},
		{[]storeRisk{{StoreID: "47", Risk: &storeFacts{}}}, []*replenish.Assessment{a("47", "Madeta butter 250g", 5, projection.Yes, projection.ConfidenceMedium)}},
		{[]storeRisk{{StoreID: "47", Risk: &storeFacts{}}}, []*replenish.Assessment{a("47", "", -12, projection.Unknown, projection.ConfidenceNone)}},
		{[]storeRisk{{StoreID: "55", Error: &ErrorBody{Code: "STORE_NOT_AUTHORIZED"}}, {StoreID: "47", Risk: &storeFacts{}}, {StoreID: "9"}, {StoreID: "102", Risk: &storeFacts{}}},
			[]*replenish.Assessment{a("47", "<b>&", 0, projection.No, projection.ConfidenceHigh)}},
	}
	for _, c := range cases {
		if got, want := riskSummary("8847291", c.stores, c.found), riskSummaryByFmt("8847291", c.stores, c.found); got != want {
			t.Errorf("riskSummary = %q\nwant %q", got, want)
		}
	}
}

// compactEvidence's rows: the day as "Fri 13", the units, bulk units and
// hours as given, the rate to two decimals, the flags only when there are.
func TestCompactEvidenceRows(t *testing.T) {
	rate, odd := 1.23556, 0.004
	days := []projection.DayEvidence{
		{Date: "2026-11-13", Weekday: "Fri", UnitsSold: 300, BulkUnits: 12, TradingHours: 13.5, UnitsPerHour: &rate},
		{Date: "2026-11-01", Weekday: "Sun", TradingHours: 0, Flags: []projection.DayFlag{projection.DayClosed}},
		{Date: "2026-11-30", Weekday: "Mon", UnitsSold: 1, TradingHours: 8, UnitsPerHour: &odd, Flags: []projection.DayFlag{projection.DayZeroSales, projection.DayPossibleStockout}},
		{Date: "2026-11-07", Weekday: "Xyz", UnitsSold: 2},
	}
	got, err := json.Marshal(compactEvidence(days))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"columns":["day","units_sold","bulk_units","trading_hours","units_per_trading_hour","flags"],"rows":[` +
		`["Fri 13",300,12,13.5,1.24],["Sun 1",0,0,0,null,["closed"]],["Mon 30",1,0,8,0,["zero_sales","possible_stockout"]],["Xyz 7",2,0,0,null]]}`
	if string(got) != want {
		t.Errorf("evidence = %s\nwant %s", got, want)
	}
}

// The hand-written encoding names every exported field of the types it
// writes (storeFacts also holds the unexported closesAt); a
// field added to one of them must be added to answer.go too, and then
// here.
func TestRiskAnswerEncodingKnowsEveryField(t *testing.T) {
	for typ, fields := range map[reflect.Type]int{
		reflect.TypeFor[stockRiskOut](): 4, reflect.TypeFor[productInfo](): 7, reflect.TypeFor[storeRisk](): 4,
		reflect.TypeFor[storeFacts](): 23, reflect.TypeFor[ErrorBody](): 5, reflect.TypeFor[table](): 2,
	} {
		if got := typ.NumField(); got != fields {
			t.Errorf("%v has %d fields; answer.go encodes %d", typ, got, fields)
		}
	}
}
