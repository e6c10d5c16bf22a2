package replenish

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
)

const (
	// duplicateLookback is how far back the ledger is searched for duplicates.
	duplicateLookback = 14 * 24 * time.Hour
	// maxDuplicateRefresh bounds the status refreshes of one preview.
	maxDuplicateRefresh = 5
)

// Order is an order request as a caller received it.
type Order struct {
	// StoreID is the store, already resolved against the keyring.
	StoreID       string
	SKU           string
	QuantityUnits int64
	// Reason is the buyer's justification (normalised by state.NormalizeReason).
	Reason string
	// IdempotencyKey names the order; "" derives one.
	IdempotencyKey string
	RequestedBy    string
	// Consent asks the person at the host when Gate.HostConsent requires
	// it; nil asks nobody and such an order is refused.
	Consent Consent
}

// Mode says what a Preview or Confirm did.
type Mode string

// The modes of an Outcome.
const (
	// ModePreview: nothing was sent; the outcome is the preview.
	ModePreview Mode = "preview"
	// ModeRaised: the order was sent and StoreLink took it.
	ModeRaised Mode = "raised"
	// ModePendingApproval: the order was staged for a person to release.
	ModePendingApproval Mode = "pending_approval"
	// ModeReplay: the key was seen before; its first outcome is repeated.
	ModeReplay Mode = "replay"
)

// Verdict is the quantity check's judgement of a previewed order.
type Verdict string

// The verdicts of a QuantityCheck.
const (
	// VerdictOK: nothing to remark.
	VerdictOK Verdict = "ok"
	// VerdictReview: the reasons deserve a person's look before confirming.
	VerdictReview Verdict = "review"
	// VerdictRefuse: a confirm would be refused.
	VerdictRefuse Verdict = "refuse"
)

// QuantityCheck is the sanity verdict a buyer reads before confirming.
type QuantityCheck struct {
	Verdict Verdict
	Reasons []string
}

// CoverBand is a range of days of cover.
type CoverBand struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Justification is the snapshot a person needs to judge the order.
type Justification struct {
	OnHandUnits                  int64                 `json:"on_hand_units"`
	EstimatedOnHandNow           int64                 `json:"estimated_on_hand_now"`
	UnitsPerTradingHourLow       *float64              `json:"units_per_trading_hour_low"`
	UnitsPerTradingHourHigh      *float64              `json:"units_per_trading_hour_high"`
	StockoutEarliest             *string               `json:"stockout_earliest"`
	StockoutLatest               *string               `json:"stockout_latest"`
	Confidence                   projection.Confidence `json:"confidence"`
	SupplierLeadTimeDays         *int                  `json:"supplier_lead_time_days"`
	ExpectedArrival              *string               `json:"expected_arrival"`
	DaysOfCoverAfterDelivery     *CoverBand            `json:"days_of_cover_after_delivery"`
	DataQualityFlags             []projection.Flag     `json:"data_quality_flags"`
	WillStockoutBeforeCloseToday projection.Answer     `json:"will_stockout_before_close_today"`
	// Unknown says, for each qualifier StoreLink left out or sent
	// unreadable, what this snapshot does not claim (ADR 0030).
	Unknown []string `json:"unknown,omitempty"`
}

// OpenOrder is an order of the same SKU for the same store that is open or
// pending in this deployment's ledger.
type OpenOrder struct {
	// Reference is StoreLink's order id if raised, else the idempotency key.
	Reference string
	State     state.EntryState
	// Status is StoreLink's current status of a raised order; "" if not read.
	Status        domain.OrderStatus
	QuantityUnits int64
	CreatedAt     time.Time
}

// Sent is an order StoreLink accepted, and how far its recording got.
type Sent struct {
	Order domain.Order
	// Recorded: the ledger holds the order as raised. Otherwise Journaled
	// says the outcome journal holds it, or Conflict names the other
	// outcome the ledger holds (nothing was overwritten).
	Recorded  bool
	Journaled bool
	Conflict  string
}

