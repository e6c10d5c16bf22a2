package replenish

import (
	"context"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
)

// Consent asks the person at the host to confirm an order before it is
// sent (WRITE_APPROVAL=host). The caller implements it: only the caller knows
// how to reach its host (an MCP form elicitation, or an input_required
// answer the client retries).
type Consent interface {
	// Ask shows s to the person and returns nil only when they confirmed
	// it as shown; any other answer is an error in the taxonomy (the
	// HOST_CONSENT_* codes), and nothing is sent.
	Ask(ctx context.Context, s Summary) error
}

// Summary is what the person at the host is shown before an order is sent,
// and what their confirmation is bound to.
type Summary struct {
	StoreID        string
	StoreName      string
	SKU            string
	ProductName    string
	QuantityUnits  int64
	CasePack       int64
	Reason         string
	IdempotencyKey string
	// RequestHash is the ledger's fingerprint of the request.
	RequestHash string
	RequestedBy string
	// Cover is the days of cover after delivery; nil when the sell rate is
	// unknown.
	Cover *CoverBand
}

// askConsent builds the summary of the order about to be sent and asks
// the caller's Consent. Without one, no person can be asked, and nothing is
// sent.
func (w *Workflow) askConsent(ctx context.Context, o Order, out *Outcome) error {
	if o.Consent == nil {
		return apperr.New(apperr.HostConsentUnavailable, "this caller cannot ask a person at the host to confirm the order; nothing was sent", "")
	}
	req := out.Request
	st, err := w.Upstream.Store(ctx, out.StoreID)
	if err != nil {
		return err
	}
	risk, err := w.Assess(ctx, out.StoreID, req.SKU, w.LookbackDays)
	if err != nil {
		return err
	}
	var sku domain.SKU
	if sku, err = w.Upstream.SKU(ctx, out.StoreID, req.SKU); err != nil {
		return err
	}
	return o.Consent.Ask(ctx, Summary{
		StoreID: out.StoreID, StoreName: st.Name, SKU: req.SKU, ProductName: sku.Name,
		QuantityUnits: req.QuantityUnits, CasePack: sku.CasePack, Reason: req.Reason,
		IdempotencyKey: out.IdempotencyKey, RequestHash: requestHash(out.StoreID, req), RequestedBy: o.RequestedBy,
		Cover: justify(risk, req.QuantityUnits).DaysOfCoverAfterDelivery,
	})
}
