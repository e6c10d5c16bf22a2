// Package apperr is the MCP server's closed error taxonomy: a code, a
// message and a remediation for the model. Internal detail goes in Cause,
// which must reach only the log, never the model.
package apperr

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Code is one member of the closed set of error codes a tool may return.
type Code string

// The closed set. Adding a code is a contract change: update Codes,
// DefaultRemediation and the docs together.
const (
	// InvalidArgument: a tool argument is malformed or out of range.
	InvalidArgument Code = "INVALID_ARGUMENT"
	// StoreIDRequired: several stores are authorized and store_id was omitted.
	StoreIDRequired Code = "STORE_ID_REQUIRED"
	// StoreNotAuthorized: the store is not in this deployment's keyring; the
	// request was rejected locally and never sent upstream.
	StoreNotAuthorized Code = "STORE_NOT_AUTHORIZED"
	// AuthKeyInvalid: StoreLink refused the store's key (rotated or revoked).
	AuthKeyInvalid Code = "AUTH_KEY_INVALID"
	// NotFound: StoreLink does not know the store, SKU, supplier or order.
	NotFound Code = "NOT_FOUND"
	// UpstreamRejected: StoreLink refused the request on a business rule (HTTP 422).
	UpstreamRejected Code = "UPSTREAM_REJECTED"
	// RateLimited: StoreLink asked us to slow down; see RetryAfterSeconds.
	RateLimited Code = "RATE_LIMITED"
	// UpstreamUnavailable: StoreLink is down, failing, or the circuit breaker is open.
	UpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	// UpstreamTimeout: a read did not complete in time.
	UpstreamTimeout Code = "UPSTREAM_TIMEOUT"
	// UpstreamContractError: StoreLink answered outside its contract (for
	// example HTTP 200 with an error body, or a body that fails the schema).
	UpstreamContractError Code = "UPSTREAM_CONTRACT_ERROR"
	// WriteOutcomeUnknown: a write may or may not have taken effect.
	WriteOutcomeUnknown Code = "WRITE_OUTCOME_UNKNOWN"
	// WritesDisabled: the deployment does not allow writes (ALLOW_WRITES).
	WritesDisabled Code = "WRITES_DISABLED"
	// OrderLimitExceeded: the quantity is above the deployment's MAX_ORDER_UNITS.
	OrderLimitExceeded Code = "ORDER_LIMIT_EXCEEDED"
	// OrderQuantityRefused: the quantity breaks a rule StoreLink enforces
	// (below the supplier's minimum order), so the confirm was refused
	// locally: nothing was sent or recorded, and the idempotency key is free.
	OrderQuantityRefused Code = "ORDER_QUANTITY_REFUSED"
	// IdempotencyKeyReused: an idempotency key already names a different order
	// request; replaying it would silently return the other order.
	IdempotencyKeyReused Code = "IDEMPOTENCY_KEY_REUSED"
	// OrderInFlight: the same order request (store, SKU, quantity, reason) is
	// being sent, or was sent with an unknown outcome, under another
	// idempotency key; sending it again could raise it twice.
	OrderInFlight Code = "ORDER_IN_FLIGHT"
	// StateUnavailable: the state database (ledger, approvals, audit trail)
	// could not be reached; nothing new was recorded or sent. It passes once
	// the database is back, without a restart.
	StateUnavailable Code = "STATE_UNAVAILABLE"
	// InternalError: a fault in this server; details are in the log under the
	// incident id.
	InternalError Code = "INTERNAL_ERROR"

	// Host consent refusals (WRITE_APPROVAL=host): nothing was sent or
	// recorded, and the idempotency key is not spent.

	// HostConsentDeclined: the person at the host declined the order.
	HostConsentDeclined Code = "HOST_CONSENT_DECLINED"
	// HostConsentCancelled: the person dismissed the question without an answer.
	HostConsentCancelled Code = "HOST_CONSENT_CANCELLED"
	// HostConsentQuantityMismatch: the quantity typed is not the order's.
	HostConsentQuantityMismatch Code = "HOST_CONSENT_QUANTITY_MISMATCH"
	// HostConsentStateInvalid: the echoed requestState is not one this
	// deployment sealed (altered, truncated, or sealed with another key).
	HostConsentStateInvalid Code = "HOST_CONSENT_STATE_INVALID"
	// HostConsentStateExpired: the requestState is older than its expiry.
	HostConsentStateExpired Code = "HOST_CONSENT_STATE_EXPIRED"
	// HostConsentStateReplayed: the requestState was used once already.
	HostConsentStateReplayed Code = "HOST_CONSENT_STATE_REPLAYED"
	// HostConsentStateMismatch: the requestState was sealed for another order.
	HostConsentStateMismatch Code = "HOST_CONSENT_STATE_MISMATCH"
	// HostConsentUnavailable: the host cannot ask its user (no form
	// elicitation), so no person can confirm the order here.
	HostConsentUnavailable Code = "HOST_CONSENT_UNAVAILABLE"
)

