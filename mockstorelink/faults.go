package mockstorelink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultKind names one way the mock misbehaves on purpose.
type FaultKind string

// Fault kinds. The first group replaces the response before any work; the
// drift group rewrites the mock's validated response on its way out.
const (
	// FaultLatency delays the response by Delay.
	FaultLatency FaultKind = "latency"
	// FaultHang holds the request until the client gives up or Delay passes
	// (default 30 s), then answers 503.
	FaultHang FaultKind = "hang"
	// FaultStatus answers Status (default 503) with an error body.
	FaultStatus FaultKind = "status"
	// FaultRateLimit answers 429 with a Retry-After of RetryAfter seconds
	// (default 1).
	FaultRateLimit FaultKind = "rate_limit"
	// FaultErrorIn200 answers 200 with an error body.
	FaultErrorIn200 FaultKind = "error_in_200"

	// FaultMalformedJSON cuts the response body in half.
	FaultMalformedJSON FaultKind = "malformed_json"
	// FaultOversized pads the JSON body with Bytes bytes (default 8 MiB).
	FaultOversized FaultKind = "oversized"
	// FaultDriftRenameField renames a required field of a success.
	FaultDriftRenameField FaultKind = "drift_rename_field"
	// FaultDriftWrongType changes the JSON type of a field of a success.
	FaultDriftWrongType FaultKind = "drift_wrong_type"
	// FaultDriftMissingField drops a required field of a successful response.
	FaultDriftMissingField FaultKind = "drift_missing_field"
	// FaultDriftFieldValue sets the top-level field Field of a success to
	// the JSON Value.
	FaultDriftFieldValue FaultKind = "drift_field_value"
	// FaultDriftUndeclaredStatus replaces the status with an undeclared
	// Status (default 418), keeping the body.
	FaultDriftUndeclaredStatus FaultKind = "drift_undeclared_status"
	// FaultDriftWrongAuthStatus answers an auth failure with the wrong
	// status: 404 instead of 403, 200 instead of 401 (or Status for both).
	FaultDriftWrongAuthStatus FaultKind = "drift_wrong_auth_status"
)

// FaultKinds lists every fault kind.
var FaultKinds = []FaultKind{
	FaultLatency, FaultHang, FaultStatus, FaultRateLimit, FaultErrorIn200,
	FaultMalformedJSON, FaultOversized, FaultDriftRenameField, FaultDriftWrongType,
	FaultDriftMissingField, FaultDriftFieldValue, FaultDriftUndeclaredStatus, FaultDriftWrongAuthStatus,
}

// Operation ids of the contract, for [Fault.OperationID] and [RequestRecord].
const (
	OpListStores               = "listStores"
	OpGetStore                 = "getStore"
	OpGetInventory             = "getInventory"
	OpListPOSTransactions      = "listPOSTransactions"
	OpCreateReplenishmentOrder = "createReplenishmentOrder"
	OpGetReplenishmentOrder    = "getReplenishmentOrder"
	OpGetSKU                   = "getSKU"
	OpGetSupplier              = "getSupplier"
)

var operationIDs = []string{
	OpListStores, OpGetStore, OpGetInventory, OpListPOSTransactions,
	OpCreateReplenishmentOrder, OpGetReplenishmentOrder, OpGetSKU, OpGetSupplier,
}

// Defaults of the fault parameters.
const (
	DefaultHangBound      = 30 * time.Second
	DefaultOversizedBytes = 8 << 20
)

