package state

import (
	"errors"
	"testing"
	"time"
)

func TestAsOfReadsLapsedApprovalsAsExpired(t *testing.T) {
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	s := Entry{IdempotencyKey: "s", StoreID: "47", SKU: "8847291", QuantityUnits: 24, Reason: "gap above threshold (s)",
		State: StateSending, RequestedBy: "claude/session-1", CreatedAt: base}
	e := s
	e.IdempotencyKey, e.Reason = "k", "gap above threshold (k)"
	e.State, e.ApprovalID, e.ApprovalExpiresAt = StatePendingApproval, "ap", base.Add(time.Hour)
	if got := e.AsOf(base.Add(time.Hour - time.Nanosecond)).State; got != StatePendingApproval {
		t.Errorf("before expiry: %s", got)
	}
	if got := e.AsOf(base.Add(time.Hour)).State; got != StateExpired {
		t.Errorf("at expiry: %s", got)
	}
	if got := s.AsOf(base.Add(1000 * time.Hour)).State; got != StateSending {
		t.Errorf("a sending entry changed: %s", got)
	}
}

func TestNormalizeReason(t *testing.T) {
	ok := map[string]string{
		"Sold out by noon":                 "Sold out by noon",
		"  Sold\tout\nby  noon ":           "Sold out by noon",
		"Sold\u00a0out\u2003by\u3000noon":  "Sold out by noon",
		"Cafe\u0301 promo":                 "Café promo", // NFC composes the accent
		"12":                               "12",
		"Máslo došlo, 22 prodáno za 24 h.": "Máslo došlo, 22 prodáno za 24 h.",
	}
	for in, want := range ok {
		got, err := NormalizeReason(in)
		if err != nil || got != want {
			t.Errorf("NormalizeReason(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "   ", "\u00a0\u00a0", "\u3000", // blank in any script
		"\u200b\u200b", "sold\u200bout", // zero-width space (a format character)
		"sold\u2060out", "\ufeffsold", "sold\u202eout", "sold\u00adout", // word joiner, BOM, bidi override, soft hyphen
		"sold\x00out", "sold\x1bout", "sold\u0085\u0007", // control characters
		"!!! ---", "…", // no letter or digit
		"sold\xffout", // not UTF-8
	} {
		if got, err := NormalizeReason(in); !errors.Is(err, ErrReasonInvalid) {
			t.Errorf("NormalizeReason(%q) = %q, %v; want ErrReasonInvalid", in, got, err)
		}
	}
}

func TestFingerprintFoldsLikeTheKey(t *testing.T) {
	a := RequestHash("47", "8847291", 24, "Sold out by noon")
	for _, same := range []string{"sold out by noon", " SOLD  OUT\u00a0BY noon ", "Sold\nout by noon"} {
		if RequestHash("47", "8847291", 24, same) != a {
			t.Errorf("%q fingerprints differently from the same reason", same)
		}
	}
	if RequestHash("47", "8847291", 24, "Cafe\u0301") != RequestHash("47", "8847291", 24, "Café") {
		t.Error("NFC and NFD spellings fingerprint differently")
	}
	if FoldReason(" Sold\u00a0OUT ") != "sold out" {
		t.Errorf("FoldReason = %q", FoldReason(" Sold\u00a0OUT "))
	}
}
