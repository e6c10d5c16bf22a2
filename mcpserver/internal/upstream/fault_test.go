package upstream

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
)

// TestRedirectIsAContractErrorAndSendsNothingOn: a 302 or 307 to a second
// server reaches nothing there; reads are UPSTREAM_CONTRACT_ERROR naming
// status and host, and an order is "not sent".
func TestRedirectIsAContractErrorAndSendsNothingOn(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var reached atomic.Int32
			second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, inventoryBody)
			}))
			defer second.Close()
			first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, second.URL+r.URL.Path+"?"+r.URL.RawQuery+"&session=opaque", status)
			}))
			defer first.Close()
			host := strings.TrimPrefix(second.URL, "http://")
			c, logs := newClient(t, first.URL, &fakeKeys{current: map[string]string{"47": "secret-key-47"}}, nil)
			ctx := callid.With(context.Background(), "call-redirect")

			_, readErr := c.Inventory(ctx, "47", "8847291")
			_, storeErr := c.Store(ctx, "47")
			_, writeErr := c.CreateOrder(ctx, "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"})
			for what, err := range map[string]error{"inventory": readErr, "store": storeErr, "order": writeErr} {
				ae := apperr.From(err)
				if ae == nil {
					t.Errorf("%s: no error; the redirect was followed", what)
					continue
				}
				want := []string{"UPSTREAM_BASE_URL", strconv.Itoa(status) + " redirect to " + host, "not followed"}
				for _, w := range want {
					if !strings.Contains(ae.Message, w) {
						t.Errorf("%s: message %q lacks %q", what, ae.Message, w)
					}
				}
				if ae.Code != apperr.UpstreamContractError {
					t.Errorf("%s: code %s, want UPSTREAM_CONTRACT_ERROR", what, ae.Code)
				}
				if strings.Contains(ae.Message+ae.Remediation, "session=opaque") {
					t.Errorf("%s: the answer repeats the Location's query: %q", what, ae.Message)
				}
			}
			if ae := apperr.From(writeErr); ae == nil || ae.Reach != apperr.ReachNotSent || !strings.Contains(ae.Message, "the order was not raised") {
				t.Errorf("order: %v; want not sent", writeErr)
			}
			if n := reached.Load(); n != 0 {
				t.Fatalf("%d request(s) reached the redirect's target", n)
			}
			if strings.Contains(logs.String(), "secret-key-47") || strings.Contains(logs.String(), "session=opaque") {
				t.Fatalf("the log repeats the key or the Location's query:\n%s", logs)
			}
			lines := logLines(t, logs)
			if !hasLine(lines, map[string]any{"msg": "upstream.contract_error", "level": "WARN", "call_id": "call-redirect", "field": "status",
				"rule": strconv.Itoa(status) + " redirect to " + host + ", not followed"}) {
				t.Errorf("no contract_error line naming the redirect:\n%s", logs)
			}
		})
	}
}

