package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Verdict is what replaying one line came to.
type Verdict int

// The verdicts of Settle.
const (
	// Pending: the ledger could not be read or written; try again later.
	Pending Verdict = iota
	// Recorded: the outcome was written to the ledger now.
	Recorded
	// Settled: the ledger already holds the outcome, or has moved past it
	// without contradiction.
	Settled
	// Conflict: the ledger or StoreLink contradicts the line. Nothing is
	// written; a person must look.
	Conflict
	// Unconfirmed: StoreLink could not be asked whether it holds the
	// accepted order. Nothing is written; try again later.
	Unconfirmed
)

// Confirmer reads an accepted order back from StoreLink before a replay
// records it: a line in a file is only a claim.
type Confirmer interface {
	// ConfirmOrder returns nil when StoreLink holds orderID as e's order,
	// a *NotConfirmedError when it does not, and any other error when
	// StoreLink could not be asked.
	ConfirmOrder(ctx context.Context, e state.Entry, orderID string) error
}

// ConfirmFunc is a function as a Confirmer.
type ConfirmFunc func(ctx context.Context, e state.Entry, orderID string) error

// ConfirmOrder calls f.
func (f ConfirmFunc) ConfirmOrder(ctx context.Context, e state.Entry, orderID string) error {
	return f(ctx, e, orderID)
}

// NotConfirmedError is StoreLink's answer that an order is not the entry's.
type NotConfirmedError struct{ Reason string }

func (e *NotConfirmedError) Error() string { return e.Reason }

// cannotConfirm leaves accepted lines for a process that can ask StoreLink.
type cannotConfirm struct{ cause error }

func (c cannotConfirm) ConfirmOrder(context.Context, state.Entry, string) error { return c.cause }

var errNoConfirmer = errors.New("this process does not read orders back from StoreLink; the server (stdio or serve) and doctor do")

// apply is judge's answer when the line is still to be written.
const apply Verdict = -1

// Settle records l in the ledger unless it already holds it, and says which.
// It is idempotent, also across processes. Only Pending comes with an error;
// Conflict comes with the reason. l must be StoreLink's answer as this
// process received it; File.Replay confirms lines read from the file.
func Settle(ctx context.Context, ledger state.Ledger, l Line, now time.Time) (Verdict, string, error) {
	return settle(ctx, ledger, l, nil, now)
}

// settle is Settle; a non-nil confirm must confirm an accepted order first.
func settle(ctx context.Context, ledger state.Ledger, l Line, confirm Confirmer, now time.Time) (Verdict, string, error) {
	var taken *state.OrderIDTakenError
	for try := 0; ; try++ {
		cur, found, err := ledger.Get(ctx, l.IdempotencyKey)
		if err != nil {
			return Pending, "", err
		}
		v, reason := judge(cur, found, l)
		if v != apply {
			return v, reason, nil
		}
		if l.Event == state.EventAccepted && confirm != nil {
			err := confirm.ConfirmOrder(ctx, cur, l.OrderID)
			var not *NotConfirmedError
			switch {
			case errors.As(err, &not):
				return Conflict, fmt.Sprintf("the line says StoreLink accepted order %s under idempotency key %s (%d unit(s) of SKU %s at store %s), but StoreLink does not confirm it: %s; nothing was recorded and the entry stays %s. Find out who wrote the line, check StoreLink, and resolve the entry (storelink-mcp approvals resolve %s --raised ORDER_ID or --not-raised)",
					l.OrderID, l.IdempotencyKey, l.QuantityUnits, l.SKU, l.StoreID, not.Reason, cur.State, l.IdempotencyKey), nil
			case err != nil:
				return Unconfirmed, fmt.Sprintf("order %s under idempotency key %s waits until StoreLink confirms it: %v", l.OrderID, l.IdempotencyKey, err), err
			}
			confirm = nil // confirmed: a second try needs no second read
		}
		_, err = ledger.Apply(ctx, l.IdempotencyKey, l.Event, state.Change{OrderID: l.OrderID, ErrorCode: l.ErrorCode, ErrorMessage: l.ErrorMessage}, now)
		switch {
		case err == nil:
			return Recorded, "", nil
		case errors.Is(err, state.ErrInvalidTransition) && try == 0:
			// The entry changed between read and write: check again.
			continue
		case errors.As(err, &taken):
			// One StoreLink order belongs to one entry; a contradiction
			// for a person, which must not hold up the later lines.
			return Conflict, fmt.Sprintf("StoreLink accepted order %s under idempotency key %s, but the ledger already records that order for idempotency key %s; check StoreLink and resolve the entry (storelink-mcp approvals resolve)",
				l.OrderID, l.IdempotencyKey, taken.Entry.IdempotencyKey), nil
		default:
			return Pending, "", err
		}
	}
}

