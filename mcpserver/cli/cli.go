// Package cli is the storelink-mcp program: it loads the configuration from
// the environment, builds the server from its parts, and runs the chosen
// subcommand. The binary in cmd/storelink-mcp only supplies the process's
// environment and the embedded StoreLink.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env is the process's surroundings, passed in so tests can run the whole
// program in-process.
type Env struct {
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	// Embedded starts an in-process StoreLink when UPSTREAM_BASE_URL is unset.
	Embedded EmbeddedFunc
}

// EmbeddedFunc starts a StoreLink inside the process. fixedNow, when not
// zero, pins its clock (and the server's) for reproducible runs.
type EmbeddedFunc func(ctx context.Context, fixedNow time.Time) (*EmbeddedUpstream, error)

// EmbeddedUpstream is a running in-process StoreLink.
type EmbeddedUpstream struct {
	BaseURL string
	// Keyring maps store ids to keys, as STORELINK_KEYRING would.
	Keyring map[string]string
	Close   func() error
}

// ExitError carries the process exit code of a failure.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Version is the program's version, reported in the MCP handshake.
var Version = "0.1.0"

const usage = `storelink-mcp: the Korral StoreLink MCP server.

Usage:
  storelink-mcp [stdio]          serve MCP over stdin/stdout (default)
  storelink-mcp serve --http ADDR [--stateless]
                                 serve MCP over Streamable HTTP at /mcp (see --help)
  storelink-mcp audit [flags]    print the audit trail (--day, --store, --call, --tool)
  storelink-mcp audit report     calls, outcomes, error rate and latency per tool
  storelink-mcp approvals list [--all]|show ID|approve ID|reject ID --as NAME
                                 release or refuse staged orders (a person's job)
  storelink-mcp approvals resolve KEY --raised ORDER_ID|--not-raised --as NAME
                                 record what StoreLink holds for an unknown outcome
  storelink-mcp migrate          bring the state database's schema up to date (see --help)
  storelink-mcp version          print the version

Configuration comes from the environment; see the README's table.
With UPSTREAM_BASE_URL unset, an embedded mock StoreLink is started.
`

// Run runs the program with args (without the program name).
func Run(ctx context.Context, args []string, env Env) error {
	if env.ReadFile == nil {
		env.ReadFile = os.ReadFile
	}
	cmd := "stdio"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "stdio":
		fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
		fs.SetOutput(env.Stderr)
		if err := fs.Parse(args); err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		return runStdio(ctx, env)
	case "serve":
		return runServe(ctx, args, env)
	case "audit":
		return runAudit(ctx, args, env)
	case "approvals":
		return runApprovals(ctx, args, env)
	case "migrate":
		return runMigrate(ctx, args, env)
	case "version":
		_, err := fmt.Fprintln(env.Stdout, Version)
		return err
	case "help", "-h", "--help":
		_, err := fmt.Fprint(env.Stderr, usage)
		return err
	default:
		fmt.Fprint(env.Stderr, usage)
		return &ExitError{Code: 2, Err: fmt.Errorf("unknown command %q", cmd)}
	}
}

// app is the assembled server and what must be closed after it.
type app struct {
	cfg      *config.Config
	log      *slog.Logger
	server   *mcp.Server
	up       *upstream.Client
	keys     *mcpserver.KeySource
	db       state.Store
	now      func() time.Time
	fixedNow time.Time
	// upstreamID names the StoreLink up talks to (see upstreamIdentity).
	upstreamID string
	closes     []func() error
}

func (a *app) Close() {
	for i := len(a.closes) - 1; i >= 0; i-- {
		_ = a.closes[i]()
	}
}

// build loads the configuration and assembles the server. Any configuration
// problem is an ExitError with code 2, reported before anything starts.
//
// sessionName names the calls of a transport without protocol session ids
// (stdio) in the audit trail.
func build(ctx context.Context, env Env, sessionName string) (*app, error) {
	a, err := buildUpstream(ctx, env)
	if err != nil {
		return nil, err
	}
	cfg := a.cfg
	var writes *mcpserver.WriteOptions
	if !cfg.ReadOnly {
		writes = &mcpserver.WriteOptions{
			AllowWrites:     cfg.AllowWrites,
			MaxOrderUnits:   int64(cfg.MaxOrderUnits),
			RequireApproval: cfg.WriteApproval == config.ApprovalRequired,
			ApprovalTTL:     cfg.ApprovalTTL,
			Ledger:          a.db,
			UpstreamID:      a.upstreamID,
		}
	}
	a.server = mcpserver.New(mcpserver.Options{
		Upstream:            a.up,
		Keyring:             a.keys.Keyring,
		Logger:              a.log,
		Audit:               mcpserver.AuditStore{Log: a.db},
		Now:                 a.now,
		DefaultLookbackDays: cfg.DefaultLookbackDays,
		Version:             Version,
		SessionName:         sessionName,
		Writes:              writes,
	})
	return a, nil
}