// Outcome is what a Preview or a Confirm did, for the caller to answer with.
type Outcome struct {
	Mode           Mode
	IdempotencyKey string
	StoreID        string
	SKU            string
	// Request is exactly what is sent, or would be.
	Request domain.OrderRequest
	// ProductName is StoreLink's name of the SKU, as typed there.
	ProductName string

	Assessment    *Assessment
	Justification *Justification
	OpenOrders    []OpenOrder
	QuantityCheck *QuantityCheck
	// RefusedBefore: StoreLink refused this exact request earlier (Entry).
	RefusedBefore bool

	// Entry is the ledger entry staged, sent, replayed or refused before.
	Entry state.Entry
	// Order is the order StoreLink raised, or its current view on replay.
	Order *domain.Order
	Sent  Sent
	// HostConfirmed: the person at the host confirmed it (Gate.HostConsent).
	HostConfirmed bool
}

// Preview runs every check a confirmed order would run and sends nothing.
// A key the ledger already holds replays its outcome instead.
func (w *Workflow) Preview(ctx context.Context, o Order) (*Outcome, error) {
	return w.raise(ctx, o, false)
}

// Confirm sends the order, or in approval mode stages it, after the gate.
// A key the ledger already holds replays its outcome and sends nothing.
func (w *Workflow) Confirm(ctx context.Context, o Order) (*Outcome, error) {
	return w.raise(ctx, o, true)
}

func (w *Workflow) raise(ctx context.Context, o Order, confirm bool) (*Outcome, error) {
	storeID := o.StoreID
	reason, err := state.NormalizeReason(o.Reason)
	if err != nil {
		return nil, apperr.New(apperr.InvalidArgument, "reason: "+err.Error()+"; nothing was sent",
			"Write the buyer's justification in plain words (letters or digits, no invisible characters) and call again.")
	}
	req := domain.OrderRequest{SKU: o.SKU, QuantityUnits: o.QuantityUnits, Reason: reason}
	if confirm {
		// Local backstops first: they need no read.
		if err := w.Gate.Local(o.QuantityUnits); err != nil {
			return nil, keyNotSpent(err)
		}
	}

	key := o.IdempotencyKey
	if key == "" {
		st, err := w.Upstream.Store(ctx, storeID)
		if err != nil {
			return nil, err
		}
		key = deriveIdempotencyKey(storeID, req, localDate(w.now(), st.Timezone))
	}
	out := &Outcome{IdempotencyKey: key, StoreID: storeID, SKU: o.SKU, Request: req}

	prior, found, err := w.Ledger.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	// A request StoreLink never took is treated as new; one it refused
	// still previews, so the buyer sees why.
	again := found && prior.RequestHash == requestHash(storeID, req) &&
		(prior.State == state.StateRetryable || (prior.State == state.StateFailed && !confirm))
	if found && !again {
		return w.replay(ctx, out, prior.AsOf(w.now()))
	}

	if !confirm {
		out, err := w.preview(ctx, out)
		if err == nil && found && prior.State == state.StateFailed {
			out.RefusedBefore, out.Entry = true, prior
		}
		return out, err
	}
	// Refuse before the ledger reserves the key, so the key stays free for
	// the corrected order.
	if err := w.Gate.Check(ctx, w.Upstream, storeID, req.SKU, req.QuantityUnits); err != nil {
		return nil, keyNotSpent(err)
	}
	if w.Gate.RequireApproval {
		return w.stage(ctx, out, o.RequestedBy)
	}
	// Ask the person last, so they are never asked about an order that is
	// then refused; a refusal leaves the key unspent.
	if w.Gate.HostConsent {
		if err := w.askConsent(ctx, o, out); err != nil {
			return nil, err
		}
		out.HostConfirmed = true
	}
	sent, err := w.sendNew(ctx, out, o.RequestedBy)
	return sent, w.inScopeInFlight(err)
}

