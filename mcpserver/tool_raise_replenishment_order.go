package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	maxReasonChars = 500
	// duplicateLookback is how far back the ledger is searched for orders
	// of the same SKU at the same store.
	duplicateLookback = 14 * 24 * time.Hour
	// maxDuplicateRefresh bounds the status refreshes of one preview.
	maxDuplicateRefresh = 5
)

type raiseIn struct {
	SKU            string `json:"sku" jsonschema:"SKU code to order"`
	QuantityUnits  int64  `json:"quantity_units" jsonschema:"units to order (not cases)"`
	Reason         string `json:"reason" jsonschema:"the buyer's justification, kept with the order"`
	StoreID        string `json:"store_id,omitempty" jsonschema:"optional if one store is authorized"`
	Confirm        bool   `json:"confirm,omitempty" jsonschema:"true sends; false previews only"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"from the preview; one key never raises two orders"`
}

// sentRequest is the exact request the server sends (or would send).
type sentRequest struct {
	Method string              `json:"method"`
	Path   string              `json:"path"`
	Body   domain.OrderRequest `json:"body"`
}

type coverBand struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// justification is the snapshot a human needs to judge the order.
type justification struct {
	OnHandUnits                  int64                 `json:"on_hand_units"`
	EstimatedOnHandNow           int64                 `json:"estimated_on_hand_now"`
	UnitsPerTradingHourLow       *float64              `json:"units_per_trading_hour_low"`
	UnitsPerTradingHourHigh      *float64              `json:"units_per_trading_hour_high"`
	StockoutEarliest             *string               `json:"stockout_earliest"`
	StockoutLatest               *string               `json:"stockout_latest"`
	Confidence                   projection.Confidence `json:"confidence"`
	SupplierLeadTimeDays         *int                  `json:"supplier_lead_time_days"`
	ExpectedArrival              *string               `json:"expected_arrival"`
	DaysOfCoverAfterDelivery     *coverBand            `json:"days_of_cover_after_delivery"`
	DataQualityFlags             []projection.Flag     `json:"data_quality_flags"`
	WillStockoutBeforeCloseToday projection.Answer     `json:"will_stockout_before_close_today"`
}

type existingOrder struct {
	Reference     string      `json:"reference" jsonschema:"order id, else idempotency key"`
	State         orderStatus `json:"state"`
	QuantityUnits int64       `json:"quantity_units"`
	CreatedAt     string      `json:"created_at"`
}

type quantityCheck struct {
	Verdict verdict  `json:"verdict"`
	Reasons []string `json:"reasons"`
}

type raiseOut struct {
	Mode             raiseMode       `json:"mode"`
	Replayed         bool            `json:"replayed"`
	IdempotencyKey   string          `json:"idempotency_key"`
	StoreID          string          `json:"store_id"`
	SKU              string          `json:"sku"`
	ProductName      string          `json:"product_name,omitempty"`
	Request          sentRequest     `json:"request"`
	Justification    *justification  `json:"justification,omitempty"`
	OpenOrders       []existingOrder `json:"open_orders_same_sku"`
	DuplicateWarning string          `json:"duplicate_warning,omitempty"`
	QuantityCheck    *quantityCheck  `json:"quantity_check,omitempty"`
	WritesEnabled    bool            `json:"writes_enabled"`
	ApprovalRequired bool            `json:"approval_required"`
	MaxOrderUnits    int64           `json:"max_order_units"`
	OrderID          string          `json:"order_id,omitempty"`
	OrderStatus      orderStatus     `json:"order_status,omitempty"`
	ExpectedArrival  string          `json:"expected_arrival,omitempty"`
	ApprovalID       string          `json:"approval_id,omitempty"`
	ApprovalExpires  string          `json:"approval_expires_at,omitempty"`
	NextStep         string          `json:"next_step"`
}

