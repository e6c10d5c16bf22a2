package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
)

// journalFix is what an operator does about a journal that cannot be opened.
const journalFix = "point STATE_JOURNAL_PATH at a file of its own on this machine's persistent storage, in a directory this user can write"

// confirmFix is what an operator does about an accepted order StoreLink
// could not be asked about.
const confirmFix = "check that StoreLink answers with this store's key (the upstream and key checks above); the server records the order by itself once StoreLink confirms it, or run doctor again"

// writesPossible reports whether this configuration can send an order, and
// so needs somewhere to keep an outcome the ledger cannot take.
func writesPossible(cfg *config.Config) bool { return cfg.AllowWrites && !cfg.ReadOnly }

// journalError is the exit-2 refusal of a journal that could not be
// opened, with the fix for what was wrong.
func journalError(err error) error {
	fix := journalFix
	var unsafe *journal.UnsafeError
	if errors.As(err, &unsafe) {
		fix = unsafe.Fix
	}
	return fmt.Errorf("configuration: STATE_JOURNAL_PATH: %w; fix: %s", err, fix)
}

// openJournal opens the outcome journal and, when replay is set, replays
// it into the ledger (replayJournal), so outcomes an earlier run could not
// record are recorded before anything else happens. A server opens it
// before its StoreLink client exists and replays it once it does. Where
// orders can be sent the journal must open (else exit 2, before anything
// is served); where they cannot, a journal left from before is still
// replayed, and none is created. A file that breaks the journal's rules
// (journal.Rule) is refused either way.
func (a *App) openJournal(replay bool) error {
	cfg := a.cfg
	if cfg.JournalPath == "" {
		return nil
	}
	if !writesPossible(cfg) {
		if _, err := os.Lstat(cfg.JournalPath); err != nil {
			return nil
		}
	}
	j, err := journal.Open(cfg.JournalPath)
	if err != nil {
		var unsafe *journal.UnsafeError
		if !writesPossible(cfg) && !errors.As(err, &unsafe) {
			a.log.Warn("journal.replay_failed", "journal", cfg.JournalPath, "error", err.Error())
			return nil
		}
		return journalError(err)
	}
	a.recorder = &journal.Recorder{Ledger: a.db, Journal: j, Log: a.log, Now: a.now}
	// Closed in reverse: the drain stops before its file closes.
	a.closes = append(a.closes, j.Close, a.recorder.Close)
	if replay {
		a.replayJournal()
	}
	return nil
}

// replayJournal replays the outcome journal into the ledger. Once the
// StoreLink client exists, an accepted order found in the journal is read
// back from StoreLink before it is recorded (confirmOrders); without one
// (a command that does not talk to StoreLink) such lines wait for a server
// or doctor. Lines StoreLink could not be asked about stay in the journal
// and the entry as it was; the server drains them in the background.
func (a *App) replayJournal() {
	if a.recorder == nil {
		return
	}
	if a.up != nil {
		a.recorder.Confirm = confirmOrders(a.up, a.upstreamID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	_, _ = a.recorder.Replay(ctx) // it logs what it found; pending lines drain on
}

// orderReader is the part of the upstream adapter that reads an order.
type orderReader interface {
	Order(ctx context.Context, storeID, orderID string) (domain.Order, error)
}

// confirmOrders confirms an accepted order of the journal by reading it
// back through up, the upstream adapter of the StoreLink named upstreamID:
// StoreLink must hold the order for the entry's store, SKU and quantity,
// submitted no earlier than the entry (with approvals resolve's margin for
// clocks). StoreLink's "no such order", another request, or an entry sent
// to another StoreLink is a refusal (journal.NotConfirmedError); a StoreLink
// that cannot answer leaves the line to wait.
func confirmOrders(up orderReader, upstreamID string) journal.Confirmer {
	return journal.ConfirmFunc(func(ctx context.Context, e state.Entry, orderID string) error {
		if e.UpstreamID != "" && e.UpstreamID != upstreamID {
			return &journal.NotConfirmedError{Reason: fmt.Sprintf("the entry was sent to the StoreLink at %s, and this process reads orders from %s", e.UpstreamID, orDash(upstreamID))}
		}
		o, err := up.Order(ctx, e.StoreID, orderID)
		if err != nil {
			ae := apperr.From(err)
			if ae.Code == apperr.NotFound {
				return &journal.NotConfirmedError{Reason: fmt.Sprintf("StoreLink answered that store %s holds no order %s (%s)", e.StoreID, orderID, ae.Code)}
			}
			return fmt.Errorf("order %s could not be read at StoreLink (%s: %s)", orderID, ae.Code, ae.Message)
		}
		var diffs []string
		if o.ID != orderID {
			diffs = append(diffs, "StoreLink answered with order "+o.ID)
		}
		if o.StoreID != e.StoreID {
			diffs = append(diffs, fmt.Sprintf("its store is %s, the entry's %s", o.StoreID, e.StoreID))
		}
		if o.SKU != e.SKU {
			diffs = append(diffs, fmt.Sprintf("its SKU is %s, the entry's %s", o.SKU, e.SKU))
		}
		if o.QuantityUnits != e.QuantityUnits {
			diffs = append(diffs, fmt.Sprintf("it is for %d unit(s), the entry for %d", o.QuantityUnits, e.QuantityUnits))
		}
		if earliest := e.CreatedAt.Add(-confirmClockSkew); !o.SubmittedAt.IsZero() && o.SubmittedAt.Before(earliest) {
			diffs = append(diffs, fmt.Sprintf("StoreLink says it was submitted at %s, before the entry was created at %s", o.SubmittedAt.UTC().Format(time.RFC3339), e.CreatedAt.UTC().Format(time.RFC3339)))
		}
		if len(diffs) > 0 {
			return &journal.NotConfirmedError{Reason: fmt.Sprintf("StoreLink's order %s is not this entry's order: %s", orderID, strings.Join(diffs, "; "))}
		}
		return nil
	})
}

// confirmClockSkew is how much earlier than its entry StoreLink may date an
// order and still have it confirmed: the entry is written before the POST,
// so only clocks that disagree make the order look older (as for
// approvals resolve).
const confirmClockSkew = 5 * time.Minute
