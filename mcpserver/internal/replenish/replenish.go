// Package replenish is the order workflow: Assess reads a SKU's stock risk;
// Preview shows an order without sending it; Confirm sends it, or stages it
// for a person in approval mode; Approve, Reject and Resolve are a person's
// decisions; a repeated idempotency key replays its first outcome. The MCP
// tools, the approvals command and the console call it and turn the
// results into their own answers. The write gate is coded once, in [Gate].
//
// It drives the ledger's state machine (package state) through its
// operations and never writes a state itself. It speaks neither HTTP nor
// MCP: its dependencies are the small interfaces below.
package replenish

import (
	"context"
	"log/slog"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"go.opentelemetry.io/otel/trace"
)

// Upstream is what the workflow, and the MCP tools around it
// (mcpserver.Upstream is this type), need from StoreLink. Every method is
// called only for a store the keyring holds.
type Upstream interface {
	Store(ctx context.Context, storeID string) (domain.Store, error)
	Inventory(ctx context.Context, storeID, sku string) (domain.Inventory, error)
	Sales(ctx context.Context, storeID, sku string, since time.Time, max int) (domain.SalesPage, error)
	SKU(ctx context.Context, storeID, sku string) (domain.SKU, error)
	Supplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, error)
	Order(ctx context.Context, storeID, orderID string) (domain.Order, error)
	CreateOrder(ctx context.Context, storeID string, req domain.OrderRequest) (domain.Order, error)
}

// Recorder records what StoreLink answered to a send: in the ledger, and in
// the outcome journal while the ledger cannot take it (journal.Recorder).
type Recorder interface {
	Record(ctx context.Context, l journal.Line) journal.Result
}

// AuditLog receives the records of a person's decisions.
type AuditLog interface {
	RecordAudit(ctx context.Context, r state.AuditRecord) error
}

// Workflow is the order workflow of one deployment. Its zero value is not
// usable; set the fields a step needs (Assess needs only Upstream and Now).
type Workflow struct {
	// Upstream is the StoreLink this deployment reads and sends to.
	Upstream Upstream
	// UpstreamID names that StoreLink in the ledger (ADR 0007).
	UpstreamID string
	// Reach connects to the StoreLink a ledger entry was recorded for, for a
	// person's decision taken outside the server (the approvals command),
	// and returns it with its identity. Nil: Upstream, for entries recorded
	// for UpstreamID (or recorded before identities were kept).
	Reach func(ctx context.Context, e state.Entry) (Upstream, string, error)
	// Ledger is the idempotency ledger and the staged approvals.
	Ledger state.Ledger
	// Recorder records send outcomes; nil records in Ledger alone, with
	// retries.
	Recorder Recorder
	// Audit records a person's decisions; nil records none.
	Audit AuditLog
	// Gate is the deployment's write settings.
	Gate Gate
	// Verifier checks the person behind a decision.
	Verifier Verifier
	// Now is the server's clock: the real one, or the embedded demo's pinned
	// one, never a pinned clock against a real StoreLink.
	Now func() time.Time
	// Log receives the workflow's log lines; nil discards them.
	Log *slog.Logger
	// LookbackDays is the preview's sales history for its justification.
	LookbackDays int
	// Tracer makes the send of an order and its staging spans of the call
	// (telemetry.go); nil traces nothing.
	Tracer trace.Tracer
}

func (w *Workflow) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

func (w *Workflow) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// recorder is where send outcomes go: the configured one (ledger and
// outcome journal), else the ledger alone, still with retries.
func (w *Workflow) recorder() Recorder {
	if w.Recorder != nil {
		return w.Recorder
	}
	return &journal.Recorder{Ledger: w.Ledger, Log: w.Log, Now: w.Now}
}