func addRaiseReplenishmentOrder(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[raiseIn, raiseOut]{
		tool: &mcp.Tool{
			Name:        "korral_raise_replenishment_order",
			Title:       "Raise replenishment order",
			Description: raiseDescription(*s.opts.Writes),
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    false,
				DestructiveHint: ptr(false), // it adds an order; it never changes or deletes one
				IdempotentHint:  false,      // two calls with different keys raise two orders
				OpenWorldHint:   ptr(true),
			},
		},
		shape: func(p map[string]*jsonschema.Schema) {
			shapeSKU(p)
			shapeStoreID(p)
			p["quantity_units"].Minimum = ptr(1.0)
			p["quantity_units"].Maximum = ptr(float64(maxPreviewUnits))
			p["reason"].MinLength = ptr(1)
			p["reason"].MaxLength = ptr(maxReasonChars)
			p["reason"].Pattern = `\S`
			p["confirm"].Default = []byte("false")
			p["idempotency_key"].Pattern = idempotencyKeyPattern
		},
		// The definition shows the deployment's ceiling, so a model keeps
		// under it; a call above it still reaches the handler and gets
		// ORDER_LIMIT_EXCEEDED (confirm) or a refusing quantity check
		// (preview), which say what to do, rather than a schema error.
		advertise: func(p map[string]*jsonschema.Schema) {
			p["quantity_units"].Maximum = ptr(float64(min(s.opts.Writes.MaxOrderUnits, maxPreviewUnits)))
		},
		outShape: func(out *jsonschema.Schema) {
			setEnum(out, domain.OrderStatuses(), "data", "order_status")
			// Only open orders are listed.
			setEnum(out, openOrderStatuses(), "data", "open_orders_same_sku", "state")
		},
		handle: s.raiseReplenishmentOrder,
	})
}

// raiseDescription says what confirm does on this deployment. confirm is the
// agent's own assertion; only approval mode puts a person in the loop.
func raiseDescription(w WriteOptions) string {
	d := "Raise a replenishment order. Without confirm it only previews, sending nothing: exact request, stock evidence, days of cover after delivery, open orders, quantity check. " +
		"confirm:true is your judgement, not a person's approval; pass the preview's idempotency_key. "
	switch {
	case !w.AllowWrites:
		return d + "Writes are off here: confirm is refused; show the buyer the preview."
	case w.RequireApproval:
		return d + "Here confirm only stages the order; a person releases it out of band, not you."
	default:
		return d + "Here confirm sends at once, within the unit ceiling."
	}
}

// maxPreviewUnits bounds quantity_units whatever the ceiling: a preview may
// exceed the ceiling (its quantity check says so), not any number.
const maxPreviewUnits = 100000

const idempotencyKeyPattern = "^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$"

