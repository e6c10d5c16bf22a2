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
	"github.com/korral/storelink/mcpserver/buildinfo"
	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/stdiotransport"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/korral/storelink/mcpserver/internal/upstream"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	// overrides are the settings given as flags (--read-only, --log-level,
	// --log-file). They win over the environment; Run creates the map, and
	// copies of Env share it, so a subcommand's flags reach loadConfig.
	overrides map[string]string
	// serveMetrics is set by `serve --metrics`: the server then builds the
	// Prometheus reader beside any OTLP export.
	serveMetrics bool
}

// getenv reads a setting: a flag given on the command line, else the
// environment. Secrets have no flags, so for them the environment rules.
func (e Env) getenv(name string) string {
	if v, ok := e.overrides[name]; ok {
		return v
	}
	return e.Getenv(name)
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

// Version is the program's version, reported in the MCP handshake, in the
// start-up log and on /readyz (see package buildinfo).
var Version = buildinfo.Get().Version

const usage = `storelink-mcp: the Korral StoreLink MCP server.

Usage:
  storelink-mcp [stdio] [settings]    serve MCP over stdin/stdout (default)
  storelink-mcp serve --http ADDR [--stateless] [--console ADDR2] [settings]
                                      serve MCP over Streamable HTTP at /mcp, and the
                                      approvals console on a listener of its own
  storelink-mcp console --listen ADDR [--tls-cert F --tls-key F|--behind-tls-proxy]
                                      serve the approvals console alone (stdio deployments)
  storelink-mcp doctor [settings]     check the configuration, StoreLink, every key,
                                      the state database and the clock; exit 0 when all pass
  storelink-mcp audit [flags]         print the audit trail (--day, --store, --call, --tool)
  storelink-mcp audit report [flags]  calls, outcomes, error rate and latency per tool,
                                      and the pilot questions
  storelink-mcp approvals list [--all]|show ID|approve ID|reject ID --approver NAME
                                      release or refuse staged orders (a person's job)
  storelink-mcp approvals resolve KEY --raised ORDER_ID|--not-raised --approver NAME
                                      record what StoreLink holds for an unknown outcome
  storelink-mcp approvers add NAME [--stores IDS] [--secret-stdin]|list|revoke NAME
                                      the people who may approve, each with a secret of
                                      their own; only a verifier of it is stored
  storelink-mcp migrate               bring the state database's schema up to date
  storelink-mcp version               print the version (also --version)
  storelink-mcp help                  print this help (also -h, --help)

Settings (each overrides its environment variable):
` + config.SettingsHelp + `
"storelink-mcp COMMAND --help" shows a command's flags. Secrets have no flag: they
come from the environment only; see the README's configuration table.
With UPSTREAM_BASE_URL unset, an embedded demo StoreLink with made-up data is
started, and every answer says so.
`

// synopses are the first lines of each subcommand's --help.
var synopses = map[string]string{
	"stdio": "Usage: storelink-mcp [stdio] [settings]\n\nServe MCP over stdin/stdout; logs go to stderr (or --log-file).",
	"serve": "Usage: storelink-mcp serve --http ADDR [--stateless] [--console ADDR2] [settings]\n\nServe MCP over Streamable HTTP at /mcp, with /healthz and /readyz.\nBearer tokens come from MCP_AUTH_TOKENS_FILE. --console serves the approvals console\non a listener of its own (never the MCP endpoint's); a non-loopback console address\nneeds --console-tls-cert and --console-tls-key, or --behind-tls-proxy.",
	"console": `Usage: storelink-mcp console --listen ADDR [--tls-cert FILE --tls-key FILE|--behind-tls-proxy] [settings]

Serve the approvals console, where named approvers (storelink-mcp approvers add) log in,
read the staged orders with their stock evidence, and approve or reject them. It opens
the server's state database and sends approved orders to UPSTREAM_BASE_URL with the
keyring's keys. A non-loopback address needs --tls-cert and --tls-key, or
--behind-tls-proxy when a reverse proxy terminates TLS (see docs/operations.md).`,
	"doctor": "Usage: storelink-mcp doctor [settings]\n\nCheck the configuration, reach UPSTREAM_BASE_URL, read each keyring store with its\nown key, and check the state database, the token file and the clock. One line per\ncheck with the fix; exit 0 only when all pass, 1 otherwise.",
	"audit":  "Usage: storelink-mcp audit [report] [flags]\n\nPrint the audit trail, oldest first; \"report\" prints per-tool statistics and the\npilot questions instead. --tool takes a short (check_stock_risk) or full name.",
	"approvals": `Usage: storelink-mcp approvals list [--all]|show ID|approve ID|reject ID|resolve KEY [flags]

Release or refuse staged orders (WRITE_APPROVAL=required), and record what StoreLink
holds for an order whose outcome is unknown. Deciding needs a named approver
(storelink-mcp approvers add NAME) and their secret, which the server checks against
its own register: --approver NAME with --secret-file FILE, --secret-stdin, or
APPROVER_SECRET. An approver cannot approve an order requested under a bearer token
of the same name. A rejection needs --reason, which the audit trail keeps. Flags may
come before or after the id.
`,
}

// Run runs the program with args (without the program name).
func Run(ctx context.Context, args []string, env Env) error {
	if env.ReadFile == nil {
		env.ReadFile = os.ReadFile
	}
	env.overrides = map[string]string{}
	cmd := "stdio"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || cliflag.IsHelp(args[0]) || cliflag.IsVersion(args[0])) {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch {
	case cmd == "stdio":
		fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
		var rest []string
		if rest, err = parseFlags(fs, args, env); err == nil {
			if len(rest) > 0 {
				return usageError("stdio: unexpected argument %q", rest[0])
			}
			err = runStdio(ctx, env)
		}
	case cmd == "serve":
		err = runServe(ctx, args, env)
	case cmd == "doctor":
		err = runDoctor(ctx, args, env)
	case cmd == "audit":
		err = runAudit(ctx, args, env)
	case cmd == "approvals":
		err = runApprovals(ctx, args, env)
	case cmd == "approvers":
		err = runApprovers(ctx, args, env)
	case cmd == "console":
		err = runConsole(ctx, args, env)
	case cmd == "migrate":
		err = runMigrate(ctx, args, env)
	case cliflag.IsVersion(cmd):
		_, err = fmt.Fprintln(env.Stdout, buildinfo.Get().String("storelink-mcp"))
	case cliflag.IsHelp(cmd):
		_, err = fmt.Fprint(env.Stdout, usage)
	default:
		return usageError("unknown command %q: want stdio, serve, console, doctor, audit, approvals, approvers, migrate or version (see --help)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func usageError(format string, args ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, args...)}
}

// parseFlags parses a subcommand's flags, in any position, with the
// settings flags added. -h and --help print the subcommand's usage to
// stdout and return flag.ErrHelp, which Run turns into success.
func parseFlags(fs *flag.FlagSet, args []string, env Env) ([]string, error) {
	if fs.Name() != "audit" {
		addSettingFlags(fs, env)
	}
	rest, err := cliflag.Parse(fs, args, synopses[fs.Name()], env.Stdout)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, &ExitError{Code: 2, Err: err}
	}
	return rest, err
}

// addSettingFlags adds the flag of every setting that is not a secret
// (config.AddFlags: MAX_ORDER_UNITS is --max-order-units); a flag the
// subcommand defines itself keeps its meaning.
func addSettingFlags(fs *flag.FlagSet, env Env) {
	config.AddFlags(fs, func(name, value string) { env.overrides[name] = value })
}

// app is the assembled server and what must be closed after it.
type app struct {
	cfg    *config.Config
	log    *slog.Logger
	server *mcp.Server
	up     *upstream.Client
	// embedded is true when up is the embedded demo StoreLink.
	embedded bool
	keys     *mcpserver.KeySource
	db       state.Store
	// recorder records send outcomes in db through the outcome journal; nil
	// when this configuration keeps no journal.
	recorder *journal.Recorder
	now      func() time.Time
	fixedNow time.Time
	// upstreamID names the StoreLink up talks to (see upstreamIdentity).
	upstreamID string
	closes     []func() error

	// rejections audits the calls the SDK refuses before our middleware.
	rejections *mcpserver.Rejections
	// tel is the OpenTelemetry SDK of a server (telemetry.go).
	tel telemetrySetup
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
			Recorder:        a.recorder,
			UpstreamID:      a.upstreamID,
		}
		n, err := a.notifier()
		if err != nil {
			a.Close()
			return nil, err
		}
		writes.Notifier = n
		if cfg.WriteApproval == config.ApprovalHost {
			sealer, err := consent.NewSealer(cfg.HostConsentKey, a.now)
			if err != nil {
				a.Close()
				return nil, &ExitError{Code: 2, Err: fmt.Errorf("configuration: HOST_CONSENT_KEY_FILE: %w", err)}
			}
			writes.HostConsent, writes.ConsentNonces = sealer, a.db
		}
	}
	opts := mcpserver.Options{
		Upstream:            a.up,
		Keyring:             a.keys.Keyring,
		Logger:              a.log,
		Audit:               mcpserver.AuditStore{Log: a.db},
		Now:                 a.now,
		DefaultLookbackDays: cfg.DefaultLookbackDays,
		Version:             Version,
		SessionName:         sessionName,
		Writes:              writes,
		EmbeddedDemo:        a.embedded,
		TracerProvider:      a.tel.tracer,
		MeterProvider:       a.tel.meter,
		NetworkTransport:    "tcp",
	}
	if sessionName != "" {
		opts.NetworkTransport = "pipe"
	}
	a.registerLedgerGauges()
	a.server = mcpserver.New(opts)
	a.rejections = mcpserver.NewRejections(opts)
	return a, nil
}

