package console

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

func (h *handler) inbox(w http.ResponseWriter, r *http.Request, q *request) {
	list, err := h.b.Inbox(r.Context(), q.approver)
	if h.backendError(w, r, q, "inbox", err) {
		return
	}
	for i := range list {
		list[i] = list[i].clean()
	}
	p := q.base("Inbox")
	p.Data = list
	h.render(w, r, http.StatusOK, "inbox.html", p)
}

// orderView is the order page's data.
type orderView struct {
	OrderDetail
	Quantity string
	// Open is true while the order can still be decided.
	Open bool
	// CanApprove is true when it is open and this console can send it;
	// only then does the page offer the approval.
	CanApprove bool
	// Decided words the decision of an order that is no longer open.
	Decided string
	// Shelf is the time to stockout.
	Shelf shelfView
	Chart *chart
	// RejectError explains a refused rejection; RejectReason refills the
	// box.
	RejectError, RejectReason string
	// Stuck: sending for longer than a send takes; a person must check
	// StoreLink (the runbook's step).
	Stuck bool
}

// stuckAfter is how long an order may be sending before its page shows the
// runbook step: one StoreLink request (at most a minute) plus ledger
// retries.
const stuckAfter = 2 * time.Minute

// stuck reports whether an order in status s since at is stuck.
func stuck(s Status, at, now time.Time) bool {
	return s == StatusSending && !at.IsZero() && now.Sub(at) > stuckAfter
}

func (h *handler) orderPage(w http.ResponseWriter, r *http.Request, q *request, status int, rejectErr, reason string) {
	d, err := h.b.Order(r.Context(), q.approver, r.PathValue("id"))
	if h.backendError(w, r, q, "order", err) {
		return
	}
	d = d.clean()
	now := h.now()
	v := orderView{
		OrderDetail:  d,
		Quantity:     quantity(d.QuantityUnits, d.CasePack),
		Open:         d.Status == StatusPending && (d.ExpiresAt.IsZero() || now.Before(d.ExpiresAt)),
		Shelf:        shelf(now, d.Stockout),
		Chart:        buildChart(d),
		RejectError:  rejectErr,
		RejectReason: reason,
	}
	v.CanApprove = v.Open && d.NotSending == ""
	if !v.Open {
		v.Decided = decidedText(d)
	}
	if d.Decision != nil {
		v.Stuck = stuck(d.Status, d.Decision.At, now)
	}
	p := q.base(d.ProductName)
	p.Data = v
	h.render(w, r, status, "order.html", p)
}

func (h *handler) order(w http.ResponseWriter, r *http.Request, q *request) {
	h.orderPage(w, r, q, http.StatusOK, "", "")
}

// outcomeView is the page after a decision.
type outcomeView struct {
	ApprovalID string
	Heading    string
	Message    string
	// Kind styles the notice: ok, warn or error.
	Kind string
}

func (h *handler) approve(w http.ResponseWriter, r *http.Request, q *request) {
	id := r.PathValue("id")
	// One approval at a time per id in this process, so a double-click's
	// second POST finds the first outcome. The backend's single use
	// covers other processes.
	unlock := h.approvals.lock(id)
	defer unlock()
	o, ok := h.approvals.recall(id, q.approver.Name)
	if !ok {
		var err error
		o, err = h.b.Approve(r.Context(), q.approver, id)
		var decided *DecidedError
		switch {
		case errors.Is(err, ErrLapsed):
			o = Outcome{Kind: OutcomeLapsed}
		case errors.As(err, &decided):
			o = Outcome{Kind: OutcomeAlreadyDecided, Prior: decided.Status, OrderID: decided.OrderID, DecidedBy: decided.DecidedBy, DecidedAt: decided.DecidedAt}
		case h.backendError(w, r, q, "approve", err):
			return
		}
		if o.Kind == OutcomeRaised || o.Kind == OutcomeUnknown {
			h.approvals.remember(id, q.approver.Name, o)
		}
	}
	status, v := approveOutcome(o.clean(), h.now())
	v.ApprovalID = id
	p := q.base(v.Heading)
	p.Data = v
	h.render(w, r, status, "outcome.html", p)
}

