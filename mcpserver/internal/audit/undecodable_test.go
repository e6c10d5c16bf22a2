package audit

import (
	"testing"
)

// paramsCases are tools/call params of every kind: the usual ones the one
// scan reads, and ones it must leave to the decode.
var paramsCases = []struct {
	raw       string
	scanReads bool
}{
	{`{"name":"korral_list_authorized_stores","arguments":{}}`, true},
	{`{"name":"korral_check_stock_risk","arguments":{"store_id":"47","sku":"8847291"},"_meta":{"progressToken":1}}`, true},
	{` { "_meta" : null , "name" : "x" , "arguments" : [1, {"a":"}"}] , "requestState" : "s" } `, true},
	{`{"name":null,"requestState":null,"arguments":null}`, true},
	{`{"name":"a\"b","arguments":"x,y}"}`, true},
	{`{"arguments":12.5e3,"name":"x"}`, true},
	{`{"arguments":true}`, true},
	{`{"arguments":true ,"name":"x"}`, true},
	{`{"arguments":-0.5 }`, true},
	{`{}`, true},
	{`{"name":"x","arguments":{"k":"\u00e9\\"}}`, true},
	// Left to the decode.
	{`{"name":5}`, false},
	{`{"name":"x","name":"y"}`, false},
	{`{"NAME":"x"}`, false},
	{`{"Name":5,"name":"x"}`, false},
	{`{"na\u006de":"x"}`, false},
	{`{"name":"x","inputResponses":{}}`, false},
	{`{"name":"x","inputResponses":null}`, false},
	{`{"name":"x","task":{"ttl":1}}`, false},
	{`{"_meta":[1]}`, false},
	{`{"_meta":"m"}`, false},
	{`{"requestState":7}`, false},
	{`{"name":"x",}`, false},
	{`{"name":"x"`, false},
	{`[1]`, false},
	{`"x"`, false},
	{`null`, false},
	{``, false},
	{`{"name":"x"} {}`, false},
	{`{"námé":"x"}`, false},
	{`{"a\"b":1}`, false},
}

// TestPlainMembersImpliesPlainFields: the one scan reads the usual params,
// leaves the rest to the decode, and never says "plain" where the decode
// would not.
func TestPlainMembersImpliesPlainFields(t *testing.T) {
	for _, c := range paramsCases {
		got := plainMembers([]byte(c.raw))
		if got != c.scanReads {
			t.Errorf("%s: plainMembers %v, want %v", c.raw, got, c.scanReads)
		}
		if got && !plainFields([]byte(c.raw)) {
			t.Errorf("%s: plain to the scan, not to the decode", c.raw)
		}
	}
}

// FuzzPlainMembers holds the one scan to the decode on any params.
func FuzzPlainMembers(f *testing.F) {
	for _, c := range paramsCases {
		f.Add([]byte(c.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if plainMembers(raw) && !plainFields(raw) {
			t.Errorf("%q: plain to the scan, not to the decode", raw)
		}
	})
}