// TestContractErrorsNameTheirCause: each broken answer's error and warn line
// name field and rule, and neither repeats what StoreLink sent.
func TestContractErrorsNameTheirCause(t *testing.T) {
	const poison = "Mars/Olympus-XYZZY"
	store := func(tz, mondayOpens string) string {
		return `{"store_id":"47","name":"Praha","timezone":"` + tz + `","opening_hours":{
			"monday":{"closed":false,"opens":"` + mondayOpens + `","closes":"22:00"},"tuesday":{"closed":true},"wednesday":{"closed":true},
			"thursday":{"closed":true},"friday":{"closed":true},"saturday":{"closed":true},"sunday":{"closed":true}}}`
	}
	cases := []struct {
		name        string
		body        string
		contentType string
		status      int
		call        func(*Client, context.Context) error
		field, rule string
		id          string // the semantic rule's id, when one is broken
		code        apperr.Code
		msg         string // in the message; the cause when empty
	}{
		{name: "timezone", body: store(poison, "07:00"), field: "store.timezone", rule: "not an IANA time zone", id: "store.timezone.iana"},
		{name: "empty timezone", body: store("", "07:00"), field: "store.timezone", rule: "empty, the contract asks for at least 1 character", id: "schema.min_length"},
		// Opening hours only qualify; unreadable ones degrade the answer.
		{name: "store echo", body: strings.Replace(store("Europe/Prague", "07:00"), `"47"`, `"48"`, 1), field: "store.store_id", rule: "not the store of the request", id: "path.store_id"},
		{name: "wrong type", body: `{"store_id":"47","sku":"8847291","on_hand_units":"` + poison + `","counted_at":"2026-11-27T06:00:00+01:00"}`,
			call: inventory, field: "inventory.on_hand_units", rule: "want an integer", id: "schema.type"},
		{name: "wrong number", body: `{"store_id":"47","sku":"8847291","on_hand_units":4.75e300,"counted_at":"2026-11-27T06:00:00+01:00"}`,
			call: inventory, field: "inventory.on_hand_units", rule: "want an integer", id: "schema.type"},
		// A sale's time decides; the count's time only qualifies
		// (TestMissingQualifiersAreUnknown).
		{name: "bad timestamp", body: `{"store_id":"47","sku":"8847291","since":"2026-11-26T06:00:00+01:00","total_count":1,"transactions":[{"transaction_id":"T1","timestamp":"` + poison + `","units":1}]}`,
			call: func(c *Client, ctx context.Context) error {
				_, err := c.Sales(ctx, "47", "8847291", time.Date(2026, 11, 26, 6, 0, 0, 0, time.FixedZone("", 3600)), 10)
				return err
			}, field: "pos", rule: "a timestamp is not RFC 3339", id: "schema.type"},
		{name: "not JSON", body: `{"store_id":"47"`, call: inventory, field: "body", rule: "not valid JSON"},
		// A missing field would decode as an on-hand count of 0.
		{name: "required field missing", body: `{"store_id":"47","sku":"8847291","counted_at":"2026-11-27T06:00:00+01:00"}`,
			call: inventory, field: "inventory.on_hand_units", rule: "required but missing", id: "schema.required"},
		{name: "not JSON by type", body: poison, contentType: "text/plain", call: inventory, field: "body", rule: "not JSON (by its Content-Type)",
			msg: "with a body that is not JSON"},
		{name: "wrong success status", body: inventoryBody, status: 203, call: inventory, field: "status", rule: "203 where the contract says 200"},
		{name: "error body on 200", body: `{"error":{"code":"internal","message":"` + poison + `"}}`, call: inventory,
			field: "body", rule: "an error body on a success status", msg: `a success status but an error body (code "internal")`},
		{name: "minimum", body: `{"supplier_id":"SUP-1","name":"S","lead_time_days":2,"minimum_order_units":-3}`,
			call:  func(c *Client, ctx context.Context) error { _, err := c.Supplier(ctx, "47", "SUP-1"); return err },
			field: "supplier.minimum_order_units", rule: "outside 1 to 100000", id: "supplier.range"},
		{name: "unreadable order", body: `{"order_id":5,"store_id":"47"}`, status: 201,
			call: func(c *Client, ctx context.Context) error {
				_, err := c.CreateOrder(ctx, "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"})
				return err
			},
			field: "order.order_id", rule: "want a string", id: "schema.type", code: apperr.WriteOutcomeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{"Content-Type": cmp.Or(tc.contentType, "application/json")}
			c, logs := newClient(t, answering(t, max(tc.status, http.StatusOK), header, tc.body), keys47(), nil)
			ctx := callid.With(context.Background(), "call-"+strings.ReplaceAll(tc.name, " ", "-"))
			call := tc.call
			if call == nil {
				call = func(c *Client, ctx context.Context) error { _, err := c.Store(ctx, "47"); return err }
			}
			ae := apperr.From(call(c, ctx))
			want := tc.code
			if want == "" {
				want = apperr.UpstreamContractError
			}
			cause := tc.field + ": " + tc.rule
			line := map[string]any{"msg": "upstream.contract_error", "level": "WARN", "call_id": callid.From(ctx), "field": tc.field, "rule": tc.rule}
			if tc.id != "" {
				cause += " (rule " + tc.id + ")"
				line["rule_id"] = tc.id
			}
			msg := cmp.Or(tc.msg, cause)
			if ae.Code != want || !strings.Contains(ae.Message, msg) {
				t.Fatalf("got %s %q; want %s naming %q", ae.Code, ae.Message, want, msg)
			}
			if ae.Cause == nil || ae.Cause.Error() != cause {
				t.Errorf("cause %v, want %q", ae.Cause, cause)
			}
			if !hasLine(logLines(t, logs), line) {
				t.Errorf("no warn line under call id %s naming %q:\n%s", callid.From(ctx), cause, logs)
			}
			if strings.Contains(ae.Message+ae.Remediation+logs.String(), "XYZZY") || strings.Contains(logs.String(), "4.75e300") {
				t.Errorf("StoreLink's text reached the answer or the log:\n%s\n%s", ae.Message, logs)
			}
		})
	}
}

func inventory(c *Client, ctx context.Context) error {
	_, err := c.Inventory(ctx, "47", "8847291")
	return err
}

// TestCauseIsBounded: the cause stays short however long the path or rule.
func TestCauseIsBounded(t *testing.T) {
	f := &fault{field: "store." + strings.Repeat("x", 300), rule: strings.Repeat("y", 300)}
	if n := len(f.Error()); n > maxCause {
		t.Fatalf("cause is %d bytes, want at most %d", n, maxCause)
	}
	if got := fieldPath("pos", "transactions.Units\nX"); got != "pos.(a field)" {
		t.Errorf("fieldPath kept an unexpected path: %q", got)
	}
}

func logLines(t *testing.T, logs *mcptest.SyncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func hasLine(lines []map[string]any, want map[string]any) bool {
	for _, l := range lines {
		ok := true
		for k, v := range want {
			if l[k] != v {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}
