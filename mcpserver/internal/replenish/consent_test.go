package replenish

import (
	"context"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"path/filepath"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

// askingConsent records what it was shown and answers with err.
type askingConsent struct {
	shown []Summary
	err   error
}

func (a *askingConsent) Ask(_ context.Context, s Summary) error {
	a.shown = append(a.shown, s)
	return a.err
}

func hostFlow(t *testing.T, up *fakeStoreLink) *Workflow {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clk := mcptest.NewClock(t0)
	return &Workflow{Upstream: up, UpstreamID: upstreamID, Ledger: db, Audit: db, Now: clk.Now,
		Gate: Gate{AllowWrites: true, MaxOrderUnits: 500, HostConsent: true, Holds: func(id string) bool { return id == "47" }}}
}

// TestHostConsentComesLastAndRefusalsSpendNothing: the person is asked only
// about an order every other check lets through, is shown it as it would
// be sent, and any refusal sends nothing and leaves the key free.
func TestHostConsentComesLastAndRefusalsSpendNothing(t *testing.T) {
	ctx := context.Background()
	up := &fakeStoreLink{minimum: 24}
	w := hostFlow(t, up)
	o := func(qty int64, key string, c Consent) Order {
		return Order{StoreID: "47", SKU: "8847291", QuantityUnits: qty, Reason: "  Stockout before close ", IdempotencyKey: key, RequestedBy: "agent", Consent: c}
	}

	// Refused by the gate (the ceiling, the supplier's minimum): nobody asked.
	for _, qty := range []int64{600, 12} {
		ask := &askingConsent{}
		if _, err := w.Confirm(ctx, o(qty, "gate-refused-0001", ask)); err == nil || len(ask.shown) != 0 {
			t.Errorf("%d units: err=%v, asked %d time(s); want the gate's refusal without asking", qty, err, len(ask.shown))
		}
	}
	// No caller to ask through: refused.
	if _, err := w.Confirm(ctx, o(36, "no-consent-0001", nil)); apperr.CodeOf(err) != apperr.HostConsentUnavailable {
		t.Errorf("no Consent: %v", err)
	}
	// Declined: nothing sent, nothing recorded, and the same key then works.
	no := &askingConsent{err: apperr.New(apperr.HostConsentDeclined, "declined; nothing was sent", "")}
	if _, err := w.Confirm(ctx, o(36, "host-0001", no)); apperr.CodeOf(err) != apperr.HostConsentDeclined {
		t.Fatalf("declined: %v", err)
	}
	if _, found, _ := w.Ledger.Get(ctx, "host-0001"); found || up.orders() != 0 {
		t.Fatalf("a declined order was recorded (%v) or sent (%d)", found, up.orders())
	}
	s := no.shown[0]
	if s.StoreID != "47" || s.StoreName != "Praha Smíchov" || s.ProductName != "Madeta butter 250g" || s.QuantityUnits != 36 || s.CasePack != 12 ||
		s.Reason != "Stockout before close" || s.IdempotencyKey != "host-0001" || s.RequestHash != state.RequestHash("47", "8847291", 36, "Stockout before close") {
		t.Errorf("the person was shown %+v", s)
	}
	yes := &askingConsent{}
	out, err := w.Confirm(ctx, o(36, "host-0001", yes))
	if err != nil || out.Mode != ModeRaised || !out.HostConfirmed || up.orders() != 1 || len(yes.shown) != 1 {
		t.Fatalf("confirmed: %+v, %v (orders %d)", out, err, up.orders())
	}
	// A replay of the raised key sends nothing and asks nobody.
	again := &askingConsent{}
	if out, err := w.Confirm(ctx, o(36, "host-0001", again)); err != nil || out.Mode != ModeReplay || len(again.shown) != 0 || up.orders() != 1 {
		t.Errorf("replay: %+v, %v, asked %d", out, err, len(again.shown))
	}
}
