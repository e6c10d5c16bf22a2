package tools

import (
	"context"
	"log/slog"
	"time"

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

// Upstream is what the tools need from StoreLink. Every method is called only
// for a store already resolved against the keyring. It is the order
// workflow's own interface (Store, Inventory, Sales, SKU, Supplier, Order,
// CreateOrder), declared once there.
type Upstream = replenish.Upstream

// AuditEvent is one tool call as the audit trail stores it; an [AuditSink]
// receives it.
type AuditEvent = state.AuditRecord

// AuditSink receives one event per tool call. Implementations must not block
// for long; a failure to record is logged, never shown to the model.
type AuditSink interface {
	Record(ctx context.Context, e AuditEvent) error
}

// Options are the dependencies and settings of the server.
type Options struct {
	Upstream Upstream
	// Keyring returns the current keyring; it may change when the keyring
	// file is rotated, so the server asks on every call.
	Keyring func() *keyring.Keyring
	Logger  *slog.Logger
	Audit   AuditSink
	Now     func() time.Time
	// DefaultLookbackDays is the risk check's history window when a call
	// gives none; 0 means projection.DefaultLookbackDays.
	DefaultLookbackDays int
	Version             string
	// SessionName names calls whose session carries no protocol id (stdio,
	// where one process serves one client) in the audit trail; "" leaves
	// them unnamed, as stateless HTTP requests are.
	SessionName string
	// Writes configures the replenishment tool; nil hides it (read-only).
	Writes *WriteOptions
	// EmbeddedDemo says the upstream is the embedded demo StoreLink: every
	// answer the model relays then carries DemoNotice.
	EmbeddedDemo bool
	// TracerProvider and MeterProvider receive the spans and metrics of
	// every request (telemetry.go); nil is a no-op.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// NetworkTransport is network.transport on spans and metrics: "pipe"
	// (stdio, the default) or "tcp" (HTTP).
	NetworkTransport string
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
	// Recorder records the outcome of each send in Ledger through the
	// outcome journal (ADR 0006); nil retries against Ledger alone and
	// keeps nothing that it could not record.
	Recorder *journal.Recorder
	// UpstreamID names the StoreLink this server sends to; every ledger
	// entry records it, and an order is only ever looked up or sent at the
	// StoreLink it was recorded for (ADR 0007).
	UpstreamID string
	// Notifier is told of every order staged for approval
	// (APPROVAL_WEBHOOK_URL); nil tells nobody. It queues and returns at
	// once, so the tool's answer never waits for the receiver.
	Notifier *notify.Notifier
	// HostConsent, when set, has the person at the host confirm every
	// confirmed order before it is sent (WRITE_APPROVAL=host), and seals
	// the question's state for 2026-07-28 clients; ConsentNonces then
	// records each state's single use.
	HostConsent   *consent.Sealer
	ConsentNonces state.ConsentNonces
	// ConsoleURL is the approvals console's public base URL
	// (CONSOLE_PUBLIC_URL); "" means no link. With RequireApproval, a
	// staged order's page there is where a named approver decides it: a
	// host that declares URL elicitation is asked to open it, any other
	// host reads it in the answer (ADR 0021).
	ConsoleURL string
	// ApprovalPoll is how often a session that was asked to open an
	// order's page reads the ledger for the decision, to tell the host
	// when it is made; zero means DefaultApprovalPoll.
	ApprovalPoll time.Duration
}

type server struct {
	opts Options
	log  *slog.Logger

	tracer  trace.Tracer
	metrics instruments
	// tools are the names registered, the only tool names used as labels.
	tools map[string]bool
	// approvals waits on the approvals the sessions were led to.
	approvals *approvalWatcher
}

// workflow is the order workflow behind the tools, built from the options
// on each call: the keyring and the settings it reads may be swapped by a
// test, and the value is a handful of fields.
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

// keyringHolds reports whether storeID is one of the stores this
// deployment's keyring holds a key for right now.
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
	return s
}

// New returns the MCP server with its tools registered.
func New(opts Options) *mcp.Server {
	if opts.DefaultLookbackDays == 0 {
		opts.DefaultLookbackDays = projection.DefaultLookbackDays
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := newServer(opts)
	opts = s.opts
	ms := mcp.NewServer(&mcp.Implementation{Name: "korral-storelink", Title: "Korral StoreLink", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: instructionsFor(opts), Logger: opts.Logger,
			// Declared, not inferred, so server/discover and initialize say
			// exactly what is served: the tool and prompt lists are fixed for
			// the life of the process, so no list ever changes (listChanged
			// false); logging is the SDK's; completions come with the handler.
			Capabilities: &mcp.ServerCapabilities{
				// Deprecated from 2026-07-28 (SEP-2577), still part of
				// 2025-11-25, whose clients may set a level; the SDK serves it.
				//lint:ignore SA1019 served for 2025-11-25 sessions during the deprecation window
				Logging: &mcp.LoggingCapabilities{},
				Tools:   &mcp.ToolCapabilities{},
				Prompts: &mcp.PromptCapabilities{},
				// The MCP Apps views (views.go), fixed like the lists.
				Resources: &mcp.ResourceCapabilities{},
			},
			CompletionHandler: s.complete,
			SetCacheable:      cacheable,
		})
	ms.AddReceivingMiddleware(s.observe, s.auditRejected, s.auditPrompts, viewsForExtension)
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

// ListTTL is the ttlMs of server/discover and of the tool and prompt
// lists: they are fixed for the life of the process and the same for every
// caller (cacheScope public), so a client may reuse them for this long;
// after a redeploy it sees the new lists within that time.
const ListTTL = 5 * time.Minute

// cacheable sets the caching hints of the results that carry them. The
// tool list a client declaring MCP Apps gets names the views (views.go),
// so it is not the list every caller gets: its scope is private.
func cacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	c.TTLMs = int(ListTTL.Milliseconds())
	c.CacheScope = "public"
	if lr, ok := req.(*mcp.ListToolsRequest); ok {
		if caps := lr.ClientCapabilities(); caps != nil && views.Declared(caps.Extensions) {
			c.CacheScope = "private"
		}
	}
}
