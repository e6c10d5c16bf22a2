package tools

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestSuccessEnvelopeIsWhatSuccessMarshalsTo pins successEnvelope to
// marshalling success[T], with and without the demo notice.
func TestSuccessEnvelopeIsWhatSuccessMarshalsTo(t *testing.T) {
	type answer struct {
		Stores []string `json:"stores"`
		Note   string   `json:"note,omitempty"`
		Count  int      `json:"count"`
	}
	for _, data := range []any{
		&answer{Stores: []string{"47", "102"}, Note: "<b>&\u2028", Count: 2},
		&answer{},
		&struct{}{},
		map[string]any{"z": 1, "a": []any{true, nil}},
	} {
		want, err := json.Marshal(success[any]{OK: true, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		got, err := successEnvelope(data, false)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("successEnvelope(%#v) = %s, %v; want %s", data, got, err, want)
		}
		d, _ := json.Marshal(data)
		withNotice, err := withDemoNotice(d)
		if err != nil {
			t.Fatal(err)
		}
		want, _ = json.Marshal(success[json.RawMessage]{OK: true, Data: withNotice})
		got, err = successEnvelope(data, true)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("successEnvelope(%#v, demo) = %s, %v; want %s", data, got, err, want)
		}
		var back success[map[string]any]
		if err := json.Unmarshal(got, &back); err != nil || !back.OK || back.Data["demo_notice"] != DemoNotice {
			t.Errorf("successEnvelope(%#v, demo) reads back as %+v, %v", data, back, err)
		}
	}
	if _, err := successEnvelope([]int{1}, true); err == nil {
		t.Error("the demo notice was added to data that is not an object")
	}
}