// loadConfig reads the environment and opens the state database, for a
// command that runs no embedded demo StoreLink: it refuses
// STORELINK_MOCK_NOW, so that its clock is the real one.
func loadConfig(env Env) (*app, error) { return load(env, false) }

// load is loadConfig; withDemo is set by a server, which starts the
// embedded demo StoreLink when UPSTREAM_BASE_URL is unset and is the one
// command whose clock STORELINK_MOCK_NOW may pin.
func load(env Env, withDemo bool) (*app, error) {
	cfg, err := config.Load(env.getenv, env.ReadFile)
	if err != nil {
		return nil, &ExitError{Code: 2, Err: fmt.Errorf("configuration: %w", err)}
	}
	if !withDemo || cfg.UpstreamBaseURL != "" {
		if err := refuseMockNow(cfg); err != nil {
			return nil, err
		}
	} else if env.Embedded == nil {
		// Refused before the state database or the log file is opened,
		// so the refusal leaves nothing behind.
		return nil, &ExitError{Code: 2, Err: errors.New("configuration: UPSTREAM_BASE_URL is not set, and this production build has no embedded demo StoreLink: set UPSTREAM_BASE_URL to StoreLink's base URL (with STORELINK_KEYRING_FILE), or run the demo from source with `go run ./cmd/storelink-mcp`")}
	}
	logTo := env.Stderr
	var closes []func() error
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, &ExitError{Code: 2, Err: fmt.Errorf("configuration: LOG_FILE: %w", err)}
		}
		logTo, closes = f, append(closes, f.Close)
	}
	// Every line logged with a call's context carries its trace_id.
	log := slog.New(telemetry.LogHandler{Next: slog.NewJSONHandler(logTo, &slog.HandlerOptions{Level: cfg.LogLevel})})
	a := &app{cfg: cfg, log: log, now: time.Now, closes: closes}
	if fixedNow := cfg.MockNow; !fixedNow.IsZero() {
		a.fixedNow = fixedNow
		a.now = func() time.Time { return fixedNow }
	}
	db, err := openState(cfg)
	if err != nil {
		a.Close()
		return nil, &ExitError{Code: 2, Err: err}
	}
	a.db = db
	a.closes = append(a.closes, db.Close)
	// A server replays the journal once its StoreLink client exists
	// (buildUpstream), so accepted orders are read back before recorded.
	if err := a.openJournal(!withDemo); err != nil {
		a.Close()
		return nil, &ExitError{Code: 2, Err: err}
	}
	return a, nil
}

