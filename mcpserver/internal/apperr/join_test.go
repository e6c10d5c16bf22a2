package apperr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func contractErr(fields ...string) *Error {
	e := New(UpstreamContractError, "StoreLink's answer broke the contract: "+strings.Join(fields, "; "), "report it")
	e.Broken = fields
	return e
}

// TestJoinBrokenNamesEveryReadsFields: the first error's code decides; a
// contract error names the broken fields of every read, five and a count.
func TestJoinBrokenNamesEveryReadsFields(t *testing.T) {
	if JoinBroken(nil, nil) != nil {
		t.Fatal("no error from reads that all succeeded")
	}
	one := contractErr("inventory.on_hand_units: required but missing (rule schema.required)")
	if got := JoinBroken(nil, one, nil); got != one {
		t.Errorf("one read: %v, want its own error", got)
	}
	var fields []string
	for i := range 7 {
		fields = append(fields, fmt.Sprintf("pos.f%d: rule (rule r%d)", i, i))
	}
	got := From(JoinBroken(nil, one, contractErr(fields[:4]...), contractErr(fields[4:]...)))
	if got.Code != UpstreamContractError || !strings.Contains(got.Message, "3 reads broke the contract in 8 field(s)") ||
		!strings.Contains(got.Message, one.Broken[0]) || !strings.Contains(got.Message, fields[3]) ||
		strings.Contains(got.Message, fields[4]) || !strings.HasSuffix(got.Message, "; and 3 more") || got.Remediation != "report it" {
		t.Errorf("joined %q (%s)", got.Message, got.Code)
	}
	// Another code first: it decides.
	timeout := New(UpstreamTimeout, "slow", "wait")
	if got := JoinBroken(timeout, one, contractErr(fields...)); got != timeout {
		t.Errorf("got %v, want the first error", got)
	}
	// A plain error first stays what it was.
	plain := errors.New("boom")
	if got := JoinBroken(plain, one, one); got != plain {
		t.Errorf("got %v", got)
	}
}
