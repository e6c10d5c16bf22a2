package storelinkclient

import (
	"context"
	"testing"
	"time"

	"github.com/oapi-codegen/runtime"
)

// styleCases are the styles, locations and options styleParam is compared
// with the runtime in: the ones it writes itself and some it hands over.
var styleCases = []struct {
	style   string
	explode bool
	opts    runtime.StyleParamOptions
}{
	{"simple", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationPath}},
	{"form", true, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationQuery}},
	{"form", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationQuery}},
	{"simple", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationQuery}},
	{"form", true, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationPath}},
	{"simple", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationHeader}},
	{"form", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationCookie}},
	{"simple", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationUndefined}},
	{"form", true, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationQuery, AllowReserved: true}},
	{"label", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationPath}},
	{"matrix", true, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationPath}},
	{"deepObject", true, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationQuery}},
	{"spaceDelimited", false, runtime.StyleParamOptions{ParamLocation: runtime.ParamLocationQuery}},
}

// sameStyle fails t when styleParam and runtime.StyleParamWithOptions
// differ on value in any of styleCases, in the result or in whether there
// is an error.
func sameStyle[T any](t *testing.T, name string, value T) {
	t.Helper()
	for _, c := range styleCases {
		got, gotErr := styleParam(c.style, c.explode, name, value, c.opts)
		want, wantErr := runtime.StyleParamWithOptions(c.style, c.explode, name, value, c.opts)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s %v at %d, reserved %v, %s=%#v: %q (%v), the runtime %q (%v)",
				c.style, c.explode, c.opts.ParamLocation, c.opts.AllowReserved, name, value, got, gotErr, want, wantErr)
		}
	}
}

// TestStyleParam: styleParam writes what the runtime writes, for the kinds
// it handles itself and for some it hands over.
func TestStyleParam(t *testing.T) {
	for _, s := range []string{"", "47", "8847291", "a b", "a+b", "a/b", "50%", "x&y=z", "ü", "Praha Smíchov",
		"?#[]@!$'()*,;:", "~-._", "\x00\x7f", "\xff", "é/ü?", "c2luY2U9MTcwMDAwMDAwMCZvZmZzZXQ9MjAw"} {
		sameStyle(t, "sku", s)
		sameStyle(t, "odd name&=", s)
	}
	for _, n := range []int{0, 1, -1, 200, 1000, 1 << 40, -1 << 62} {
		sameStyle(t, "limit", n)
		sameStyle(t, "limit", int64(n))
		sameStyle(t, "limit", int32(n))
	}
	cet := time.FixedZone("CET", 3600)
	for _, tm := range []time.Time{
		time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 27, 10, 0, 0, 0, cet),
		time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.FixedZone("", -(5*3600+30*60))),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		sameStyle(t, "since", tm)
	}
	// Kinds styleParam hands over: the runtime's own answers.
	type named string
	sameStyle(t, "name", named("a b"))
	sameStyle(t, "flag", true)
	sameStyle(t, "ratio", 0.5)
	sameStyle(t, "ids", []string{"a", "b c"})
	var nilInt *int
	sameStyle(t, "limit", nilInt)
}

// FuzzStyleParam compares styleParam with the runtime on any string,
// integer and time.
func FuzzStyleParam(f *testing.F) {
	f.Add("8847291", int64(200), int64(1764237600), 0, 3600)
	f.Add("a b+c/d%e&f=g", int64(-1), int64(0), 999999999, -19800)
	f.Add("\xff\x00é", int64(1)<<62, int64(-62135596800), 1, 0)
	f.Fuzz(func(t *testing.T, s string, n, unix int64, nsec, offset int) {
		sameStyle(t, "sku", s)
		sameStyle(t, s, s)
		sameStyle(t, "limit", n)
		sameStyle(t, "limit", int(n))
		sameStyle(t, "limit", int32(n))
		if nsec < 0 || nsec >= 1e9 {
			nsec = 0
		}
		zone := time.UTC
		if offset%60 == 0 && offset > -86400 && offset < 86400 {
			zone = time.FixedZone("", offset)
		}
		sameStyle(t, "since", time.Unix(unix, int64(nsec)).In(zone))
	})
}

// TestBuildingARequestAllocates: the POS request's builder, the one every
// risk check sends, stays within its allocation budget (issue 44): 28
// allocations when each parameter went through the runtime's reflection,
// 17 with styleParam.
func TestBuildingARequestAllocates(t *testing.T) {
	const budget = 19
	since := time.Date(2026, 11, 13, 0, 0, 0, 0, time.FixedZone("", 3600))
	limit := 1000
	p := &ListPOSTransactionsParams{SKU: "8847291", Since: since, Limit: &limit}
	ctx := context.Background()
	got := testing.AllocsPerRun(100, func() {
		if _, err := newListPOSTransactionsRequest(ctx, "http://127.0.0.1:8080/", "47", p); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("building a POS request: %.0f allocations", got)
	if got > budget {
		t.Errorf("building a POS request: %.0f allocations, budget %d", got, budget)
	}
}

func BenchmarkBuildPOSRequest(b *testing.B) {
	since := time.Date(2026, 11, 13, 0, 0, 0, 0, time.FixedZone("", 3600))
	limit := 1000
	p := &ListPOSTransactionsParams{SKU: "8847291", Since: since, Limit: &limit}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newListPOSTransactionsRequest(ctx, "http://127.0.0.1:8080/", "47", p); err != nil {
			b.Fatal(err)
		}
	}
}