// deriveIdempotencyKey names a request by what it asks and the store-local
// day (ADR 0006).
func deriveIdempotencyKey(storeID string, req domain.OrderRequest, day string) string {
	h := sha256.Sum256([]byte(strings.Join([]string{"v1", storeID, req.SKU, fmt.Sprint(req.QuantityUnits), state.FoldReason(req.Reason), day}, "\x1f")))
	return "auto-" + hex.EncodeToString(h[:16])
}

func requestHash(storeID string, req domain.OrderRequest) string {
	return state.RequestHash(storeID, req.SKU, req.QuantityUnits, req.Reason)
}

func localDate(now time.Time, tz string) string {
	if loc, err := domain.Location(tz); err == nil {
		now = now.In(loc)
	}
	return now.Format("2006-01-02")
}

// preview runs every check a confirmed call would run and sends nothing.
func (w *Workflow) preview(ctx context.Context, out *Outcome) (*Outcome, error) {
	req := out.Request
	risk, err := w.Assess(ctx, out.StoreID, req.SKU, w.LookbackDays)
	if err != nil {
		return nil, err
	}
	out.Mode = ModePreview
	out.ProductName = risk.Identity.ProductName
	out.Assessment = risk
	out.Justification = justify(risk, req.QuantityUnits)
	if out.OpenOrders, err = w.openOrders(ctx, out.StoreID, req.SKU); err != nil {
		return nil, err
	}
	minimum, err := w.supplierMinimum(ctx, out.StoreID, req.SKU)
	if err != nil {
		return nil, err
	}
	out.QuantityCheck = checkQuantity(risk, req.QuantityUnits, w.Gate.MaxOrderUnits, minimum, out.Justification.DaysOfCoverAfterDelivery)
	return out, nil
}

// SameUpstream reports whether the entry was recorded for the StoreLink
// this workflow reaches; entries without an identity are assumed to be.
func (w *Workflow) SameUpstream(e state.Entry) bool {
	return e.UpstreamID == "" || e.UpstreamID == w.UpstreamID
}

// SameOrder reports whether StoreLink's order is the one the entry raised.
func SameOrder(e state.Entry, o domain.Order) bool {
	return o.StoreID == e.StoreID && o.SKU == e.SKU && o.QuantityUnits == e.QuantityUnits
}

// stage records a confirmed order for a person to release.
func (w *Workflow) stage(ctx context.Context, out *Outcome, requestedBy string) (*Outcome, error) {
	ctx, span := w.span(ctx, "replenish stage", out.StoreID)
	defer span.End()
	req := out.Request
	sku, err := w.Upstream.SKU(ctx, out.StoreID, req.SKU)
	if err != nil {
		return nil, err
	}
	now := w.now()
	e, created, err := w.Ledger.Reserve(ctx, state.Entry{
		IdempotencyKey: out.IdempotencyKey, StoreID: out.StoreID, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason,
		RequestHash: requestHash(out.StoreID, req), State: state.StatePendingApproval,
		ApprovalID: newApprovalID(), ApprovalExpiresAt: now.Add(w.Gate.ApprovalTTL),
		RequestedBy: requestedBy, UpstreamID: w.UpstreamID, CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		return nil, err
	}
	if !created {
		return w.replay(ctx, out, e.AsOf(now))
	}
	out.Mode = ModePendingApproval
	out.ProductName = sku.Name
	out.Entry = e
	return out, nil
}

func newApprovalID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "apr-" + hex.EncodeToString(b[:])
}