var codes = []Code{
	InvalidArgument, StoreIDRequired, StoreNotAuthorized, AuthKeyInvalid, NotFound,
	UpstreamRejected, RateLimited, UpstreamUnavailable, UpstreamTimeout,
	UpstreamContractError, WriteOutcomeUnknown, WritesDisabled, OrderLimitExceeded,
	OrderQuantityRefused, IdempotencyKeyReused, OrderInFlight, StateUnavailable, InternalError,
	HostConsentDeclined, HostConsentCancelled, HostConsentQuantityMismatch, HostConsentStateInvalid,
	HostConsentStateExpired, HostConsentStateReplayed, HostConsentStateMismatch, HostConsentUnavailable,
}

// Codes returns the closed set of codes in a stable order, for meta-tests and
// generated documentation. The slice is a copy.
func Codes() []Code { return append([]Code(nil), codes...) }

// Valid reports whether c is a member of the closed set.
func (c Code) Valid() bool {
	for _, k := range codes {
		if c == k {
			return true
		}
	}
	return false
}

// Reach says how far a failed write got, as the upstream adapter classified
// it from what reached StoreLink. The zero value is the safe assumption.
type Reach uint8

const (
	// ReachUnknown: the order may have been raised; it must never be resent
	// without a check.
	ReachUnknown Reach = iota
	// ReachNotSent: StoreLink certainly did not take the order (nothing
	// sent, connection refused, or a rate limit or stale key); the same
	// request may be sent again.
	ReachNotSent
	// ReachRejected: StoreLink definitely refused the order (a validation
	// error or a business rule); sending it again would be refused again.
	ReachRejected
)

// Error is a failure in the taxonomy. Code, Message, Remediation,
// RetryAfterSeconds and IncidentID may be shown to the model; Cause may not.
type Error struct {
	Code        Code
	Message     string
	Remediation string
	// RetryAfterSeconds is how long to wait before retrying; 0 means no advice.
	RetryAfterSeconds int
	// IncidentID ties an INTERNAL_ERROR reported to the model to its log line.
	IncidentID string
	// Reach is how far a failed write got; reads leave it ReachUnknown.
	Reach Reach
	// Broken names, for an UPSTREAM_CONTRACT_ERROR of a read, each broken
	// field as "field: rule (rule id)" (JoinBroken); no StoreLink text.
	Broken []string
	// Cause is internal detail for the log only.
	Cause error
}

// Error returns the code and message only, never the cause.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause so errors.Is and errors.As see through the error.
func (e *Error) Unwrap() error { return e.Cause }

// LogValue includes the cause; logs are for operators, not the model.
func (e *Error) LogValue() slog.Value {
	if e == nil {
		return slog.StringValue("<nil>")
	}
	attrs := []slog.Attr{slog.String("code", string(e.Code)), slog.String("message", e.Message)}
	if e.RetryAfterSeconds > 0 {
		attrs = append(attrs, slog.Int("retry_after_seconds", e.RetryAfterSeconds))
	}
	if e.IncidentID != "" {
		attrs = append(attrs, slog.String("incident_id", e.IncidentID))
	}
	if e.Cause != nil {
		attrs = append(attrs, slog.String("cause", e.Cause.Error()))
	}
	return slog.GroupValue(attrs...)
}

// New returns an error with the given code. An empty remediation becomes
// DefaultRemediation(code).
func New(code Code, message, remediation string) *Error {
	if remediation == "" {
		remediation = DefaultRemediation(code)
	}
	return &Error{Code: code, Message: message, Remediation: remediation}
}

// Wrap is New with an internal cause attached for the log.
func Wrap(code Code, cause error, message, remediation string) *Error {
	e := New(code, message, remediation)
	e.Cause = cause
	return e
}

// Internal reports a fault in this server. The model sees a generic message
// and the incident id; an empty incidentID is replaced by a fresh one.
func Internal(cause error, incidentID string) *Error {
	if incidentID == "" {
		incidentID = NewIncidentID()
	}
	return &Error{
		Code:        InternalError,
		Message:     "internal error, incident " + incidentID,
		Remediation: DefaultRemediation(InternalError),
		IncidentID:  incidentID,
		Cause:       cause,
	}
}

// From turns any error into one of the taxonomy: an *Error in the chain is
// returned as is; anything else is an internal error with a fresh incident
// id. From(nil) is nil.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return Internal(err, "")
}

// CodeOf returns the code of the first *Error in err's chain, InternalError
// for any other error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Code
	}
	return InternalError
}