func (s *server) raiseReplenishmentOrder(ctx context.Context, c *call, in raiseIn) (*raiseOut, error) {
	w := s.opts.Writes
	c.sku = in.SKU
	storeID, err := s.resolveStore(c, in.StoreID)
	if err != nil {
		return nil, err
	}
	reason, err := state.NormalizeReason(in.Reason)
	if err != nil {
		return nil, apperr.New(apperr.InvalidArgument, "reason: "+err.Error()+"; nothing was sent",
			"Write the buyer's justification in plain words (letters or digits, no invisible characters) and call again.")
	}
	req := domain.OrderRequest{SKU: in.SKU, QuantityUnits: in.QuantityUnits, Reason: reason}
	if in.Confirm {
		// The deployment's backstops come first: they hold whatever the agent asserts.
		if !w.AllowWrites {
			return nil, apperr.New(apperr.WritesDisabled,
				"this deployment does not allow writes (ALLOW_WRITES is not true); nothing was sent",
				"Do not retry. Show the buyer the preview (call without confirm) so a person can raise the order another way.")
		}
		// The ceiling needs no read, so it holds before anything else.
		if r := (quantityLimits{ceiling: w.MaxOrderUnits}).refusals(in.QuantityUnits); len(r) > 0 {
			return nil, keyNotSpent(apperr.New(r[0].code, r[0].message, r[0].remediation))
		}
	}

	key := in.IdempotencyKey
	if key == "" {
		st, err := s.opts.Upstream.Store(ctx, storeID)
		if err != nil {
			return nil, err
		}
		key = deriveIdempotencyKey(storeID, req, localDate(s.opts.Now(), st.Timezone))
	}
	out := &raiseOut{
		IdempotencyKey: key, StoreID: storeID, SKU: in.SKU,
		Request:          sentRequest{Method: "POST", Path: "/v1/stores/" + storeID + "/replenishment", Body: req},
		OpenOrders:       []existingOrder{},
		WritesEnabled:    w.AllowWrites,
		ApprovalRequired: w.RequireApproval,
		MaxOrderUnits:    w.MaxOrderUnits,
	}

	prior, found, err := w.Ledger.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	// A request StoreLink never took is not an outcome to replay: it
	// previews and confirms as if new (the ledger takes the entry over). A
	// request StoreLink refused still previews, so the buyer sees why.
	again := found && prior.RequestHash == requestHash(storeID, req) &&
		(prior.State == state.StateRetryable || (prior.State == state.StateFailed && !in.Confirm))
	if found && !again {
		return s.replay(ctx, c, out, prior.AsOf(s.opts.Now()), req, storeID, in.Confirm)
	}

	if !in.Confirm {
		out, err := s.preview(ctx, c, out, req, storeID)
		if err == nil && found && prior.State == state.StateFailed {
			out.NextStep = fmt.Sprintf("StoreLink refused this exact request earlier (%s); confirming it again would be refused. Correct the request and preview again.", prior.ErrorMessage)
		}
		return out, err
	}
	// What the preview would refuse is refused here, before the ledger
	// reserves the key or anything is sent: the key stays free for the
	// corrected order.
	if err := CheckOrderQuantity(ctx, s.opts.Upstream, storeID, req.SKU, req.QuantityUnits, w.MaxOrderUnits); err != nil {
		return nil, keyNotSpent(err)
	}
	if w.RequireApproval {
		return s.stage(ctx, c, out, req, storeID)
	}
	sent, err := s.send(ctx, c, out, req, storeID)
	return sent, s.inScopeInFlight(err)
}

// deriveIdempotencyKey names an order request by what it asks for and the
// store-local day, so an agent that repeats itself the same day hits the
// ledger instead of StoreLink. See ADR 0006.
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
func (s *server) preview(ctx context.Context, c *call, out *raiseOut, req domain.OrderRequest, storeID string) (*raiseOut, error) {
	w := s.opts.Writes
	risk, err := s.assessRisk(ctx, storeID, req.SKU, s.opts.DefaultLookbackDays)
	if err != nil {
		return nil, err
	}
	out.Mode = modePreview
	out.ProductName = untrusted(risk.Identity.ProductName)
	out.Justification = justify(risk, req.QuantityUnits)
	if err := s.openOrders(ctx, out, storeID, req.SKU); err != nil {
		return nil, err
	}
	minimum, err := s.supplierMinimum(ctx, storeID, req.SKU)
	if err != nil {
		return nil, err
	}
	out.QuantityCheck = checkQuantity(risk, req.QuantityUnits, w.MaxOrderUnits, minimum, out.Justification.DaysOfCoverAfterDelivery)
	switch {
	case out.QuantityCheck.Verdict == verdictRefuse:
		out.NextStep = "Do not confirm: the quantity would be refused. Correct it and preview again."
	case !w.AllowWrites:
		out.NextStep = "Writes are disabled here: show this preview to the buyer; confirm:true would be refused."
	case w.RequireApproval:
		out.NextStep = "If the buyer agrees, call again with confirm:true and this idempotency_key; the order is then staged until a person approves it."
	default:
		out.NextStep = "If the buyer agrees, call again with confirm:true and this idempotency_key."
	}
	c.summary = fmt.Sprintf("Previewed an order of %d unit(s) of %s (SKU %s) for store %s; nothing was sent.", req.QuantityUnits, plain(out.ProductName), req.SKU, storeID)
	return out, nil
}

