package tools

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlHost is an in-memory client of revision version that may declare URL
// elicitation, answers every question with action, and records questions
// and completion notifications.
type urlHost struct {
	cs  *mcp.ClientSession
	mu  sync.Mutex
	ask []*mcp.ElicitParams
	// done receives each completed elicitation id.
	done chan string
}

func startURLHost(t *testing.T, w *WriteOptions, now func() time.Time, version string, url bool, action string) *urlHost {
	t.Helper()
	kr := mustKeyring(t, `{"47":"k1"}`)
	srv := New(Options{Upstream: newFake(), Keyring: func() *keyring.Keyring { return kr }, Now: now, Writes: w})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &urlHost{done: make(chan string, 4)}
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
	if url {
		caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "url-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: caps,
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			h.ask = append(h.ask, r.Params)
			h.mu.Unlock()
			return &mcp.ElicitResult{Action: action}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
			h.done <- r.Params.ElicitationID
		},
	})
	if h.cs, err = client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cs.Close(); ss.Wait() })
	return h
}

func (h *urlHost) confirm(t *testing.T, key string) map[string]any {
	t.Helper()
	env, _ := callTool(t, session{cs: h.cs}, "korral_raise_replenishment_order",
		map[string]any{"sku": "8847291", "store_id": "47", "quantity_units": 24, "reason": "Sells out before close", "confirm": true, "idempotency_key": key})
	d, _ := env["data"].(map[string]any)
	if d["mode"] != "pending_approval" && d["mode"] != "replay" || d["approval_id"] == nil {
		t.Fatalf("confirm: %v", env)
	}
	return d
}

func approvalWrites(t *testing.T, console string) (*WriteOptions, *sqlite.DB) {
	t.Helper()
	db := sharedLedger(t)
	return &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, RequireApproval: true, ApprovalTTL: time.Hour, Ledger: db,
		ConsoleURL: console, ApprovalPoll: 5 * time.Millisecond}, db
}

// A host with URL elicitation is asked to open the order's page (the
// approval id is the elicitation id) and told when the approval lapses.
func TestURLElicitationLeadsToTheOrderAndCompletes(t *testing.T) {
	var mu sync.Mutex
	now := testNow
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	w, _ := approvalWrites(t, "https://approvals.korral.example/")
	h := startURLHost(t, w, clock, "2025-11-25", true, "accept")
	d := h.confirm(t, "url-elicit-unit-0001")
	id, _ := d["approval_id"].(string)
	h.mu.Lock()
	asked := h.ask
	h.mu.Unlock()
	if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != "https://approvals.korral.example/orders/"+id || asked[0].ElicitationID != id {
		t.Fatalf("asked %+v, want the order's page under elicitation id %s", asked, id)
	}
	if next, _ := d["next_step"].(string); !strings.Contains(next, "host opened the order's page") || strings.Contains(next, "https://") {
		t.Errorf("next_step %q", next)
	}
	if d["approval_url"] != "https://approvals.korral.example/orders/"+id {
		t.Errorf("approval_url %v, want the order's page (the order view links to it)", d["approval_url"])
	}
	select {
	case got := <-h.done:
		t.Fatalf("complete for %s while the approval is pending", got)
	case <-time.After(50 * time.Millisecond):
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	select {
	case got := <-h.done:
		if got != id {
			t.Errorf("complete for %s, want %s", got, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/elicitation/complete after the approval lapsed")
	}
}

// A host without URL elicitation, or that declines, reads the link in
// next_step; without a console there is no link.
func TestApprovalLinkInTheAnswer(t *testing.T) {
	now := func() time.Time { return testNow }
	for _, c := range []struct {
		name, console string
		url           bool
		action        string
	}{
		{"no URL elicitation", "https://approvals.korral.example", false, "accept"},
		{"declined", "https://approvals.korral.example", true, "decline"},
		{"no console", "", true, "accept"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, _ := approvalWrites(t, c.console)
			h := startURLHost(t, w, now, "2025-11-25", c.url, c.action)
			d := h.confirm(t, "url-elicit-unit-0002")
			id, _ := d["approval_id"].(string)
			next, _ := d["next_step"].(string)
			if c.console == "" {
				if next != "Nothing was sent. Tell the buyer the order awaits a person's approval (approval id above); follow it with korral_get_order_status using the approval id. You cannot approve it yourself." {
					t.Errorf("without a console next_step changed: %q", next)
				}
				if len(h.ask) != 0 {
					t.Errorf("without a console the host was asked %+v", h.ask)
				}
				if _, ok := d["approval_url"]; ok {
					t.Errorf("without a console the answer has approval_url %v", d["approval_url"])
				}
				return
			}
			if !strings.Contains(next, "https://approvals.korral.example/orders/"+id+" ") {
				t.Errorf("next_step lacks the link: %q", next)
			}
			if d["approval_url"] != "https://approvals.korral.example/orders/"+id {
				t.Errorf("approval_url %v", d["approval_url"])
			}
			// The replay says where, too.
			d = h.confirm(t, "url-elicit-unit-0002")
			if next, _ := d["next_step"].(string); !strings.Contains(next, "/orders/"+id) {
				t.Errorf("the replay's next_step lacks the link: %q", next)
			}
		})
	}
}

// On 2026-07-28 the confirm is answered input_required with a URL request;
// the client fulfils it and the retry reads the staged order with its link.
func TestURLRequestOnMultiRoundTrip(t *testing.T) {
	w, _ := approvalWrites(t, "https://approvals.korral.example")
	h := startURLHost(t, w, func() time.Time { return testNow }, "2026-07-28", true, "accept")
	d := h.confirm(t, "url-request-unit-0001")
	id, _ := d["approval_id"].(string)
	if len(h.ask) != 1 || h.ask[0].Mode != "url" || h.ask[0].URL != "https://approvals.korral.example/orders/"+id || h.ask[0].ElicitationID != "" {
		t.Fatalf("asked %+v", h.ask)
	}
	if next, _ := d["next_step"].(string); d["replayed"] != true || !strings.Contains(next, "/orders/"+id) {
		t.Errorf("the retry: %v", d)
	}
}

func TestApprovalSettled(t *testing.T) {
	exp := testNow.Add(time.Hour)
	for st, want := range map[state.EntryState]bool{
		state.StatePendingApproval: false, state.StateSending: false, state.StateRaised: true,
		state.StateRejected: true, state.StateExpired: true, state.StateFailed: true, state.StateUnknown: true,
	} {
		if got := approvalSettled(state.Entry{State: st, ApprovalExpiresAt: exp}, testNow); got != want {
			t.Errorf("%s: settled %v, want %v", st, got, want)
		}
	}
	if !approvalSettled(state.Entry{State: state.StatePendingApproval, ApprovalExpiresAt: exp}, exp) {
		t.Error("a pending approval at its expiry is not settled")
	}
}