// judge compares a line with the entry the ledger holds under its key.
func judge(cur state.Entry, found bool, l Line) (Verdict, string) {
	if !found {
		return Conflict, fmt.Sprintf("the ledger holds no entry under idempotency key %s: is this the journal of another state database?", l.IdempotencyKey)
	}
	if cur.StoreID != l.StoreID || cur.SKU != l.SKU || cur.QuantityUnits != l.QuantityUnits {
		return Conflict, fmt.Sprintf("the line is for %d unit(s) of SKU %s at store %s, but the ledger's entry %s is %d unit(s) of SKU %s at store %s",
			l.QuantityUnits, l.SKU, l.StoreID, l.IdempotencyKey, cur.QuantityUnits, cur.SKU, cur.StoreID)
	}
	if cur.State == state.StateSending && cur.UpdatedAt.Equal(l.Attempt) {
		return apply, ""
	}
	if l.Event != state.EventAccepted {
		// No order was left that the ledger must learn of, so an entry
		// that has moved on is right as it stands.
		return Settled, ""
	}
	if cur.State == state.StateRaised && cur.OrderID == l.OrderID {
		return Settled, ""
	}
	held := string(cur.State)
	if cur.OrderID != "" {
		held += " with order " + cur.OrderID
	} else if cur.State == state.StateSending {
		held += " in a later attempt"
	}
	return Conflict, fmt.Sprintf("StoreLink accepted order %s under idempotency key %s (%d unit(s) of SKU %s at store %s), but the ledger holds that key as %s; check StoreLink before the order is raised again, and resolve the entry (storelink-mcp approvals resolve)",
		l.OrderID, l.IdempotencyKey, l.QuantityUnits, l.SKU, l.StoreID, held)
}

// Problem is a line a replay kept because it needs a person.
type Problem struct {
	// Number is the line's number in the file as the replay read it.
	Number int
	Line   Line
	Reason string
}

// Report is what one replay found.
type Report struct {
	Path string
	// Lines counts the lines read, unreadable ones included.
	Lines int
	// Recorded counts the outcomes this replay wrote to the ledger.
	Recorded int
	// Settled counts the lines the ledger already held.
	Settled int
	// Pending are outcomes the ledger could not take yet; Cause says why.
	Pending []Line
	Cause   error
	// Unconfirmed are accepted orders StoreLink could not be asked about;
	// ConfirmCause says why. After the first failure StoreLink is not
	// asked again.
	Unconfirmed  []Problem
	ConfirmCause error
	// Conflicts contradict the ledger; Unreadable are not journal lines.
	Conflicts  []Problem
	Unreadable []Problem
}

// Clean reports whether nothing is left to record or to look at.
func (r Report) Clean() bool {
	return len(r.Pending) == 0 && len(r.Unconfirmed) == 0 && len(r.Conflicts) == 0 && len(r.Unreadable) == 0
}

// Len counts the journal's lines.
func (j *File) Len() (int, error) {
	b, err := j.snapshot()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, raw := range bytes.Split(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(raw)) > 0 {
			n++
		}
	}
	return n, nil
}

// Replay settles every line of the journal and removes the settled ones.
// An accepted order is recorded only once confirm has read it back (lines
// this File appended excepted); with confirm nil they stay unconfirmed.
// After the first ledger or StoreLink failure the rest are left without
// asking again. A replay already running in this process is waited for.
func (j *File) Replay(ctx context.Context, ledger state.Ledger, confirm Confirmer, now time.Time) (Report, error) {
	j.replaying.Lock()
	defer j.replaying.Unlock()
	return j.replay(ctx, ledger, confirm, now)
}

// TryReplay is Replay unless one is already running, then it returns false.
func (j *File) TryReplay(ctx context.Context, ledger state.Ledger, confirm Confirmer, now time.Time) (Report, bool, error) {
	if !j.replaying.TryLock() {
		return Report{Path: j.path}, false, nil
	}
	defer j.replaying.Unlock()
	r, err := j.replay(ctx, ledger, confirm, now)
	return r, true, err
}

// isOwn reports whether this File appended raw itself; forget drops it.
func (j *File) isOwn(raw []byte) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.own[string(raw)]
}

func (j *File) forget(raw []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.own, string(raw))
}

func (j *File) replay(ctx context.Context, ledger state.Ledger, confirm Confirmer, now time.Time) (Report, error) {
	r := Report{Path: j.path}
	if confirm == nil {
		confirm = cannotConfirm{errNoConfirmer}
	}
	read, err := j.snapshot()
	if err != nil {
		return r, err
	}
	var kept []byte
	keep := func(raw []byte) { kept = append(append(kept, raw...), '\n') }
	rest := read
	for len(rest) > 0 {
		raw := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			raw, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		r.Lines++
		var l Line
		if err := json.Unmarshal(raw, &l); err != nil {
			r.Unreadable = append(r.Unreadable, Problem{Number: r.Lines, Reason: "not a JSON object: " + err.Error()})
			keep(raw)
			continue
		}
		if err := l.check(); err != nil {
			r.Unreadable = append(r.Unreadable, Problem{Number: r.Lines, Line: l, Reason: err.Error()})
			keep(raw)
			continue
		}
		v, reason := Pending, ""
		if r.Cause == nil {
			c := confirm
			if r.ConfirmCause != nil {
				c = cannotConfirm{r.ConfirmCause}
			}
			if j.isOwn(raw) {
				c = nil
			}
			v, reason, err = settle(ctx, ledger, l, c, now)
			switch {
			case v == Unconfirmed && r.ConfirmCause == nil:
				r.ConfirmCause = err
			case v == Pending:
				r.Cause = err
			}
		}
		switch v {
		case Recorded:
			r.Recorded++
			j.forget(raw)
		case Settled:
			r.Settled++
			j.forget(raw)
		case Unconfirmed:
			r.Unconfirmed = append(r.Unconfirmed, Problem{Number: r.Lines, Line: l, Reason: reason})
			keep(raw)
		case Conflict:
			r.Conflicts = append(r.Conflicts, Problem{Number: r.Lines, Line: l, Reason: reason})
			keep(raw)
		default:
			r.Pending = append(r.Pending, l)
			keep(raw)
		}
	}
	if err := j.compact(read, kept); err != nil {
		return r, err
	}
	return r, nil
}
