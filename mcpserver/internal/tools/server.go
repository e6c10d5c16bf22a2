package tools

import (
	"context"
	"log/slog"
	"time"

	"github.com/korral/storelink/mcpserver/internal/callerlimit"
	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/notify"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/korral/storelink/mcpserver/internal/views"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Upstream is what the tools need from StoreLink, called only for a store
// already resolved against the keyring.
type Upstream = replenish.Upstream

// AuditEvent is one tool call as the audit trail stores it.
type AuditEvent = state.AuditRecord

// AuditSink receives one event per tool call. It must not block for long; a
// failure to record is logged, never shown to the model.
type AuditSink interface {
	Record(ctx context.Context, e AuditEvent) error
}

// Options are the dependencies and settings of the server.
type Options struct {
	Upstream Upstream
	// Keyring returns the current keyring; it is asked on every call because
	// the keyring file may be rotated.
	Keyring func() *keyring.Keyring
	Logger  *slog.Logger
	Audit   AuditSink
	Now     func() time.Time
	// DefaultLookbackDays is the risk check's default history window; 0 means
	// projection.DefaultLookbackDays.
	DefaultLookbackDays int
	Version             string
	// SessionName names, in the audit trail, calls whose session has no
	// protocol id (stdio); "" leaves them unnamed.
	SessionName string
	// Writes configures the replenishment tool; nil hides it (read-only).
	Writes *WriteOptions
	// EmbeddedDemo says the upstream is the embedded demo StoreLink; every
	// answer then carries DemoNotice.
	EmbeddedDemo bool
	// TracerProvider and MeterProvider receive spans and metrics; nil is a no-op.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// NetworkTransport is network.transport on spans and metrics: "pipe"
	// (stdio, the default) or "tcp" (HTTP).
	NetworkTransport string
	// CallerLimits bound each caller's tool calls (callerlimit.go); the zero
	// value sets no limit.
	CallerLimits callerlimit.Limits
}

// WriteOptions configures korral_raise_replenishment_order.
type WriteOptions struct {
	// AllowWrites must be true for confirm:true to do anything.
	AllowWrites bool
	// MaxOrderUnits is the hard ceiling of one order.
	MaxOrderUnits int64
	// RequireApproval stages confirmed orders for a human instead of sending.
	RequireApproval bool
	// ApprovalTTL is how long a staged order waits before it lapses.
	ApprovalTTL time.Duration
	// Ledger records every confirmed order before it is sent.
	Ledger state.Ledger
	// Recorder records each send's outcome in Ledger (ADR 0006); nil retries
	// against Ledger alone.
	Recorder *journal.Recorder
	// UpstreamID names the StoreLink this server sends to; an order is only
	// looked up or sent at the StoreLink it was recorded for (ADR 0007).
	UpstreamID string
	// Notifier is told of every order staged for approval; nil tells nobody.
	// It queues and returns at once.
	Notifier *notify.Notifier
	// HostConsent, when set, has the person at the host confirm every order
	// before it is sent (WRITE_APPROVAL=host); ConsentNonces records each
	// sealed state's single use.
	HostConsent   *consent.Sealer
	ConsentNonces state.ConsentNonces
	// ConsoleURL is the approvals console's public base URL; "" means no link.
	// With RequireApproval, a staged order's page there is where an approver
	// decides it (ADR 0021).
	ConsoleURL string
	// ApprovalPoll is how often a session waiting on an order's page reads the
	// ledger for the decision; zero means DefaultApprovalPoll.
	ApprovalPoll time.Duration
}

type server struct {
	opts Options
	log  *slog.Logger

	tracer  trace.Tracer
	metrics instruments
	// tools are the registered names, the only tool names used as labels.
	tools map[string]bool
	// approvals waits on the approvals the sessions were led to.
	approvals *approvalWatcher
	// callers holds each caller's bucket of tool calls; nil: no limit.
	callers *callerlimit.Limiter
	// collected, when set, receives the JSON of every tool's schemas, built
	// from the types (GeneratedSchemasSource).
	collected map[string][2]string
}

// workflow is the order workflow behind the tools, built on each call
// because a test may swap the keyring and settings.
func (s *server) workflow() *replenish.Workflow {
	f := &replenish.Workflow{
		Upstream:     s.opts.Upstream,
		Now:          s.opts.Now,
		Log:          s.log,
		LookbackDays: s.opts.DefaultLookbackDays,
	}
	if f.Now == nil {
		f.Now = time.Now
	}
	if w := s.opts.Writes; w != nil {
		f.Ledger, f.UpstreamID = w.Ledger, w.UpstreamID
		if s.opts.TracerProvider != nil {
			f.Ledger, f.Tracer = state.TracedLedger(w.Ledger, s.opts.TracerProvider), s.tracer
		}
		if w.Recorder != nil {
			f.Recorder = w.Recorder
		}
		f.Gate = replenish.Gate{AllowWrites: w.AllowWrites, MaxOrderUnits: w.MaxOrderUnits, RequireApproval: w.RequireApproval,
			ApprovalTTL: w.ApprovalTTL, HostConsent: w.HostConsent != nil, Holds: s.keyringHolds}
	}
	return f
}

// keyringHolds reports whether the current keyring holds a key for storeID.
func (s *server) keyringHolds(storeID string) bool {
	kr := s.opts.Keyring()
	if kr == nil {
		return false
	}
	_, ok := kr.Key(storeID)
	return ok
}

// newServer applies the defaults every user of Options relies on.
func newServer(opts Options) *server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &server{opts: opts, log: opts.Logger, tracer: telemetry.Tracer(opts.TracerProvider),
		metrics: newInstruments(opts.MeterProvider), tools: map[string]bool{}}
	s.approvals = newApprovalWatcher(s)
	s.callers = callerlimit.New(opts.CallerLimits)
	return s
}

