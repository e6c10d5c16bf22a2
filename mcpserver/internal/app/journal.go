package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/doctor"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state/backend"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
)

// writesPossible reports whether this configuration can send an order, and
// so needs somewhere to keep an outcome the ledger cannot take.
func writesPossible(cfg *config.Config) bool { return cfg.AllowWrites && !cfg.ReadOnly }

// journalError is the exit-2 refusal of a journal that could not be
// opened, with the fix for what was wrong.
func journalError(err error) error {
	fix := doctor.JournalFix
	var unsafe *journal.UnsafeError
	if errors.As(err, &unsafe) {
		fix = unsafe.Fix
	}
	return fmt.Errorf("configuration: STATE_JOURNAL_PATH: %w; fix: %s", err, fix)
}

// openJournal opens the outcome journal and, when replay is set, replays it
// into the ledger first. Where orders can be sent the journal must open
// (else exit 2); where they cannot, an existing journal is still replayed
// and none is created. A file that breaks journal.Rule is refused either way.
func (a *App) openJournal(replay bool) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := a.openJournalFile(); err != nil || !replay {
			return err
		}
		return a.replayJournal(ctx)
	}
}

// openJournalFile opens the outcome journal and its recorder.
func (a *App) openJournalFile() error {
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
		return exit2(journalError(err))
	}
	a.recorder = &journal.Recorder{Ledger: a.db, Journal: j, Log: a.log, Now: a.now}
	// Closed in reverse: the drain stops before its file closes.
	a.closes = append(a.closes, j.Close, a.recorder.Close)
	return nil
}

// replayJournal replays the outcome journal into the ledger. With a
// StoreLink client, accepted orders are read back from StoreLink first
// (confirmOrders); without one they wait. Lines StoreLink could not be asked
// about stay in the journal; the server drains them in the background.
func (a *App) replayJournal(context.Context) error {
	if a.recorder == nil {
		return nil
	}
	if a.up != nil {
		a.recorder.Confirm = replenish.ConfirmOrders(a.up, a.upstreamID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), backend.OpenTimeout)
	defer cancel()
	_, _ = a.recorder.Replay(ctx) // it logs what it found; pending lines drain on
	return nil
}
