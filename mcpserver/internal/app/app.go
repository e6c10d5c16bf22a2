// Package app is the composition root of storelink-mcp: New reads the
// configuration and builds the parts; ServeStdio, ServeHTTP and ServeConsole
// serve them. It only wires: decisions belong to the packages it builds
// (otelsdk sets up OpenTelemetry, httpserver checks the listeners,
// approvals runs the approval commands). It reads no flags (package cli does).
package app

import (
	"context"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/callerlimit"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/mcpserver/buildinfo"
	"github.com/korral/storelink/mcpserver/internal/approvals"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/backend"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/korral/storelink/mcpserver/internal/telemetry/otelsdk"
	"github.com/korral/storelink/mcpserver/internal/tools"
	"github.com/korral/storelink/mcpserver/internal/upstream"
)

// Version is the program's version (see package buildinfo).
var Version = buildinfo.Get().Version

// Error carries a failure's exit code: 2 for configuration or usage, 1
// for a refusal.
type Error struct {
	Code int
	Err  error
}

// Error is the failure's message, without the code.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap is the failure.
func (e *Error) Unwrap() error { return e.Err }

// exit2 is a configuration problem: exit code 2.
func exit2(err error) error { return &Error{Code: 2, Err: err} }

// Options are the process's surroundings that the parts need.
type Options struct {
	// Getenv reads a setting, with command-line overrides applied.
	Getenv func(string) string
	// ReadFile reads a file named by a setting; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Log is where the JSON log lines go unless LOG_FILE names a file.
	Log io.Writer
	// Embedded starts an in-process StoreLink; nil in builds without one.
	Embedded EmbeddedFunc
	// SessionName names stdio calls in the audit trail; "" for HTTP.
	SessionName string
	// Metrics builds the Prometheus reader (serve --metrics).
	Metrics bool
}

func (o Options) readFile() func(string) ([]byte, error) {
	if o.ReadFile == nil {
		return os.ReadFile
	}
	return o.ReadFile
}

// App is the assembled program and what must be closed after it.
type App struct {
	opts   Options
	cfg    *config.Config
	log    *slog.Logger
	server *mcp.Server
	up     *upstream.Client
	// embedded is true when up is the embedded demo StoreLink.
	embedded bool
	keys     *keyring.Source
	db       state.Store
	// recorder records send outcomes through the journal; nil without one.
	recorder *journal.Recorder
	now      func() time.Time
	fixedNow time.Time
	// upstreamID names the StoreLink up talks to (see upstreamIdentity).
	upstreamID string
	closes     []func() error

	// rejections audits the calls the SDK refuses before our middleware.
	rejections *tools.Rejections
	// tel is the OpenTelemetry SDK of a server.
	tel otelsdk.SDK
}

// Close closes every part, in the reverse order of opening.
func (a *App) Close() {
	for i := len(a.closes) - 1; i >= 0; i-- {
		_ = a.closes[i]()
	}
}

// Config is the configuration the app was built from.
func (a *App) Config() *config.Config { return a.cfg }

// State is the state database: ledger, audit trail, approver register.
func (a *App) State() state.Store { return a.db }

// Parts says how much of the program New assembles.
type Parts int

const (
	// ConfigOnly reads and checks the configuration; nothing is opened.
	ConfigOnly Parts = iota
	// StateOnly adds the log, the state database and the replayed outcome
	// journal. It refuses STORELINK_MOCK_NOW.
	StateOnly
	// Server adds telemetry, the StoreLink client and the MCP server.
	Server
)

