package doctor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/upstream"
)

// JournalFix is what an operator does about a journal that cannot be
// opened.
const JournalFix = "point STATE_JOURNAL_PATH at a file of its own on this machine's persistent storage, in a directory this user can write"

// confirmFix is what an operator does about an accepted order StoreLink
// could not be asked about.
const confirmFix = "check that StoreLink answers with this store's key (the upstream and key checks above); the server records the order by itself once StoreLink confirms it, or run doctor again"

// journalTimeout bounds the journal's replay into the ledger.
const journalTimeout = 30 * time.Second

// confirmer reads orders back from StoreLink at UPSTREAM_BASE_URL, with
// the keyring's keys and no cache.
func confirmer(cfg *config.Config, keys upstream.Keys) journal.Confirmer {
	if cfg.UpstreamBaseURL == "" {
		return journal.ConfirmFunc(func(context.Context, state.Entry, string) error {
			return errors.New("UPSTREAM_BASE_URL is not set, so doctor cannot read the order back from StoreLink")
		})
	}
	up, err := upstream.New(upstream.Options{
		BaseURL: cfg.UpstreamBaseURL, Timeout: cfg.UpstreamTimeout, Logger: slog.New(slog.DiscardHandler), Keys: keys,
		BreakerFailures: uint32(cfg.BreakerFailures), BreakerCooldown: cfg.BreakerCooldown,
		NoCache: true,
	})
	if err != nil {
		return journal.ConfirmFunc(func(context.Context, state.Entry, string) error { return err })
	}
	return replenish.ConfirmOrders(up, replenish.UpstreamIdentity(cfg.UpstreamBaseURL))
}

// outcomeJournal checks the outcome journal: its file rules, that it can be
// written, and, when db is not nil, that every outcome is in the ledger,
// replaying it as a start would and naming each line it could not record.
func (c *checkup) outcomeJournal(ctx context.Context, cfg *config.Config, keys upstream.Keys, db state.Store) {
	const check = "outcome journal"
	path := cfg.JournalPath
	if path == "" {
		c.ok(check, "none: writes are off and there is no default place for one")
		return
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) && !(cfg.AllowWrites && !cfg.ReadOnly) {
		c.ok(check, "%s does not exist; writes are off, so none is needed", path)
		return
	}
	j, err := journal.Open(path)
	if err != nil {
		fix := JournalFix
		var unsafe *journal.UnsafeError
		if errors.As(err, &unsafe) {
			fix = unsafe.Fix
		}
		c.fail(check, err.Error(), fix)
		return
	}
	defer j.Close()
	if db == nil {
		n, err := j.Len()
		switch {
		case err != nil:
			c.fail(check, err.Error(), JournalFix)
		case n > 0:
			c.fail(check, fmt.Sprintf("%s holds %d order outcome(s) the ledger has not recorded, and the state database is unreachable", path, n),
				"bring the state database back; the server records them by itself, or run doctor again")
		default:
			c.ok(check, "%s is writable and holds nothing to record", path)
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, journalTimeout)
	defer cancel()
	rep, err := j.Replay(ctx, db, confirmer(cfg, keys), time.Now())
	if err != nil {
		c.fail(check, err.Error(), JournalFix)
		return
	}
	if len(rep.Pending) > 0 {
		c.fail(check, fmt.Sprintf("%s holds %d order outcome(s) the ledger could not record yet: %v", path, len(rep.Pending), rep.Cause),
			"bring the state database back; the server records them by itself, or run doctor again")
	}
	for _, p := range rep.Unconfirmed {
		c.fail(check, fmt.Sprintf("%s line %d: %s", path, p.Number, p.Reason), confirmFix)
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
