package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/approvals"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// ConsoleOptions are the approvals console's listener settings.
type ConsoleOptions = console.ListenOptions

// ConsolePolicy refuses, before anything starts, a console listener that
// would send secrets in plain text over the network (console.Policy).
func ConsolePolicy(flagName string, o ConsoleOptions) error { return console.Policy(flagName, o) }

// startConsole serves the approvals console over a's ledger and StoreLink.
// Its login state lives in the state database, shared by every replica.
func startConsole(a *App, o ConsoleOptions) (*console.Server, error) {
	s, err := console.Listen(o, a.cfg.ConsolePublicURL, a.db.ConsoleFormKey, a.consoleBackend(), console.Options{Logger: a.log,
		Sessions: approvals.Sessions{DB: a.db}, Logins: a.db})
	var bad *console.ConfigError
	if errors.As(err, &bad) {
		return nil, exit2(bad.Err)
	}
	return s, err
}

// ServeConsole serves the approvals console alone (for stdio deployments)
// until ctx is cancelled, with the server's state database and StoreLink.
func ServeConsole(ctx context.Context, opts Options, o ConsoleOptions) error {
	a, err := New(ctx, opts, StateOnly)
	if err != nil {
		return err
	}
	defer a.Close()
	cfg := a.cfg
	if cfg.UpstreamBaseURL == "" {
		return exit2(errors.New("configuration: the console needs UPSTREAM_BASE_URL: it sends approved orders to the StoreLink the server uses (an embedded demo StoreLink lives inside one server process; use serve --console for it)"))
	}
	if cfg.Keyring == nil {
		return exit2(errors.New("configuration: the console needs the keyring (STORELINK_KEYRING_FILE or STORELINK_KEYRING) of the stores whose orders it approves"))
	}
	if err := a.connect(cfg.UpstreamBaseURL, cfg.Keyring); err != nil {
		return err
	}
	a.upstreamID = replenish.UpstreamIdentity(cfg.UpstreamBaseURL)
	c, err := startConsole(a, o)
	if err != nil {
		return err
	}
	select {
	case err := <-c.Done:
		return fmt.Errorf("console: %w", err)
	case <-ctx.Done():
	}
	c.Stop()
	return nil
}

// consoleBackend is the console's Backend over a's ledger, approver
// register, audit trail and StoreLink (a.up, which must reach a.upstreamID).
func (a *App) consoleBackend() console.Backend {
	flow := a.workflow(nil)
	flow.Upstream, flow.UpstreamID, flow.LookbackDays = a.up, a.upstreamID, a.cfg.DefaultLookbackDays
	flow.Reach = nil
	return approvals.NewBackend(approvals.Options{Flow: flow, Approvers: a.db, Audit: a.db, Holds: a.holds, Now: a.now, Log: a.log})
}