// New reads the configuration and builds the parts up to parts. A
// configuration problem is an *Error with code 2; on error, parts opened so
// far are closed.
func New(ctx context.Context, opts Options, parts Parts) (*App, error) {
	a := &App{opts: opts, now: time.Now}
	steps := []func(context.Context) error{a.loadConfig}
	if parts >= StateOnly {
		steps = append(steps, a.checkClock(parts == Server), a.openLog, a.openState, a.openJournal(parts == StateOnly))
	}
	if parts == Server {
		steps = append(steps, a.startTelemetry, a.openUpstream, a.replayJournal, a.buildServer)
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// loadConfig reads the configuration.
func (a *App) loadConfig(context.Context) error {
	cfg, err := config.Load(a.opts.Getenv, a.opts.readFile())
	if err != nil {
		return exit2(fmt.Errorf("configuration: %w", err))
	}
	a.cfg = cfg
	return nil
}

// checkClock refuses a configuration that cannot run as asked (see
// config.CheckRun) before anything is opened, and pins the clock of the
// embedded demo StoreLink when STORELINK_MOCK_NOW is set.
func (a *App) checkClock(server bool) func(context.Context) error {
	return func(context.Context) error {
		if err := a.cfg.CheckRun(server, a.opts.Embedded != nil); err != nil {
			return exit2(fmt.Errorf("configuration: %w", err))
		}
		if fixedNow := a.cfg.MockNow; server && a.cfg.UpstreamBaseURL == "" && !fixedNow.IsZero() {
			a.fixedNow = fixedNow
			a.now = func() time.Time { return fixedNow }
		}
		return nil
	}
}

// openLog opens LOG_FILE, or logs to opts.Log, with trace ids.
func (a *App) openLog(context.Context) error {
	logTo := a.opts.Log
	if a.cfg.LogFile != "" {
		f, err := os.OpenFile(a.cfg.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return exit2(fmt.Errorf("configuration: LOG_FILE: %w", err))
		}
		logTo, a.closes = f, append(a.closes, f.Close)
	}
	a.log = slog.New(telemetry.LogHandler{Next: slog.NewJSONHandler(logTo, &slog.HandlerOptions{Level: a.cfg.LogLevel})})
	return nil
}

// openState opens the state database.
func (a *App) openState(context.Context) error {
	db, err := backend.Open(a.cfg)
	if err != nil {
		return exit2(err)
	}
	a.db = db
	a.closes = append(a.closes, db.Close)
	return nil
}

// openUpstream adds the StoreLink client, embedded when no base URL is set.
func (a *App) openUpstream(ctx context.Context) error {
	cfg := a.cfg
	baseURL, kr := cfg.UpstreamBaseURL, cfg.Keyring
	a.upstreamID = replenish.UpstreamIdentity(baseURL)
	if baseURL == "" {
		emb, err := a.opts.Embedded(ctx, a.fixedNow)
		if err != nil {
			return fmt.Errorf("start embedded StoreLink: %w", err)
		}
		a.closes = append(a.closes, emb.Close)
		baseURL, a.embedded = emb.BaseURL, true
		if kr, err = keyringFromMap(emb.Keyring); err != nil {
			return err
		}
		a.log.Info("upstream.embedded", "base_url", baseURL, "stores", kr.StoreIDs(), "fixed_now", !a.fixedNow.IsZero())
	}
	return a.connect(baseURL, kr)
}

// buildServer builds the MCP server over the parts.
func (a *App) buildServer(context.Context) error {
	writes, err := a.writeOptions()
	if err != nil {
		return err
	}
	o := tools.Options{
		Upstream:            a.up,
		Keyring:             a.keys.Keyring,
		Logger:              a.log,
		Audit:               audit.Store{Log: a.db},
		Now:                 a.now,
		DefaultLookbackDays: a.cfg.DefaultLookbackDays,
		Version:             Version,
		SessionName:         a.opts.SessionName,
		Writes:              writes,
		EmbeddedDemo:        a.embedded,
		TracerProvider:      a.tel.Tracer,
		MeterProvider:       a.tel.Meter,
		NetworkTransport:    "tcp",
		CallerLimits:        callerlimit.Limits{CallsPerMinute: a.cfg.CallerCallsPerMinute, Burst: a.cfg.CallerBurst},
	}
	if a.opts.SessionName != "" {
		o.NetworkTransport = "pipe"
	}
	approvals.RegisterGauges(a.tel.Meter, a.db, a.now)
	a.server = tools.New(o)
	a.rejections = tools.NewRejections(o)
	return nil
}

// writeOptions are the order tool's settings; nil in read-only mode.
func (a *App) writeOptions() (*tools.WriteOptions, error) {
	cfg := a.cfg
	if cfg.ReadOnly {
		return nil, nil
	}
	writes := &tools.WriteOptions{
		AllowWrites:     cfg.AllowWrites,
		MaxOrderUnits:   int64(cfg.MaxOrderUnits),
		RequireApproval: cfg.WriteApproval == config.ApprovalRequired,
		ApprovalTTL:     cfg.ApprovalTTL,
		Ledger:          a.db,
		Recorder:        a.recorder,
		UpstreamID:      a.upstreamID,
		ConsoleURL:      cfg.ConsolePublicURL,
	}
	n, err := a.notifier()
	if err != nil {
		return nil, err
	}
	writes.Notifier = n
	if cfg.WriteApproval == config.ApprovalHost {
		sealer, err := consent.NewSealer(cfg.HostConsentKey, a.now)
		if err != nil {
			return nil, exit2(fmt.Errorf("configuration: HOST_CONSENT_KEY_FILE: %w", err))
		}
		writes.HostConsent, writes.ConsentNonces = sealer, a.db
	}
	return writes, nil
}

// connect adds the StoreLink client for baseURL with the keyring kr.
func (a *App) connect(baseURL string, kr *keyring.Keyring) error {
	cfg, log := a.cfg, a.log
	a.keys = keyring.NewSource(kr, cfg.KeyringFile, a.opts.readFile(), log)
	up, err := upstream.New(upstream.Options{
		BaseURL:         baseURL,
		Timeout:         cfg.UpstreamTimeout,
		MaxInFlight:     cfg.UpstreamMaxInFlight,
		Keys:            a.keys,
		Logger:          log,
		BreakerFailures: uint32(cfg.BreakerFailures),
		BreakerCooldown: cfg.BreakerCooldown,
		MasterDataTTL:   cfg.MasterDataTTL,
		NoCache:         cfg.MasterDataTTL == 0,
		Now:             a.now,
		TracerProvider:  a.tel.Tracer,
		MeterProvider:   a.tel.Meter,
		UpstreamName:    a.upstreamID,

		CallerSharePercent: cfg.UpstreamCallerShare,
	})
	if err != nil {
		return exit2(fmt.Errorf("configuration: UPSTREAM_BASE_URL: %w", err))
	}
	a.up = up
	return nil
}

// upstreamKind names the upstream for /readyz and doctor.
func (a *App) upstreamKind() string {
	if a.embedded {
		return "embedded_demo"
	}
	return "storelink"
}