// approveOutcome words an approval's outcome for the approver.
func approveOutcome(o Outcome, now time.Time) (int, outcomeView) {
	switch o.Kind {
	case OutcomeRaised:
		msg := "StoreLink accepted the order as " + o.OrderID
		if o.OrderStatus != "" {
			msg += " (" + o.OrderStatus + ")"
		}
		if !o.ExpectedArrival.IsZero() {
			msg += "; expected " + when(o.ExpectedArrival)
		}
		return http.StatusOK, outcomeView{Heading: "Order raised: " + o.OrderID, Message: msg + ".", Kind: "ok"}
	case OutcomeUnknown:
		return http.StatusOK, outcomeView{Heading: "Sent, outcome unknown", Kind: "warn",
			Message: "The order was sent, but StoreLink's answer was lost: it may exist. Do not approve it again; check its status first."}
	case OutcomeLapsed:
		return http.StatusConflict, outcomeView{Heading: "Lapsed, nothing was sent", Kind: "warn",
			Message: "The approval ran out before it was sent. If the order is still needed, ask for it to be staged again."}
	case OutcomeAlreadyDecided:
		return http.StatusOK, decidedView(o.Prior, o.OrderID, o.DecidedBy, o.DecidedAt, now)
	case OutcomeRefused:
		reason := o.Reason
		if reason == "" {
			reason = "the server refused to send it"
		}
		return http.StatusConflict, outcomeView{Heading: "Not sent", Kind: "error", Message: "Nothing was raised: " + reason + "."}
	}
	return http.StatusInternalServerError, outcomeView{Heading: "Outcome unknown", Kind: "error",
		Message: fmt.Sprintf("The server answered with an outcome this page does not know (%q). Check the order's status before doing anything else.", o.Kind)}
}

// resolveStep is the runbook step for an interrupted send
// (docs/operations.md).
const resolveStep = "Ask Korral IT whether StoreLink holds it, then record what they find with storelink-mcp approvals resolve (--raised ORDER_ID, or --not-raised); do not approve it again."

// decidedView words an order somebody decided before this request.
func decidedView(prior Status, orderID, by string, at, now time.Time) outcomeView {
	byText := ""
	if by != "" {
		byText = " by " + by
	}
	if !at.IsZero() {
		byText += " at " + when(at)
	}
	switch prior {
	case StatusRaised:
		return outcomeView{Heading: "Already approved as " + orderID, Kind: "ok",
			Message: "This order was approved" + byText + " and raised as " + orderID + ". Nothing more was sent."}
	case StatusSending:
		if stuck(prior, at, now) {
			return outcomeView{Heading: "Approved, send interrupted", Kind: "error",
				Message: "This order was approved" + byText + ", but its send has not finished after " + stuckAfter.String() + ": the process sending it most likely stopped, and the order may or may not be at StoreLink. Nothing more was sent. " + resolveStep}
		}
		return outcomeView{Heading: "Already approved", Kind: "warn",
			Message: "This order was approved" + byText + " and is still being sent, so its outcome is not known yet. Nothing more was sent; reload its page in a moment."}
	case StatusUnknown:
		return outcomeView{Heading: "Already approved, outcome unknown", Kind: "warn",
			Message: "This order was approved" + byText + " and sent, but StoreLink's answer was lost. Nothing more was sent; check its status first."}
	case StatusFailed:
		return outcomeView{Heading: "Already approved, refused by StoreLink", Kind: "error",
			Message: "This order was approved" + byText + ", and StoreLink refused it. Nothing more was sent."}
	case StatusRejected:
		return outcomeView{Heading: "Already rejected", Kind: "warn",
			Message: "This order was rejected" + byText + ". Nothing was sent."}
	case StatusLapsed:
		return outcomeView{Heading: "Lapsed, nothing was sent", Kind: "warn",
			Message: "The approval ran out before anybody decided. Nothing was sent."}
	}
	return outcomeView{Heading: "Already decided", Kind: "warn", Message: "Somebody decided this order already. Nothing more was sent."}
}

// decidedText words what became of an order that is no longer open: who
// decided, when, and the outcome.
func decidedText(d OrderDetail) string {
	var by, at, orderID, note string
	if c := d.Decision; c != nil {
		if c.By != "" {
			by = " by " + c.By
		}
		if !c.At.IsZero() {
			at = " at " + when(c.At)
		}
		orderID, note = c.OrderID, c.Note
	}
	switch d.Status {
	case StatusRaised:
		return "Approved" + by + at + ". StoreLink raised it as order " + orderID + "."
	case StatusSending:
		return "Approved" + by + at + ", and being sent to StoreLink."
	case StatusUnknown:
		return "Approved" + by + at + " and sent, but StoreLink's answer was lost: it may exist. Check its status before anything else."
	case StatusFailed:
		s := "Approved" + by + at + ", and StoreLink refused it; nothing was raised."
		if note != "" {
			s += " StoreLink said: " + note
		}
		return s
	case StatusRejected:
		s := "Rejected" + by + at + "; nothing was sent."
		if note != "" {
			s += " Reason: " + note
		}
		return s
	case StatusLapsed:
		return "Lapsed" + at + ": nobody decided in time, and nothing was sent."
	}
	return "Lapsed at " + when(d.ExpiresAt) + ": nobody decided in time, and nothing was sent. It can no longer be approved."
}

// lateRejectView words a rejection that lost to another decision.
func lateRejectView(d *DecidedError, now time.Time) outcomeView {
	c := Outcome{OrderID: d.OrderID, DecidedBy: d.DecidedBy}.clean()
	v := decidedView(d.Status, c.OrderID, c.DecidedBy, d.DecidedAt, now)
	switch d.Status {
	case StatusRaised, StatusSending, StatusUnknown, StatusFailed:
		v.Heading = "Not rejected: " + strings.ToLower(v.Heading[:1]) + v.Heading[1:]
		v.Message += " Your rejection came too late and changed nothing."
	case StatusRejected:
		v.Message += " Your rejection changed nothing more."
	}
	return v
}

