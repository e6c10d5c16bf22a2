// Package replenish is the order workflow: assess, preview, confirm or
// stage, and a person's approve, reject and resolve. The write gate lives
// in [Gate]. It drives the ledger only through its operations and speaks
// neither HTTP nor MCP.
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

// Upstream is what the workflow and the MCP tools need from StoreLink.
// Every method is called only for a store the keyring holds.
type Upstream interface {
	Store(ctx context.Context, storeID string) (domain.Store, error)
	Inventory(ctx context.Context, storeID, sku string) (domain.Inventory, error)
	Sales(ctx context.Context, storeID, sku string, since time.Time, max int) (domain.SalesPage, error)
	SKU(ctx context.Context, storeID, sku string) (domain.SKU, error)
	Supplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, error)
	Order(ctx context.Context, storeID, orderID string) (domain.Order, error)
	CreateOrder(ctx context.Context, storeID string, req domain.OrderRequest) (domain.Order, error)
}

// Recorder records what StoreLink answered to a send (journal.Recorder).
type Recorder interface {
	Record(ctx context.Context, l journal.Line) journal.Result
}

// AuditLog receives the records of a person's decisions.
type AuditLog interface {
	RecordAudit(ctx context.Context, r state.AuditRecord) error
}

// Workflow is one deployment's order workflow; set the fields a step needs.
type Workflow struct {
	// Upstream is the StoreLink this deployment reads and sends to.
	Upstream Upstream
	// UpstreamID names that StoreLink in the ledger (ADR 0007).
	UpstreamID string
	// Reach connects to the StoreLink an entry was recorded for (used by
	// the approvals command). Nil: Upstream.
	Reach func(ctx context.Context, e state.Entry) (Upstream, string, error)
	// Ledger is the idempotency ledger and the staged approvals.
	Ledger state.Ledger
	// Recorder records send outcomes; nil: Ledger alone, with retries.
	Recorder Recorder
	// Audit records a person's decisions; nil records none.
	Audit AuditLog
	// Gate is the deployment's write settings.
	Gate Gate
	// Verifier checks the person behind a decision.
	Verifier Verifier
	// Now is the server's clock.
	Now func() time.Time
	// Log receives the workflow's log lines; nil discards them.
	Log *slog.Logger
	// LookbackDays is the preview's sales history for its justification.
	LookbackDays int
	// Tracer traces sends and staging; nil traces nothing.
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

// recorder returns the configured recorder, else the ledger alone.
func (w *Workflow) recorder() Recorder {
	if w.Recorder != nil {
		return w.Recorder
	}
	return &journal.Recorder{Ledger: w.Ledger, Log: w.Log, Now: w.Now}
}