// sendNew records the order before the POST, then its outcome. A crash in
// between leaves it in "sending", which a retry reports as unknown.
func (w *Workflow) sendNew(ctx context.Context, out *Outcome, requestedBy string) (*Outcome, error) {
	req := out.Request
	sku, err := w.Upstream.SKU(ctx, out.StoreID, req.SKU)
	if err != nil {
		return nil, err
	}
	now := w.now()
	e, created, err := w.Ledger.Reserve(ctx, state.Entry{
		IdempotencyKey: out.IdempotencyKey, StoreID: out.StoreID, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason,
		RequestHash: requestHash(out.StoreID, req), State: state.StateSending, RequestedBy: requestedBy, UpstreamID: w.UpstreamID,
		CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		return nil, inFlight(err)
	}
	if !created {
		return w.replay(ctx, out, e.AsOf(now))
	}
	out.ProductName = sku.Name
	sent, err := w.send(ctx, w.Upstream, e)
	if err != nil {
		return nil, err
	}
	out.Mode = ModeRaised
	out.Entry = e
	out.Order = &sent.Order
	out.Sent = sent
	return out, nil
}

// send sends an entry in StateSending and records the outcome. Once
// StoreLink has answered, the outcome is kept in the journal until the
// ledger takes it, so an accepted order is returned as Sent, never an error.
func (w *Workflow) send(ctx context.Context, up Upstream, e state.Entry) (Sent, error) {
	ctx, span := w.span(ctx, "replenish send", e.StoreID)
	defer span.End()
	rec := w.recorder()
	req := domain.OrderRequest{SKU: e.SKU, QuantityUnits: e.QuantityUnits, Reason: e.Reason}
	o, err := up.CreateOrder(ctx, e.StoreID, req)
	// The outcome is recorded even if the caller has gone away meanwhile.
	rctx := context.WithoutCancel(ctx)
	if err != nil {
		ae := apperr.From(err)
		ev := state.EventLost
		switch ae.Reach {
		case apperr.ReachNotSent:
			ev = state.EventNotSent
			if e.ApprovalID != "" {
				ev = state.EventUnclaim
			}
		case apperr.ReachRejected:
			ev = state.EventRefused
		}
		res := rec.Record(rctx, journal.Outcome(e, ev, state.Change{ErrorCode: string(ae.Code), ErrorMessage: ae.Message}, w.now()))
		// Copy, so the annotation does not leak into a shared error.
		out := *ae
		switch {
		case ev == state.EventLost:
			out.Message += fmt.Sprintf(" (idempotency key %s)", e.IdempotencyKey)
		case ev == state.EventNotSent && !res.Recorded:
			out.Message += fmt.Sprintf("; StoreLink did not take the order, but the ledger has not recorded that yet: confirm the same request again only once korral_get_order_status shows idempotency key %s as retryable", e.IdempotencyKey)
		case ev == state.EventNotSent:
			out.Message += "; StoreLink did not take the order, so the same request may be confirmed again"
		case ev == state.EventRefused:
			out.Message += "; this idempotency key is spent"
		}
		return Sent{}, &out
	}
	res := rec.Record(rctx, journal.Outcome(e, state.EventAccepted, state.Change{OrderID: o.ID}, w.now()))
	return Sent{Order: o, Recorded: res.Recorded, Journaled: res.Journaled, Conflict: res.Conflict}, nil
}

// replay answers a repeated key with the first outcome. e is the entry as
// it stands now.
func (w *Workflow) replay(ctx context.Context, out *Outcome, e state.Entry) (*Outcome, error) {
	// Another deployment's store: its entry is not the caller's to see.
	if !w.Gate.holds(e.StoreID) {
		return nil, foreignKeyUsed(out.IdempotencyKey)
	}
	if e.RequestHash != requestHash(out.StoreID, out.Request) {
		return nil, apperr.New(apperr.IdempotencyKeyReused,
			fmt.Sprintf("idempotency key %s already names a different order request (store %s, SKU %s, %d units); nothing was sent", e.IdempotencyKey, e.StoreID, e.SKU, e.QuantityUnits),
			"Use a new idempotency key for a different order, or omit it to have one derived.")
	}
	out.Mode = ModeReplay
	out.Entry = e
	switch e.State {
	case state.StateRaised:
		if o, err := w.Upstream.Order(ctx, out.StoreID, e.OrderID); err == nil {
			out.Order = &o
		}
	case state.StatePendingApproval:
	case state.StateSending, state.StateUnknown:
		return nil, apperr.New(apperr.WriteOutcomeUnknown,
			fmt.Sprintf("an earlier attempt with idempotency key %s may or may not have raised the order; nothing was sent now", e.IdempotencyKey),
			"Do not resubmit with a new key. Call korral_get_order_status with this idempotency key, and ask Korral IT to confirm in StoreLink before ordering again.")
	case state.StateFailed:
		return nil, apperr.New(apperr.Code(orDefault(e.ErrorCode, string(apperr.UpstreamRejected))),
			fmt.Sprintf("StoreLink refused this request earlier under idempotency key %s (%s); nothing was sent now", e.IdempotencyKey, e.ErrorMessage),
			"Correct the request as StoreLink's reason says, then preview again; a corrected request gets a new key.")
	case state.StateExpired:
		return nil, apperr.New(apperr.WritesDisabled,
			fmt.Sprintf("the staged order with idempotency key %s lapsed at %s before anyone approved it; nothing was sent", e.IdempotencyKey, e.ApprovalExpiresAt.Format(time.RFC3339)),
			"Tell the buyer; if the order is still wanted, preview it again and confirm it under a new idempotency_key.")
	case state.StateRejected:
		return nil, apperr.New(apperr.WritesDisabled,
			fmt.Sprintf("a person rejected the staged order with idempotency key %s; nothing was sent", e.IdempotencyKey),
			"Tell the buyer; do not resubmit the same order without their decision.")
	default: // retryable under a reused key never reaches here: the fingerprint differs
		return nil, apperr.New(apperr.IdempotencyKeyReused,
			fmt.Sprintf("idempotency key %s is %s", e.IdempotencyKey, e.State),
			"Use a new idempotency key, or omit it to have one derived.")
	}
	return out, nil
}

func orDefault(s, d string) string {
	if s == "" || !apperr.Code(s).Valid() {
		return d
	}
	return s
}

// The ledger may be shared with deployments holding other stores' keys, so
// an entry reached by key or fingerprint may be out of scope. Such an entry
// is never described; the answer says only what the caller must do.

// foreignKeyUsed answers a key naming an out-of-scope entry; the key is the
// caller's own, so naming it reveals nothing.
func foreignKeyUsed(key string) error {
	return apperr.New(apperr.IdempotencyKeyReused,
		fmt.Sprintf("idempotency key %s is already used; nothing was sent", key),
		"Choose another idempotency_key, or omit it to have one derived.")
}

// inFlight turns the ledger's refusal of a second send into the agent's
// answer; the ledger's error stays the cause for inScopeInFlight.
func inFlight(err error) error {
	var fl *state.InFlightError
	if !errors.As(err, &fl) {
		return err
	}
	return apperr.Wrap(apperr.OrderInFlight, err,
		fmt.Sprintf("the same order (store %s, SKU %s, %d units, same reason) is already %s under idempotency key %s; nothing was sent",
			fl.Entry.StoreID, fl.Entry.SKU, fl.Entry.QuantityUnits, fl.Entry.State, fl.Entry.IdempotencyKey),
		fmt.Sprintf("Do not resubmit under any key. Call korral_get_order_status with %s; if its outcome stays unknown, a person must check StoreLink and resolve it (storelink-mcp approvals resolve).", fl.Entry.IdempotencyKey))
}

// inScopeInFlight keeps an in-flight refusal (inFlight) from describing an
// entry of a store outside the keyring; other errors pass through.
func (w *Workflow) inScopeInFlight(err error) error {
	var fl *state.InFlightError
	if !errors.As(err, &fl) || w.Gate.holds(fl.Entry.StoreID) {
		return err
	}
	return apperr.Wrap(apperr.OrderInFlight, err,
		"the same order is already being sent, or its outcome is unknown, under another idempotency key; nothing was sent",
		"Do not resubmit under any key. Ask an operator to check the ledger and resolve the other entry (storelink-mcp approvals resolve).")
}