func (h *handler) reject(w http.ResponseWriter, r *http.Request, q *request) {
	id := r.PathValue("id")
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	switch {
	case reason == "":
		h.orderPage(w, r, q, http.StatusBadRequest, "Write a reason: the requester reads it. Nothing was rejected.", "")
		return
	case utf8.RuneCountInString(reason) > maxReasonLen:
		h.orderPage(w, r, q, http.StatusBadRequest,
			fmt.Sprintf("The reason is longer than %d characters. Nothing was rejected.", maxReasonLen), reason)
		return
	}
	unlock := h.approvals.lock(id)
	defer unlock()
	err := h.b.Reject(r.Context(), q.approver, id, reason)
	var v outcomeView
	status := http.StatusOK
	var decided *DecidedError
	switch {
	case err == nil:
		v = outcomeView{Heading: "Rejected", Kind: "ok", Message: "The order was rejected and nothing was sent. Your reason: " + shown(reason)}
	case errors.Is(err, ErrLapsed):
		status, v = http.StatusConflict, outcomeView{Heading: "Lapsed, nothing was sent", Kind: "warn",
			Message: "The approval ran out before your rejection; nothing was sent, and there is nothing left to reject."}
	case errors.As(err, &decided):
		status, v = http.StatusConflict, lateRejectView(decided, h.now())
	case h.backendError(w, r, q, "reject", err):
		return
	}
	v.ApprovalID = id
	p := q.base(v.Heading)
	p.Data = v
	h.render(w, r, status, "outcome.html", p)
}

func (h *handler) history(w http.ResponseWriter, r *http.Request, q *request) {
	list, err := h.b.History(r.Context(), q.approver)
	if h.backendError(w, r, q, "history", err) {
		return
	}
	for i := range list {
		list[i] = list[i].clean()
	}
	p := q.base("History")
	p.Data = list
	h.render(w, r, http.StatusOK, "history.html", p)
}

type auditView struct {
	Day   string
	Rows  []AuditRow
	Error string
}

func (h *handler) audit(w http.ResponseWriter, r *http.Request, q *request) {
	p := q.base("Audit")
	raw := strings.TrimSpace(r.URL.Query().Get("day"))
	day := h.now().UTC().Truncate(24 * time.Hour)
	if raw != "" {
		t, err := time.Parse("2006-01-02", raw)
		if err != nil {
			p.Data = auditView{Day: day.Format("2006-01-02"), Error: "Pick a day as YYYY-MM-DD."}
			h.render(w, r, http.StatusBadRequest, "audit.html", p)
			return
		}
		day = t
	}
	rows, err := h.b.AuditDay(r.Context(), q.approver, day)
	if h.backendError(w, r, q, "audit", err) {
		return
	}
	for i := range rows {
		rows[i] = cleanAuditRow(rows[i])
	}
	p.Data = auditView{Day: day.Format("2006-01-02"), Rows: rows}
	h.render(w, r, http.StatusOK, "audit.html", p)
}

// approvalGuard serialises decisions per approval id in this process and
// remembers sent orders, so a double-click or reload shows "already
// approved" without a second send.
type approvalGuard struct {
	mu    sync.Mutex
	locks map[string]*approvalLock
	sent  map[string]sentApproval
	order []string
}

type approvalLock struct {
	mu      sync.Mutex
	waiters int
}

type sentApproval struct {
	approver string
	outcome  Outcome
}

// maxRemembered bounds the memory of sent approvals.
const maxRemembered = 4096

func newApprovalGuard() *approvalGuard {
	return &approvalGuard{locks: map[string]*approvalLock{}, sent: map[string]sentApproval{}}
}

func (g *approvalGuard) lock(id string) (unlock func()) {
	g.mu.Lock()
	l := g.locks[id]
	if l == nil {
		l = &approvalLock{}
		g.locks[id] = l
	}
	l.waiters++
	g.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		g.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(g.locks, id)
		}
		g.mu.Unlock()
	}
}

// recall returns an approval this process sent for the same approver, as
// already decided. Other approvers ask the backend, which checks scope.
func (g *approvalGuard) recall(id, approver string) (Outcome, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sent[id]
	if !ok || s.approver != approver {
		return Outcome{}, false
	}
	prior := StatusRaised
	if s.outcome.Kind == OutcomeUnknown {
		prior = StatusUnknown
	}
	return Outcome{Kind: OutcomeAlreadyDecided, Prior: prior, OrderID: s.outcome.OrderID, DecidedBy: approver}, true
}

func (g *approvalGuard) remember(id, approver string, o Outcome) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.sent[id]; !ok {
		g.order = append(g.order, id)
	}
	g.sent[id] = sentApproval{approver: approver, outcome: o}
	for len(g.order) > maxRemembered {
		delete(g.sent, g.order[0])
		g.order = g.order[1:]
	}
}