// buildUpstream adds the StoreLink client (starting the embedded one when no
// base URL is configured) to a loaded configuration.
func buildUpstream(ctx context.Context, env Env) (*app, error) {
	a, err := load(env, true)
	if err != nil {
		return nil, err
	}
	if err := a.startTelemetry(env.serveMetrics); err != nil {
		a.Close()
		return nil, err
	}
	cfg, log := a.cfg, a.log
	baseURL := cfg.UpstreamBaseURL
	kr := cfg.Keyring
	a.upstreamID = upstreamIdentity(baseURL)
	if baseURL == "" {
		if kr != nil {
			// A production keyring without its StoreLink is a deployment
			// that lost a setting; demo data served to it would pass as real.
			a.Close()
			name := "STORELINK_KEYRING"
			if cfg.KeyringFile != "" {
				name += "_FILE"
			}
			return nil, &ExitError{Code: 2, Err: fmt.Errorf("configuration: %s is set but UPSTREAM_BASE_URL is not: set UPSTREAM_BASE_URL to StoreLink's base URL, or unset %s to run the embedded demo StoreLink with its made-up data", name, name)}
		}
		emb, err := env.Embedded(ctx, a.fixedNow)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("start embedded StoreLink: %w", err)
		}
		a.closes = append(a.closes, emb.Close)
		baseURL = emb.BaseURL
		a.embedded = true
		if kr, err = keyringFromMap(emb.Keyring); err != nil {
			a.Close()
			return nil, err
		}
		log.Info("upstream.embedded", "base_url", baseURL, "stores", kr.StoreIDs(), "fixed_now", !a.fixedNow.IsZero())
	}
	if err := a.connect(env, baseURL, kr); err != nil {
		a.Close()
		return nil, err
	}
	a.replayJournal()
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
		MasterDataTTL:   cfg.MasterDataTTL,
		NoCache:         cfg.MasterDataTTL == 0,
		Now:             a.now,
		TracerProvider:  a.tel.tracer,
		MeterProvider:   a.tel.meter,
		UpstreamName:    a.upstreamID,
	})
	if err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("configuration: UPSTREAM_BASE_URL: %w", err)}
	}
	a.up = up
	return nil
}

