package state

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"
)

func TestNormalizeApproverName(t *testing.T) {
	// Composed and decomposed spellings are one name, stored composed.
	got, err := NormalizeApproverName("Nova\u0301kova\u0301")
	if err != nil || got != "Nováková" {
		t.Errorf("NormalizeApproverName(decomposed) = %q, %v; want the NFC form", got, err)
	}
	if ApproverNameKey("NOVÁKOVÁ") != ApproverNameKey("nova\u0301kova\u0301") {
		t.Error("the keys of one name in two cases and forms differ")
	}
	if _, err := NormalizeApproverName(strings.Repeat("ä", MaxApproverNameLen)); err != nil {
		t.Errorf("a name of exactly %d characters: %v", MaxApproverNameLen, err)
	}
	if _, err := NormalizeApproverName("a:b"); !errors.Is(err, ErrApproverInvalid) {
		t.Errorf("a colon: err = %v", err)
	}
}

func TestNormalizeStoreScope(t *testing.T) {
	got, err := NormalizeStoreScope([]string{"102", "47", "9", "47", "100000"})
	if diff := cmp.Diff([]string{"9", "47", "102", "100000"}, got); err != nil || diff != "" {
		t.Errorf("NormalizeStoreScope = %v, %v; want numeric order without repeats", got, err)
	}
	if got, err := NormalizeStoreScope(nil); err != nil || got != nil {
		t.Errorf("NormalizeStoreScope(nil) = %v, %v", got, err)
	}
	if _, err := NormalizeStoreScope([]string{""}); !errors.Is(err, ErrApproverInvalid) {
		t.Errorf("an empty id: err = %v", err)
	}
}
