package apperr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCodesClosedSet(t *testing.T) {
	upper := regexp.MustCompile(`^[A-Z][A-Z_]*[A-Z]$`)
	seen := map[Code]bool{}
	for _, c := range Codes() {
		if seen[c] {
			t.Errorf("code %s listed twice", c)
		}
		seen[c] = true
		if !upper.MatchString(string(c)) {
			t.Errorf("code %q is not UPPER_SNAKE_CASE", c)
		}
		if !c.Valid() {
			t.Errorf("%s.Valid() = false", c)
		}
		r := DefaultRemediation(c)
		if c != InternalError && r == DefaultRemediation(InternalError) {
			t.Errorf("code %s falls back to the internal-error remediation", c)
		}
		if !strings.HasSuffix(r, ".") {
			t.Errorf("remediation for %s is not a sentence: %q", c, r)
		}
	}
	for _, want := range []Code{
		InvalidArgument, StoreIDRequired, StoreNotAuthorized, AuthKeyInvalid, NotFound, UpstreamRejected,
		RateLimited, UpstreamUnavailable, UpstreamTimeout, UpstreamContractError, WriteOutcomeUnknown,
		WritesDisabled, OrderLimitExceeded, OrderQuantityRefused, IdempotencyKeyReused, OrderInFlight, StateUnavailable, InternalError,
		HostConsentDeclined, HostConsentCancelled, HostConsentQuantityMismatch, HostConsentStateInvalid,
		HostConsentStateExpired, HostConsentStateReplayed, HostConsentStateMismatch, HostConsentUnavailable,
	} {
		if !seen[want] {
			t.Errorf("Codes() lacks %s", want)
		}
	}
	if Code("NOPE").Valid() {
		t.Error(`Code("NOPE").Valid() = true`)
	}
	// Codes returns a copy: a caller cannot corrupt the closed set.
	cs := Codes()
	cs[0] = "HACKED"
	if Codes()[0] == "HACKED" {
		t.Error("Codes() exposes its backing array")
	}
}

func TestNewFillsRemediation(t *testing.T) {
	e := New(NotFound, "SKU 1234 is unknown", "")
	want := &Error{Code: NotFound, Message: "SKU 1234 is unknown", Remediation: DefaultRemediation(NotFound)}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	e = New(NotFound, "m", "do this.")
	if e.Remediation != "do this." {
		t.Errorf("explicit remediation replaced: %q", e.Remediation)
	}
}

func TestErrorHidesCause(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:443: key=hunter2")
	e := Wrap(UpstreamUnavailable, secret, "StoreLink is unreachable", "")
	if got, want := e.Error(), "UPSTREAM_UNAVAILABLE: StoreLink is unreachable"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, secret) {
		t.Error("errors.Is does not see the cause through Unwrap")
	}
	if strings.Contains(fmt.Sprint(e), "hunter2") {
		t.Error("fmt.Sprint shows the cause")
	}
}

func TestLogValueShowsCause(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	e := Internal(errors.New("nil map write"), "abc123")
	log.Error("tool.internal", "err", e)
	for _, want := range []string{"err.code=INTERNAL_ERROR", "err.incident_id=abc123", `err.cause="nil map write"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log line %q lacks %q", buf.String(), want)
		}
	}
}

func TestInternal(t *testing.T) {
	cause := errors.New("boom")
	e := Internal(cause, "feed01")
	want := &Error{Code: InternalError, Message: "internal error, incident feed01",
		Remediation: DefaultRemediation(InternalError), IncidentID: "feed01", Cause: cause}
	if diff := cmp.Diff(*want, *e, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("Internal (-want +got):\n%s", diff)
	}
	fresh := Internal(cause, "")
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(fresh.IncidentID) {
		t.Errorf("fresh incident id %q is not 12 hex digits", fresh.IncidentID)
	}
	if !strings.HasSuffix(fresh.Message, fresh.IncidentID) {
		t.Errorf("message %q does not name the incident", fresh.Message)
	}
}

func TestFrom(t *testing.T) {
	if From(nil) != nil {
		t.Error("From(nil) != nil")
	}
	orig := New(RateLimited, "slow down", "")
	orig.RetryAfterSeconds = 30
	wrapped := fmt.Errorf("fetch inventory: %w", orig)
	if got := From(wrapped); got != orig {
		t.Errorf("From(wrapped) = %v, want the original *Error", got)
	}
	plain := io.ErrUnexpectedEOF
	got := From(plain)
	if got.Code != InternalError || got.IncidentID == "" || !errors.Is(got, plain) {
		t.Errorf("From(plain) = %+v, want INTERNAL_ERROR with incident id and cause", got)
	}
	if strings.Contains(got.Message, "unexpected EOF") {
		t.Errorf("internal message leaks the cause: %q", got.Message)
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		err  error
		want Code
	}{
		{nil, ""},
		{errors.New("x"), InternalError},
		{New(NotFound, "m", ""), NotFound},
		{fmt.Errorf("ctx: %w", New(WritesDisabled, "m", "")), WritesDisabled},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestIncidentIDsDiffer(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewIncidentID()
		if seen[id] {
			t.Fatalf("incident id %s repeated within 100 draws", id)
		}
		seen[id] = true
	}
}

func TestUnknownCodeRemediation(t *testing.T) {
	if got := DefaultRemediation("SOMETHING_ELSE"); got != DefaultRemediation(InternalError) {
		t.Errorf("unknown code remediation = %q", got)
	}
}