// NewIncidentID returns a short random hex id that an operator can grep for.
func NewIncidentID() string {
	var b [6]byte
	// crypto/rand.Read never returns an error on supported platforms.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DefaultRemediation returns generic advice for a code; unknown codes get
// the internal-error advice.
func DefaultRemediation(code Code) string {
	switch code {
	case InvalidArgument:
		return "Correct the argument as the tool's input schema describes and call again."
	case StoreIDRequired:
		return "Pass store_id; call korral_list_authorized_stores to see the stores this deployment can query."
	case StoreNotAuthorized:
		return "Use a store_id returned by korral_list_authorized_stores; another store needs its key added to the keyring by an operator."
	case AuthKeyInvalid:
		return "Do not retry: StoreLink refused this store's key, probably after a rotation; ask an operator to update the keyring."
	case NotFound:
		return "Check the id or code for typos; StoreLink does not know it at this store."
	case UpstreamRejected:
		return "Read the message for the business rule StoreLink applied and change the request to satisfy it."
	case RateLimited:
		return "Wait for retry_after_seconds (or a minute if absent) before calling again."
	case UpstreamUnavailable:
		return "StoreLink is unavailable; try again in a minute and tell the user if it persists."
	case UpstreamTimeout:
		return "StoreLink did not answer in time; calling again once is safe for this read."
	case UpstreamContractError:
		return "StoreLink answered outside its contract; do not rely on this data and report it to an operator."
	case WriteOutcomeUnknown:
		return "Do not resubmit yet: call korral_get_order_status or repeat the call with the same idempotency_key to learn whether the order exists."
	case WritesDisabled:
		return "This deployment does not raise orders; show the preview to the user so a person can place the order."
	case OrderLimitExceeded:
		return "Lower quantity_units to the deployment's limit, or ask a person to place a larger order outside this tool."
	case OrderQuantityRefused:
		return "Raise quantity_units to the supplier's minimum order, rounded up to whole cases, agree it with the user, and confirm again; nothing was spent."
	case IdempotencyKeyReused:
		return "Use a new idempotency_key for a different order, or repeat the original request unchanged."
	case OrderInFlight:
		return "Do not resubmit: call korral_get_order_status with the idempotency key in the message; a person must resolve an unknown outcome before the same order can be sent again."
	case StateUnavailable:
		return "The server's database is unreachable; wait a minute and call again with the same arguments and idempotency_key (a replay never orders twice). If an order may already have been sent, call korral_get_order_status first."
	case HostConsentDeclined:
		return "Nothing was sent. Tell the buyer the order was declined; change it only as they say and preview it again."
	case HostConsentCancelled:
		return "Nothing was sent. Ask the buyer whether they want the order; if so, confirm again so the host asks them once more."
	case HostConsentQuantityMismatch:
		return "Nothing was sent. Check the quantity with the buyer; confirm again and have them type the order's quantity in units, or preview a corrected quantity."
	case HostConsentStateInvalid, HostConsentStateMismatch:
		return "Nothing was sent. Confirm again without requestState so the host asks the buyer afresh; never alter or reuse the state of another call."
	case HostConsentStateExpired:
		return "Nothing was sent. The question lapsed; confirm again so the host asks the buyer afresh."
	case HostConsentStateReplayed:
		return "Nothing was sent. Each confirmation is single use; confirm again so the host asks the buyer afresh."
	case HostConsentUnavailable:
		return "Nothing was sent. Use a host that supports form elicitation, or ask Korral IT to run this server with WRITE_APPROVAL=required, where a named approver releases orders out of band."
	default:
		return "Try again; if it happens again, report the incident id to an operator."
	}
}

// MaxBrokenNamed is how many broken fields one answer names; the rest are
// counted.
const MaxBrokenNamed = 5

// JoinBroken is the error of a call whose parallel reads failed in errs
// (nil entries succeeded). The first error decides the code; if it is a
// contract error, its message names the broken fields of every read, up to
// MaxBrokenNamed, and counts the rest (ADR 0030). nil when all succeeded.
func JoinBroken(errs ...error) error {
	var first *Error
	var firstErr error
	var broken []string
	reads := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		if firstErr == nil {
			firstErr = err
			errors.As(err, &first)
		}
		var e *Error
		if errors.As(err, &e) && e.Code == UpstreamContractError && len(e.Broken) > 0 {
			broken = append(broken, e.Broken...)
			reads++
		}
	}
	if first == nil || first.Code != UpstreamContractError || len(first.Broken) == 0 || reads < 2 {
		return firstErr
	}
	named := broken[:min(len(broken), MaxBrokenNamed)]
	msg := fmt.Sprintf("StoreLink's answers to %d reads broke the contract in %d field(s): %s", reads, len(broken), strings.Join(named, "; "))
	if n := len(broken) - len(named); n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	out := Wrap(UpstreamContractError, errors.Join(errs...), msg, first.Remediation)
	out.Broken = broken
	return out
}
