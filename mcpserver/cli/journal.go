package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
)

// journalFix is what an operator does about a journal that cannot be opened.
const journalFix = "point STATE_JOURNAL_PATH at a file of its own on this machine's persistent storage, in a directory this user can write"

// writesPossible reports whether this configuration can send an order, and
// so needs somewhere to keep an outcome the ledger cannot take.
func writesPossible(cfg *config.Config) bool { return cfg.AllowWrites && !cfg.ReadOnly }

// openJournal opens the outcome journal and replays it into the ledger, so
// outcomes an earlier run could not record are recorded before anything
// else happens. Where orders can be sent the journal must open (else exit
// 2, before anything is served); where they cannot, a journal left from
// before is still replayed, and none is created.
func (a *app) openJournal() error {
	cfg := a.cfg
	if cfg.JournalPath == "" {
		return nil
	}
	if !writesPossible(cfg) {
		if _, err := os.Stat(cfg.JournalPath); err != nil {
			return nil
		}
	}
	j, err := journal.Open(cfg.JournalPath)
	if err != nil {
		if !writesPossible(cfg) {
			a.log.Warn("journal.replay_failed", "journal", cfg.JournalPath, "error", err.Error())
			return nil
		}
		return fmt.Errorf("configuration: STATE_JOURNAL_PATH: %w; %s", err, journalFix)
	}
	a.recorder = &journal.Recorder{Ledger: a.db, Journal: j, Log: a.log, Now: a.now}
	// Closed in reverse: the drain stops before its file closes.
	a.closes = append(a.closes, j.Close, a.recorder.Close)
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	_, _ = a.recorder.Replay(ctx) // it logs what it found; pending lines drain on
	return nil
}

// outcomeJournal is doctor's check of the outcome journal: it can be
// written, and every outcome in it is in the ledger. It replays the journal
// when the ledger is reachable (db not nil), as a start would, and names
// every line it could not record and why.
func (c *checkup) outcomeJournal(ctx context.Context, cfg *config.Config, db state.Store) {
	const check = "outcome journal"
	path := cfg.JournalPath
	if path == "" {
		c.ok(check, "none: writes are off and there is no default place for one")
		return
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && !writesPossible(cfg) {
		c.ok(check, "%s does not exist; writes are off, so none is needed", path)
		return
	}
	j, err := journal.Open(path)
	if err != nil {
		c.fail(check, err.Error(), journalFix)
		return
	}
	defer j.Close()
	if db == nil {
		n, err := j.Len()
		switch {
		case err != nil:
			c.fail(check, err.Error(), journalFix)
		case n > 0:
			c.fail(check, fmt.Sprintf("%s holds %d order outcome(s) the ledger has not recorded, and the state database is unreachable", path, n),
				"bring the state database back; the server records them by itself, or run doctor again")
		default:
			c.ok(check, "%s is writable and holds nothing to record", path)
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	rep, err := j.Replay(ctx, db, time.Now())
	if err != nil {
		c.fail(check, err.Error(), journalFix)
		return
	}
	if len(rep.Pending) > 0 {
		c.fail(check, fmt.Sprintf("%s holds %d order outcome(s) the ledger could not record yet: %v", path, len(rep.Pending), rep.Cause),
			"bring the state database back; the server records them by itself, or run doctor again")
	}
	for _, p := range rep.Conflicts {
		c.fail(check, fmt.Sprintf("%s line %d: %s", path, p.Number, p.Reason),
			fmt.Sprintf("settle it in the ledger as the message says, then delete line %d from the file", p.Number))
	}
	for _, p := range rep.Unreadable {
		c.fail(check, fmt.Sprintf("%s line %d is not an outcome journal line (%s)", path, p.Number, p.Reason),
			fmt.Sprintf("check the order it names, if any, then delete line %d from the file", p.Number))
	}
	if rep.Clean() {
		c.ok(check, "%s is writable; %d outcome(s) recorded in the ledger now, nothing pending", path, rep.Recorded)
	}
}