// Fault is one injected misbehaviour. The zero values of the optional fields
// mean "every route", "every store", the kind's default and "until cleared".
type Fault struct {
	Kind        FaultKind     `json:"kind"`
	OperationID string        `json:"operation_id,omitempty"` // "" = every route; case-insensitive
	StoreID     string        `json:"store_id,omitempty"`     // "" = every store
	Delay       time.Duration `json:"delay,omitempty"`        // latency / hang bound
	Status      int           `json:"status,omitempty"`       // FaultStatus (default 503), drift statuses
	RetryAfter  int           `json:"retry_after,omitempty"`  // seconds, FaultRateLimit
	Count       int           `json:"count,omitempty"`        // times to fire; 0 = until cleared
	Bytes       int           `json:"bytes,omitempty"`        // FaultOversized padding
	// Field and Value are the top-level field a FaultDriftFieldValue sets,
	// and the JSON it sets it to.
	Field string          `json:"field,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// faultJSON is Fault with Delay as a Go duration string.
type faultJSON struct {
	Kind        FaultKind       `json:"kind"`
	OperationID string          `json:"operation_id,omitempty"`
	StoreID     string          `json:"store_id,omitempty"`
	Delay       json.RawMessage `json:"delay,omitempty"`
	Status      int             `json:"status,omitempty"`
	RetryAfter  int             `json:"retry_after,omitempty"`
	Count       int             `json:"count,omitempty"`
	Bytes       int             `json:"bytes,omitempty"`
	Field       string          `json:"field,omitempty"`
	Value       json.RawMessage `json:"value,omitempty"`
}

// MarshalJSON writes Delay as a duration string.
func (f Fault) MarshalJSON() ([]byte, error) {
	j := faultJSON{Kind: f.Kind, OperationID: f.OperationID, StoreID: f.StoreID, Status: f.Status,
		RetryAfter: f.RetryAfter, Count: f.Count, Bytes: f.Bytes, Field: f.Field, Value: f.Value}
	if f.Delay != 0 {
		j.Delay, _ = json.Marshal(f.Delay.String())
	}
	return json.Marshal(j)
}

// UnmarshalJSON accepts Delay as a duration string or nanoseconds, and
// rejects unknown fields.
func (f *Fault) UnmarshalJSON(data []byte) error {
	var j faultJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*f = Fault{Kind: j.Kind, OperationID: j.OperationID, StoreID: j.StoreID, Status: j.Status,
		RetryAfter: j.RetryAfter, Count: j.Count, Bytes: j.Bytes, Field: j.Field, Value: j.Value}
	if len(j.Delay) == 0 || string(j.Delay) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(j.Delay, &s); err == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("fault delay: %w", err)
		}
		f.Delay = d
		return nil
	}
	var ns int64
	if err := json.Unmarshal(j.Delay, &ns); err != nil {
		return errors.New("fault delay: want a duration string such as \"2s\" or nanoseconds")
	}
	f.Delay = time.Duration(ns)
	return nil
}

// Validate reports a fault that could never fire as configured.
func (f Fault) Validate() error {
	if !slices.Contains(FaultKinds, f.Kind) {
		return fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	if f.OperationID != "" && !slices.ContainsFunc(operationIDs, func(op string) bool {
		return strings.EqualFold(op, f.OperationID)
	}) {
		return fmt.Errorf("unknown operation id %q", f.OperationID)
	}
	if f.Delay < 0 || f.Count < 0 || f.RetryAfter < 0 || f.Bytes < 0 {
		return errors.New("fault delay, count, retry_after and bytes must not be negative")
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("fault status %d is not an HTTP status", f.Status)
	}
	if f.Kind == FaultDriftFieldValue && (f.Field == "" || !json.Valid(f.Value)) {
		return errors.New("a drift_field_value fault needs a field and a JSON value")
	}
	return nil
}

// ParseFaults reads and validates a JSON array of faults.
func ParseFaults(data []byte) ([]Fault, error) {
	var faults []Fault
	if err := json.Unmarshal(data, &faults); err != nil {
		return nil, fmt.Errorf("parse faults: %w", err)
	}
	for i, f := range faults {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("fault %d: %w", i, err)
		}
	}
	return faults, nil
}

// activeFault is a fault with its remaining shots.
type activeFault struct {
	Fault
	fired int
}

type faultSet struct {
	mu     sync.Mutex
	faults []*activeFault
}

func (fs *faultSet) set(faults []Fault) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.faults = make([]*activeFault, len(faults))
	for i, f := range faults {
		fs.faults[i] = &activeFault{Fault: f}
	}
}

func (fs *faultSet) list() []Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]Fault, 0, len(fs.faults))
	for _, f := range fs.faults {
		if f.Count == 0 || f.fired < f.Count {
			out = append(out, f.Fault)
		}
	}
	return out
}

func (f *activeFault) matches(kind FaultKind, op, storeID string) bool {
	return f.Kind == kind &&
		(f.Count == 0 || f.fired < f.Count) &&
		(f.OperationID == "" || strings.EqualFold(f.OperationID, op)) &&
		(f.StoreID == "" || f.StoreID == storeID)
}

// take fires the first armed fault of a kind that matches the request.
func (fs *faultSet) take(kind FaultKind, op, storeID string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.faults {
		if f.matches(kind, op, storeID) {
			f.fired++
			return f.Fault, true
		}
	}
	return Fault{}, false
}

// armed reports whether a fault of the kinds could fire, without firing.
func (fs *faultSet) armed(op, storeID string, kinds ...FaultKind) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.faults {
		for _, k := range kinds {
			if f.matches(k, op, storeID) {
				return true
			}
		}
	}
	return false
}

// drift says, per operation, which top-level field of a successful response
// each drift fault touches.
type drift struct {
	rename, renameTo string
	wrongType        string
	missing          string
}

var drifts = map[string]drift{
	OpListStores:               {rename: "stores", renameTo: "items", wrongType: "stores", missing: "stores"},
	OpGetStore:                 {rename: "opening_hours", renameTo: "openingHours", wrongType: "store_id", missing: "timezone"},
	OpGetInventory:             {rename: "on_hand_units", renameTo: "on_hand", wrongType: "on_hand_units", missing: "counted_at"},
	OpListPOSTransactions:      {rename: "transactions", renameTo: "items", wrongType: "total_count", missing: "total_count"},
	OpCreateReplenishmentOrder: {rename: "order_id", renameTo: "id", wrongType: "quantity_units", missing: "expected_arrival"},
	OpGetReplenishmentOrder:    {rename: "order_id", renameTo: "id", wrongType: "quantity_units", missing: "expected_arrival"},
	OpGetSKU:                   {rename: "case_pack", renameTo: "pack_size", wrongType: "chilled", missing: "supplier_id"},
	OpGetSupplier:              {rename: "lead_time_days", renameTo: "lead_time", wrongType: "lead_time_days", missing: "lead_time_days"},
}

// wrongTyped returns the value with another JSON type.
func wrongTyped(v any) any {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case string:
		if _, err := strconv.ParseInt(x, 10, 64); err == nil {
			return json.Number(x)
		}
		return []string{x}
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