// New returns the MCP server with its tools registered.
func New(opts Options) *mcp.Server { return build(newServer(withDefaults(opts))) }

// withDefaults fills the settings New defaults.
func withDefaults(opts Options) Options {
	if opts.DefaultLookbackDays == 0 {
		opts.DefaultLookbackDays = projection.DefaultLookbackDays
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	return opts
}

// build makes the MCP server of s and registers its tools, prompts and
// views.
func build(s *server) *mcp.Server {
	opts := s.opts
	ms := mcp.NewServer(&mcp.Implementation{Name: "korral-storelink", Title: "Korral StoreLink", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: instructionsFor(opts), Logger: opts.Logger,
			// Declared, not inferred: the tool and prompt lists are fixed for the
			// life of the process, so listChanged is false.
			Capabilities: &mcp.ServerCapabilities{
				// Deprecated from 2026-07-28 (SEP-2577), still served for 2025-11-25.
				//lint:ignore SA1019 served for 2025-11-25 sessions during the deprecation window
				Logging: &mcp.LoggingCapabilities{},
				Tools:   &mcp.ToolCapabilities{},
				Prompts: &mcp.PromptCapabilities{},
				// The MCP Apps views (views.go).
				Resources: &mcp.ResourceCapabilities{},
			},
			CompletionHandler: s.complete,
			SetCacheable:      cacheable,
		})
	ms.AddReceivingMiddleware(encodeResults, s.observe, s.limitCallers, s.auditRejected, s.auditPrompts, viewsForExtension)
	addListAuthorizedStores(ms, s)
	addCheckStockRisk(ms, s)
	addListRecentSales(ms, s)
	addGetOrderStatus(ms, s)
	if opts.Writes != nil {
		addRaiseReplenishmentOrder(ms, s)
	}
	addPrompts(ms, s)
	addViews(ms)
	return ms
}

// ListTTL is the ttlMs of server/discover and of the tool and prompt lists,
// which are fixed for the life of the process.
const ListTTL = 5 * time.Minute

// cacheable sets caching hints. The tool list for a client declaring MCP
// Apps names the views, so its scope is private.
func cacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	c.TTLMs = int(ListTTL.Milliseconds())
	c.CacheScope = "public"
	if lr, ok := req.(*mcp.ListToolsRequest); ok {
		if caps := lr.ClientCapabilities(); caps != nil && views.Declared(caps.Extensions) {
			c.CacheScope = "private"
		}
	}
}