func justify(risk *riskAssessment, qty int64) *justification {
	r := risk.Risk
	j := &justification{
		OnHandUnits: r.OnHandUnits, EstimatedOnHandNow: r.EstimatedOnHandNow,
		StockoutEarliest: r.ProjectedStockoutWindow.Earliest, StockoutLatest: r.ProjectedStockoutWindow.Latest,
		Confidence: r.Confidence, SupplierLeadTimeDays: r.SupplierLeadTimeDays, ExpectedArrival: r.EarliestReplenishmentArrival,
		WillStockoutBeforeCloseToday: r.WillStockoutBeforeCloseToday, DataQualityFlags: append([]projection.Flag{}, r.DataQualityFlags...),
	}
	if r.UnitsPerTradingHour == nil {
		return j
	}
	j.UnitsPerTradingHourLow, j.UnitsPerTradingHourHigh = ptr(r.UnitsPerTradingHour.Low), ptr(r.UnitsPerTradingHour.High)
	// What is left when the delivery lands, at the slow rate (the case that
	// overstocks), plus the order itself.
	left := float64(max(r.EstimatedOnHandNow, 0))
	if r.EarliestReplenishmentArrival != nil {
		if arrival, err := time.Parse(time.RFC3339, *r.EarliestReplenishmentArrival); err == nil {
			if asOf, err := time.Parse(time.RFC3339, r.AsOf); err == nil && arrival.After(asOf) {
				days := arrival.Sub(asOf).Hours() / 24
				left = math.Max(0, left-r.UnitsPerTradingHour.Low*r.TradingHoursPerDay*days)
			}
		}
	}
	if low, high, ok := r.DaysOfCover(qty + int64(left)); ok {
		j.DaysOfCoverAfterDelivery = &coverBand{Low: round1(low), High: round1(high)}
	}
	return j
}

func round1(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return -1
	}
	return math.Round(x*10) / 10
}

// supplierMinimum is the supplier's minimum order in units (0 for none).
// The risk check has just read the same master data, so the adapter answers
// from its cache.
func (s *server) supplierMinimum(ctx context.Context, storeID, skuCode string) (int64, error) {
	sku, err := s.opts.Upstream.SKU(ctx, storeID, skuCode)
	if err != nil {
		return 0, err
	}
	sup, err := s.opts.Upstream.Supplier(ctx, storeID, sku.SupplierID)
	if err != nil {
		return 0, err
	}
	return sup.MinimumOrderUnit, nil
}

// checkQuantity is the sanity verdict a buyer reads before confirming. It
// refuses what a confirm is refused on: the deployment's ceiling and the
// supplier's minimum order, which StoreLink enforces. Its other findings
// (review) are for the buyer to weigh; they never stop a confirm.
func checkQuantity(risk *riskAssessment, qty, ceiling, minimum int64, cover *coverBand) *quantityCheck {
	q := &quantityCheck{Verdict: verdictOK, Reasons: []string{}}
	review := func(format string, args ...any) {
		q.Reasons = append(q.Reasons, fmt.Sprintf(format, args...))
		if q.Verdict == verdictOK {
			q.Verdict = verdictReview
		}
	}
	id := risk.Identity
	// The refusing verdict is the confirm's own gate (quantity_gate.go), so
	// a preview that says refuse is a confirm that is refused.
	for _, r := range (quantityLimits{ceiling: ceiling, minimum: minimum, casePack: id.CasePack}).refusals(qty) {
		q.Verdict = verdictRefuse
		q.Reasons = append(q.Reasons, r.reason)
	}
	if qty <= ceiling && qty*10 >= ceiling*8 {
		review("%d units is close to this deployment's ceiling of %d", qty, ceiling)
	}
	if id.CasePack > 1 && qty%id.CasePack != 0 {
		review("%d is not a whole number of cases of %d", qty, id.CasePack)
	}
	switch {
	case cover == nil:
		review("the sell rate is unknown, so days of cover cannot be judged")
	default:
		if id.ShelfLifeDays > 0 && cover.Low > float64(id.ShelfLifeDays) {
			review("even at the high sell rate the order lasts %.1f days, beyond the %d-day shelf life", cover.Low, id.ShelfLifeDays)
		} else if id.Chilled && cover.Low > 21 {
			review("%.1f days of cover is a lot for a chilled product; check for a misplaced digit", cover.Low)
		} else if cover.Low > 90 {
			review("%.1f days of cover is more than a quarter's demand", cover.Low)
		}
		if lead := risk.Risk.SupplierLeadTimeDays; lead != nil && cover.High < float64(*lead) {
			review("at the low sell rate the stock lasts only %.1f days after delivery, less than the %d-day lead time of the next order", cover.High, *lead)
		}
	}
	return q
}