func runStdio(ctx context.Context, env Env) error {
	// One stdio process serves one client: name its session once.
	session := "stdio-" + callid.New()
	a, err := build(ctx, env, session)
	if err != nil {
		return err
	}
	defer a.Close()
	a.log.Info("server.start", "transport", "stdio", "version", Version, "upstream", a.upstreamKind())
	// Our own transport: a malformed line is answered and skipped rather
	// than ending the session, as the SDK's IOTransport would.
	t := &stdiotransport.Transport{Reader: env.Stdin, Writer: env.Stdout, MaxLineBytes: a.cfg.StdioMaxLineBytes, Logger: a.log,
		Inspect: func(req *jsonrpc.Request) {
			if tool, reason, refused := mcpserver.UndecodableCall(req); refused {
				a.rejections.Record(ctx, tool, reason, stdioClient(a.server), session)
			}
		}}
	err = a.server.Run(ctx, t)
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled)) {
		err = nil
	}
	a.log.Info("server.stop", "transport", "stdio")
	return err
}

// stdioClient is the name the one stdio client gave itself at initialize,
// or "" before that.
func stdioClient(s *mcp.Server) string {
	for ss := range s.Sessions() {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			return p.ClientInfo.Name
		}
	}
	return ""
}

func keyringFromMap(m map[string]string) (*keyring.Keyring, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return keyring.Parse(data)
}

// refuseMockNow refuses STORELINK_MOCK_NOW to a command that runs no
// embedded demo StoreLink: its clock must be the real one. A pinned clock
// would judge approvals' expiry and write the audit trail at a time of the
// caller's choosing, against whatever StoreLink the ledger names.
func refuseMockNow(cfg *config.Config) error {
	if cfg.MockNow.IsZero() {
		return nil
	}
	if cfg.UpstreamBaseURL != "" {
		return &ExitError{Code: 2, Err: errors.New("configuration: STORELINK_MOCK_NOW applies only to the embedded StoreLink: unset it, or unset UPSTREAM_BASE_URL")}
	}
	return &ExitError{Code: 2, Err: errors.New("configuration: STORELINK_MOCK_NOW pins the clock of the embedded demo StoreLink, which only a server (stdio or serve, without UPSTREAM_BASE_URL) runs; this command runs on the real clock: unset STORELINK_MOCK_NOW")}
}
