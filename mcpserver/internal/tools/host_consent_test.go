package tools

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testSealer is a host consent sealer with a fixed key and the real clock.
func testSealer(t *testing.T) *consent.Sealer {
	t.Helper()
	s, err := consent.NewSealer(make([]byte, consent.KeyBytes), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHostConsentStateExpires: a 2026-07-28 client answering at the last
// instant before the sealed state's expiry sends the order; at the expiry
// it sends nothing.
func TestHostConsentStateExpires(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return testNow.Add(time.Duration(offset.Load())) }
	db := sharedLedger(t)
	sealer, err := consent.NewSealer(make([]byte, consent.KeyBytes), now)
	if err != nil {
		t.Fatal(err)
	}
	up := newFake()
	kr := mustKeyring(t, `{"47":"k1"}`)
	srv := New(Options{Upstream: up, Keyring: func() *keyring.Keyring { return kr }, Now: now,
		Writes: &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: db, HostConsent: sealer, ConsentNonces: db}})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "expiry-host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the 2026-07-28 session was sent an elicitation request")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })

	args := func(key string) map[string]any {
		return map[string]any{"sku": "8847291", "store_id": "47", "quantity_units": 24, "reason": "Sells out before close", "confirm": true, "idempotency_key": key}
	}
	ask := func(key string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_raise_replenishment_order", Arguments: args(key)})
		if err != nil || !res.NeedsInput() || res.RequestState == "" || res.InputRequests[consentInputID] == nil {
			t.Fatalf("want input_required: %+v, %v", res, err)
		}
		return res.RequestState
	}
	answer := func(key, st string) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_raise_replenishment_order", Arguments: args(key), RequestState: st,
			InputResponses: mcp.InputResponseMap{consentInputID: &mcp.ElicitResult{Action: "accept", Content: map[string]any{consentField: 24}}}})
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env)
		return env
	}
	code := func(env map[string]any) string {
		e, _ := env["error"].(map[string]any)
		c, _ := e["code"].(string)
		return c
	}

	late := ask("expiry-late-0001")
	offset.Store(int64(consent.StateTTL))
	if env := answer("expiry-late-0001", late); code(env) != "HOST_CONSENT_STATE_EXPIRED" {
		t.Errorf("answered at the expiry: %v", env)
	}
	if n := len(up.created); n != 0 {
		t.Fatalf("an expired consent sent %d order(s)", n)
	}

	offset.Store(0)
	inTime := ask("expiry-in-time-0001")
	offset.Store(int64(consent.StateTTL - time.Nanosecond))
	if env := answer("expiry-in-time-0001", inTime); env["ok"] != true {
		t.Errorf("answered an instant before the expiry: %v", env)
	}
	if n := len(up.created); n != 1 {
		t.Fatalf("a consent in time sent %d order(s), want 1", n)
	}
}