// roundUpTo is n rounded up to a whole number of packs.
func roundUpTo(n, pack int64) int64 {
	if pack <= 1 {
		return n
	}
	return (n + pack - 1) / pack * pack
}

// openOrders fills the duplicate warning from this deployment's ledger,
// refreshing the status of raised orders so delivered ones drop out.
func (s *server) openOrders(ctx context.Context, out *raiseOut, storeID, sku string) error {
	entries, err := s.opts.Writes.Ledger.Recent(ctx, storeID, sku, s.opts.Now().Add(-duplicateLookback))
	if err != nil {
		return err
	}
	refreshed := 0
	now := s.opts.Now()
	listed := map[string]bool{}
	for _, e := range entries {
		// Only the caller's own store, and each StoreLink order once: a
		// ledger written before one order id belonged to one entry may hold
		// it twice.
		if e.StoreID != storeID || !s.keyringHolds(e.StoreID) || e.OrderID != "" && listed[e.OrderID] {
			continue
		}
		listed[e.OrderID] = e.OrderID != ""
		e = e.AsOf(now)
		ref, st := e.IdempotencyKey, ledgerStatus(e.State)
		switch e.State {
		case state.StateRaised:
			ref = e.OrderID
			if refreshed < maxDuplicateRefresh && s.sameUpstream(e) {
				refreshed++
				if o, err := s.opts.Upstream.Order(ctx, storeID, e.OrderID); err == nil && sameOrder(e, o) {
					st = storeLinkStatus(o.Status)
				}
			}
			if !st.open() {
				continue
			}
		case state.StateFailed, state.StateRetryable, state.StateRejected, state.StateExpired:
			// Nothing is on its way for these.
			continue
		}
		out.OpenOrders = append(out.OpenOrders, existingOrder{Reference: ref, State: st, QuantityUnits: e.QuantityUnits, CreatedAt: e.CreatedAt.Format(time.RFC3339)})
	}
	if len(out.OpenOrders) > 0 {
		out.DuplicateWarning = fmt.Sprintf("%d order(s) of this SKU for this store are already open or pending; check them before ordering more", len(out.OpenOrders))
	}
	return nil
}

// stage records a confirmed order for a human to release; nothing is sent.
func (s *server) stage(ctx context.Context, c *call, out *raiseOut, req domain.OrderRequest, storeID string) (*raiseOut, error) {
	w := s.opts.Writes
	sku, err := s.opts.Upstream.SKU(ctx, storeID, req.SKU)
	if err != nil {
		return nil, err
	}
	now := s.opts.Now()
	e, created, err := w.Ledger.Reserve(ctx, state.Entry{
		IdempotencyKey: out.IdempotencyKey, StoreID: storeID, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason,
		RequestHash: requestHash(storeID, req), State: state.StatePendingApproval,
		ApprovalID: newApprovalID(), ApprovalExpiresAt: now.Add(w.ApprovalTTL),
		RequestedBy: c.requester(), UpstreamID: w.UpstreamID, CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		return nil, err
	}
	if !created {
		return s.replay(ctx, c, out, e.AsOf(now), req, storeID, true)
	}
	out.Mode = modePendingApproval
	out.ProductName = untrusted(sku.Name)
	out.ApprovalID = e.ApprovalID
	out.ApprovalExpires = e.ApprovalExpiresAt.Format(time.RFC3339)
	out.NextStep = "Nothing was sent. Tell the buyer the order awaits a person's approval (approval id above); follow it with korral_get_order_status using the approval id. You cannot approve it yourself."
	c.summary = fmt.Sprintf("Staged an order of %d unit(s) of %s (SKU %s) for store %s for human approval (%s); nothing was sent.", req.QuantityUnits, sku.Name, req.SKU, storeID, e.ApprovalID)
	return out, nil
}

func newApprovalID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "apr-" + hex.EncodeToString(b[:])
}