// loadConfig reads the environment and opens the state database.
func loadConfig(env Env) (*app, error) {
	cfg, err := config.Load(env.Getenv, env.ReadFile)
	if err != nil {
		return nil, &ExitError{Code: 2, Err: fmt.Errorf("configuration: %w", err)}
	}
	log := slog.New(slog.NewJSONHandler(env.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	a := &app{cfg: cfg, log: log, now: time.Now}
	fixedNow, err := parseFixedNow(env.Getenv("STORELINK_MOCK_NOW"), cfg.UpstreamBaseURL)
	if err != nil {
		return nil, &ExitError{Code: 2, Err: fmt.Errorf("configuration: %w", err)}
	}
	if !fixedNow.IsZero() {
		a.fixedNow = fixedNow
		a.now = func() time.Time { return fixedNow }
	}
	db, err := openState(cfg)
	if err != nil {
		return nil, &ExitError{Code: 2, Err: err}
	}
	a.db = db
	a.closes = append(a.closes, db.Close)
	return a, nil
}

// buildUpstream adds the StoreLink client (starting the embedded one when no
// base URL is configured) to a loaded configuration.
func buildUpstream(ctx context.Context, env Env) (*app, error) {
	a, err := loadConfig(env)
	if err != nil {
		return nil, err
	}
	cfg, log := a.cfg, a.log
	baseURL := cfg.UpstreamBaseURL
	kr := cfg.Keyring
	a.upstreamID = upstreamIdentity(baseURL)
	if baseURL == "" {
		if env.Embedded == nil {
			a.Close()
			return nil, &ExitError{Code: 2, Err: errors.New("configuration: UPSTREAM_BASE_URL is not set and this build has no embedded StoreLink; set UPSTREAM_BASE_URL")}
		}
		emb, err := env.Embedded(ctx, a.fixedNow)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("start embedded StoreLink: %w", err)
		}
		a.closes = append(a.closes, emb.Close)
		baseURL = emb.BaseURL
		if kr == nil {
			kr, err = keyringFromMap(emb.Keyring)
			if err != nil {
				a.Close()
				return nil, err
			}
		}
		log.Info("upstream.embedded", "base_url", baseURL, "stores", kr.StoreIDs(), "fixed_now", !a.fixedNow.IsZero())
	}
	if err := a.connect(env, baseURL, kr); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// connect adds the StoreLink client for baseURL with the keyring kr.
func (a *app) connect(env Env, baseURL string, kr *keyring.Keyring) error {
	cfg, log := a.cfg, a.log
	a.keys = mcpserver.NewKeySource(kr, cfg.KeyringFile, env.ReadFile, log)
	up, err := upstream.New(upstream.Options{
		BaseURL:         baseURL,
		Timeout:         cfg.UpstreamTimeout,
		Keys:            a.keys,
		Logger:          log,
		BreakerFailures: uint32(cfg.BreakerFailures),
		BreakerCooldown: cfg.BreakerCooldown,
	})
	if err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("configuration: UPSTREAM_BASE_URL: %w", err)}
	}
	a.up = up
	return nil
}

func runStdio(ctx context.Context, env Env) error {
	// One stdio process serves one client: name its session once.
	a, err := build(ctx, env, "stdio-"+callid.New())
	if err != nil {
		return err
	}
	defer a.Close()
	a.log.Info("server.start", "transport", "stdio", "version", Version)
	t := &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
	err = a.server.Run(ctx, t)
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "EOF")) {
		err = nil
	}
	a.log.Info("server.stop", "transport", "stdio")
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func keyringFromMap(m map[string]string) (*keyring.Keyring, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return keyring.Parse(data)
}

// parseFixedNow reads STORELINK_MOCK_NOW, which pins the embedded StoreLink's
// clock and the server's for reproducible transcripts and tests.
func parseFixedNow(v, baseURL string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if baseURL != "" {
		return time.Time{}, errors.New("STORELINK_MOCK_NOW applies only to the embedded StoreLink: unset it, or unset UPSTREAM_BASE_URL")
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("STORELINK_MOCK_NOW=%q: must be an RFC 3339 time such as 2026-11-27T14:30:00+01:00", v)
	}
	return t, nil
}