// send records the order in the ledger before the POST leaves, then its
// outcome. A crash between the two leaves the entry in "sending", which a
// retry reports as unknown instead of sending again.
func (s *server) send(ctx context.Context, c *call, out *raiseOut, req domain.OrderRequest, storeID string) (*raiseOut, error) {
	w := s.opts.Writes
	sku, err := s.opts.Upstream.SKU(ctx, storeID, req.SKU)
	if err != nil {
		return nil, err
	}
	now := s.opts.Now()
	e, created, err := w.Ledger.Reserve(ctx, state.Entry{
		IdempotencyKey: out.IdempotencyKey, StoreID: storeID, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason,
		RequestHash: requestHash(storeID, req), State: state.StateSending, RequestedBy: c.requester(), UpstreamID: w.UpstreamID,
		CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		return nil, inFlight(err)
	}
	if !created {
		return s.replay(ctx, c, out, e.AsOf(now), req, storeID, true)
	}
	out.ProductName = untrusted(sku.Name)
	sent, sendErr := SendLedgered(ctx, s.opts.Upstream, s.recorder(), e, s.opts.Now)
	if sendErr != nil {
		return nil, sendErr
	}
	o := sent.Order
	out.Mode = modeRaised
	out.OrderID, out.OrderStatus, out.ExpectedArrival = o.ID, storeLinkStatus(o.Status), o.ExpectedArrival.Format(time.RFC3339)
	out.NextStep = "Tell the buyer the order id; follow it with korral_get_order_status."
	c.summary = fmt.Sprintf("Raised order %s: %d unit(s) of %s (SKU %s) for store %s, reason: %s.", o.ID, req.QuantityUnits, sku.Name, req.SKU, storeID, req.Reason)
	if !sent.Recorded {
		// StoreLink holds the order whatever the ledger could record: the
		// answer is the raised one, and next_step says what becomes of the
		// record. (A field of its own would not fit the tools/list budget,
		// ADR 0012; the agent reads next_step.)
		out.NextStep, c.summary = unrecordedNextStep(sent, e.IdempotencyKey), c.summary+" "+unrecordedSummary(sent)
	}
	return out, nil
}

// unrecordedNextStep tells the agent that an order was raised although the
// ledger has not recorded it, and what becomes of the record.
func unrecordedNextStep(sent Sent, key string) string {
	raised := fmt.Sprintf("StoreLink raised order %s: tell the buyer the order id. Do not raise it again. ", sent.Order.ID)
	switch {
	case sent.Conflict != "":
		return raised + fmt.Sprintf("This server's ledger holds another outcome for idempotency key %s, which was not overwritten: ask Korral IT to check it (storelink-mcp doctor names the conflict).", key)
	case sent.Journaled:
		return raised + "This server's ledger could not record it yet (its state database is unreachable or busy); the outcome journal keeps it and records it by itself once the database is back. Until then korral_get_order_status may not find it."
	default:
		return raised + fmt.Sprintf("This server's ledger could not record it and its outcome journal could not keep it: ask Korral IT to record it with storelink-mcp approvals resolve %s --raised %s.", key, sent.Order.ID)
	}
}

func unrecordedSummary(sent Sent) string {
	switch {
	case sent.Conflict != "":
		return "The ledger holds another outcome for it, left as it was: " + sent.Conflict + "."
	case sent.Journaled:
		return "The ledger could not record it yet; the outcome journal holds it."
	default:
		return "Neither the ledger nor the outcome journal could record it."
	}
}

// recorder is where SendLedgered records outcomes: the configured one
// (ledger and outcome journal), else the ledger alone, still with retries.
func (s *server) recorder() *journal.Recorder {
	if r := s.opts.Writes.Recorder; r != nil {
		return r
	}
	return &journal.Recorder{Ledger: s.opts.Writes.Ledger, Log: s.log, Now: s.opts.Now}
}

// inFlight turns the ledger's refusal of a second send of the same request
// into the answer the agent acts on; other errors pass through. The
// ledger's error stays the cause, so that inScopeInFlight can tell whose
// entry it names.
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

// Sent is an order StoreLink accepted, and how far its recording got.
type Sent struct {
	Order domain.Order
	// Recorded: the ledger holds the order as raised. Otherwise the ledger
	// could not take it within the retries (Journaled: the outcome journal
	// holds it and records it once the ledger is back), or it holds another
	// outcome for the entry (Conflict says which; nothing was overwritten).
	Recorded  bool
	Journaled bool
	Conflict  string
}

// SendLedgered sends an order the ledger holds in StateSending and records
// its outcome by what reached StoreLink: accepted (raised), refused
// (failed), not taken (retryable, or back to pending_approval for an
// approved order, so the approval is not consumed) or unknown. It is shared
// by the tool and by the human approval path, so both go through the same
// breaker, ledger and outcome journal, and the entry carries everything
// that is sent.
//
// The outcome is known once StoreLink has answered, so it is never lost
// to a ledger that cannot be reached at that moment: rec keeps it in the
// outcome journal, retries the ledger with backoff, and replays the journal
// later. An accepted order is therefore always returned as Sent, recorded
// or not, never as an error.
func SendLedgered(ctx context.Context, up Upstream, rec *journal.Recorder, e state.Entry, now func() time.Time) (Sent, error) {
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
		res := rec.Record(rctx, journal.Outcome(e, ev, state.Change{ErrorCode: string(ae.Code), ErrorMessage: ae.Message}, now()))
		// A copy, so the annotation does not leak into a shared error value.
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
	res := rec.Record(rctx, journal.Outcome(e, state.EventAccepted, state.Change{OrderID: o.ID}, now()))
	return Sent{Order: o, Recorded: res.Recorded, Journaled: res.Journaled, Conflict: res.Conflict}, nil
}

// replay answers a repeated idempotency key with the first outcome and sends
// nothing.
func (s *server) replay(ctx context.Context, c *call, out *raiseOut, e state.Entry, req domain.OrderRequest, storeID string, confirm bool) (*raiseOut, error) {
	// Another deployment's store: its entry is not the caller's to see.
	if !s.keyringHolds(e.StoreID) {
		return nil, foreignKeyUsed(out.IdempotencyKey)
	}
	if e.RequestHash != requestHash(storeID, req) {
		return nil, apperr.New(apperr.IdempotencyKeyReused,
			fmt.Sprintf("idempotency key %s already names a different order request (store %s, SKU %s, %d units); nothing was sent", e.IdempotencyKey, e.StoreID, e.SKU, e.QuantityUnits),
			"Use a new idempotency key for a different order, or omit it to have one derived.")
	}
	out.Mode = modeReplay
	out.Replayed = true
	switch e.State {
	case state.StateRaised:
		out.OrderID = e.OrderID
		if o, err := s.opts.Upstream.Order(ctx, storeID, e.OrderID); err == nil {
			out.OrderStatus, out.ExpectedArrival = storeLinkStatus(o.Status), o.ExpectedArrival.Format(time.RFC3339)
		}
		out.NextStep = "This order was already raised; nothing was sent now. Follow it with korral_get_order_status."
		c.summary = fmt.Sprintf("Replayed idempotency key %s: order %s was already raised; nothing was sent.", e.IdempotencyKey, e.OrderID)
	case state.StatePendingApproval:
		out.ApprovalID = e.ApprovalID
		out.ApprovalExpires = e.ApprovalExpiresAt.Format(time.RFC3339)
		out.NextStep = "This order already awaits a person's approval; nothing was sent now."
		c.summary = fmt.Sprintf("Replayed idempotency key %s: the order still awaits approval %s.", e.IdempotencyKey, e.ApprovalID)
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
	if !confirm {
		out.NextStep = "Already handled: " + out.NextStep
	}
	return out, nil
}

func orDefault(s, d string) string {
	if s == "" || !apperr.Code(s).Valid() {
		return d
	}
	return s
}

// requester names who asked, for the ledger and the audit trail.
func (c *call) requester() string {
	who := c.client
	if who == "" {
		who = "unknown-client"
	}
	if c.session != "" {
		who += "/" + c.session
	}
	return who
}
