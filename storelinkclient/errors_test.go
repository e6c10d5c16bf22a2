package storelinkclient_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sl "github.com/korral/storelink/storelinkclient"
)

// requestFailing makes the request that gets status: 422 is only documented
// for raising an order; the others are checked on the inventory read. A
// result alongside the error fails the test.
func requestFailing(t *testing.T, c *sl.ClientWithResponses, status int) error {
	t.Helper()
	var err error
	if status == 422 {
		var order *sl.Order
		order, err = sl.Result(c.CreateReplenishmentOrderWithResponse(t.Context(), "47",
			sl.OrderRequest{SKU: "8847291", QuantityUnits: 2, Reason: "top up"}, sl.WithStoreKey(testKey)))
		if order != nil {
			t.Errorf("got order %+v alongside the error", order)
		}
	} else {
		var inv *sl.Inventory
		inv, err = sl.Result(c.GetInventoryWithResponse(t.Context(), "47",
			&sl.GetInventoryParams{SKU: "8847291"}, sl.WithStoreKey(testKey)))
		if inv != nil {
			t.Errorf("got inventory %+v alongside the error", inv)
		}
	}
	return err
}

// errorStatus is a documented failure status, its example body and what the client makes of it.
type errorStatus struct {
	status     int
	body       string
	retryAfter string
	want       sl.APIError
	temporary  bool
	text       string
}

// errorStatuses are the statuses TestErrorStatuses sends.
var errorStatuses = []errorStatus{
	{
		status: 400, body: `{"error":{"code":"invalid_parameter","message":"limit must be between 1 and 1000"}}`,
		want: sl.APIError{StatusCode: 400, Code: "invalid_parameter", Message: "limit must be between 1 and 1000"},
		text: "storelink: 400 invalid_parameter: limit must be between 1 and 1000",
	},
	{
		status: 401, body: `{"error":{"code":"invalid_key","message":"the store key is missing or not valid"}}`,
		want: sl.APIError{StatusCode: 401, Code: "invalid_key", Message: "the store key is missing or not valid"},
		text: "storelink: 401 invalid_key: the store key is missing or not valid",
	},
	{
		status: 403, body: `{"error":{"code":"store_forbidden","message":"this key does not open store 55"}}`,
		want: sl.APIError{StatusCode: 403, Code: "store_forbidden", Message: "this key does not open store 55"},
		text: "storelink: 403 store_forbidden: this key does not open store 55",
	},
	{
		status: 404, body: `{"error":{"code":"not_found","message":"sku 1234567 not found"}}`,
		want: sl.APIError{StatusCode: 404, Code: "not_found", Message: "sku 1234567 not found"},
		text: "storelink: 404 not_found: sku 1234567 not found",
	},
	{
		status: 422, body: `{"error":{"code":"below_minimum_order","message":"the supplier's minimum order is 12 units"}}`,
		want: sl.APIError{StatusCode: 422, Code: "below_minimum_order", Message: "the supplier's minimum order is 12 units"},
		text: "storelink: 422 below_minimum_order: the supplier's minimum order is 12 units",
	},
	{
		status: 429, body: `{"error":{"code":"rate_limited","message":"rate limit exceeded"}}`, retryAfter: "30",
		want:      sl.APIError{StatusCode: 429, Code: "rate_limited", Message: "rate limit exceeded", RetryAfter: 30 * time.Second},
		temporary: true,
		text:      "storelink: 429 rate_limited: rate limit exceeded",
	},
	{
		status: 500, body: `{"error":{"code":"internal","message":"internal error"}}`,
		want:      sl.APIError{StatusCode: 500, Code: "internal", Message: "internal error"},
		temporary: true,
		text:      "storelink: 500 internal: internal error",
	},
	{
		status: 503, body: `{"error":{"code":"unavailable","message":"store systems are under maintenance"}}`, retryAfter: "120",
		want:      sl.APIError{StatusCode: 503, Code: "unavailable", Message: "store systems are under maintenance", RetryAfter: 2 * time.Minute},
		temporary: true,
		text:      "storelink: 503 unavailable: store systems are under maintenance",
	},
}

// TestErrorStatuses sends each documented failure status, with the spec's
// example body, through a real server and the generated client.
func TestErrorStatuses(t *testing.T) {
	for _, tt := range errorStatuses {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				writeJSON(w, tt.status, tt.body)
			}), sl.WithResponseLimit(sl.DefaultResponseLimit))
			err := requestFailing(t, c, tt.status)
			var apiErr *sl.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if diff := cmp.Diff(tt.want, *apiErr); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if apiErr.Temporary() != tt.temporary {
				t.Errorf("Temporary() = %v, want %v", apiErr.Temporary(), tt.temporary)
			}
			if apiErr.Error() != tt.text {
				t.Errorf("Error() = %q, want %q", apiErr.Error(), tt.text)
			}
			if errors.Is(err, sl.ErrMalformedResponse) {
				t.Errorf("a well-formed error response is reported as malformed: %v", err)
			}
		})
	}
}

// TestErrorBodyOnSuccessStatus covers StoreLink's habit of answering 200 with
// an error envelope: it must be an error, never a zero-valued record.
func TestErrorBodyOnSuccessStatus(t *testing.T) {
	const body = `{"error":{"code":"internal","message":"pricing service timed out"}}`
	c, mt := newMockClient(t)
	mt.RegisterResponder(http.MethodGet, "https://storelink.test/v1/skus/4000001", jsonResponder(200, body))
	mt.RegisterResponder(http.MethodGet, `=~^https://storelink\.test/v1/stores/47/pos`, jsonResponder(200, body))

	sku, err := sl.Result(c.GetSKUWithResponse(t.Context(), "4000001", sl.WithStoreKey(testKey)))
	if sku != nil {
		t.Errorf("got SKU %+v from an error body", sku)
	}
	var apiErr *sl.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	want := sl.APIError{StatusCode: 200, Code: "internal", Message: "pricing service timed out", ErrorInSuccess: true}
	if diff := cmp.Diff(want, *apiErr); diff != "" {
		t.Errorf("APIError (-want +got):\n%s", diff)
	}
	if apiErr.Temporary() {
		t.Error("an error body on 200 is reported as temporary")
	}
	if got, wantText := apiErr.Error(), "storelink: 200 internal: pricing service timed out (error body on a success status)"; got != wantText {
		t.Errorf("Error() = %q, want %q", got, wantText)
	}

	// The walk over POS pages must stop on it too, not yield nothing and end.
	var yielded int
	for tx, err := range sl.AllPOSTransactions(t.Context(), c, "47",
		sl.ListPOSTransactionsParams{SKU: "8847291", Since: at(11, 27, 10, 0, 0)}, 5, sl.WithStoreKey(testKey)) {
		yielded++
		if !errors.As(err, &apiErr) || !apiErr.ErrorInSuccess {
			t.Errorf("walk yielded (%+v, %v), want an error-in-success *APIError", tx, err)
		}
	}
	if yielded != 1 {
		t.Errorf("walk yielded %d times, want 1", yielded)
	}
}

// TestMalformedSuccessBody checks that a success status with an unusable body
// is a clear ErrMalformedResponse naming the operation, never a nil value
// with a nil error.
func TestMalformedSuccessBody(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantText    string
	}{
		{"truncated JSON", 200, "application/json", `{"store_id":"47","sku":`, "unexpected end of JSON input"},
		{"not JSON", 200, "application/json", `<html>gateway</html>`, "invalid character"},
		{"wrong type", 200, "application/json", `{"store_id":"47","sku":"8847291","on_hand_units":"nine"}`, "on_hand_units"},
		{"timestamp not a string", 200, "application/json", `{"counted_at":1764307800}`, "Time.UnmarshalJSON"},
		{"bad timestamp", 200, "application/json", `{"counted_at":"yesterday"}`, `parsing time "yesterday"`},
		{"array", 200, "application/json", `[1,2,3]`, "cannot unmarshal array"},
		{"not JSON content type", 200, "text/plain", `9 on hand`, `content type "text/plain" is not JSON`},
		{"no content", 204, "", ``, "status 204, want 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			inv, err := sl.Result(c.GetInventoryWithResponse(t.Context(), "47",
				&sl.GetInventoryParams{SKU: "8847291"}, sl.WithStoreKey(testKey)))
			if inv != nil {
				t.Errorf("got inventory %+v", inv)
			}
			if !errors.Is(err, sl.ErrMalformedResponse) {
				t.Fatalf("error %v is not ErrMalformedResponse", err)
			}
			for _, want := range []string{"getInventory", tt.wantText} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestUnexpectedSuccessStatus checks that raising an order answered with 200
// rather than the documented 201 is not taken for an order.
func TestUnexpectedSuccessStatus(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder(http.MethodPost, "https://storelink.test/v1/stores/47/replenishment", jsonResponder(200, exampleOrder))
	order, err := sl.Result(c.CreateReplenishmentOrderWithResponse(t.Context(), "47",
		sl.OrderRequest{SKU: "8847291", QuantityUnits: 24, Reason: "gap"}, sl.WithStoreKey(testKey)))
	if order != nil || !errors.Is(err, sl.ErrMalformedResponse) {
		t.Fatalf("got (%+v, %v), want ErrMalformedResponse", order, err)
	}
	if !strings.Contains(err.Error(), "createReplenishmentOrder: status 200, want 201") {
		t.Errorf("error %q does not name the operation and statuses", err)
	}
}

// TestTransportErrorPassesThrough checks that Result does not disguise a
// failed request as a StoreLink answer.
func TestTransportErrorPassesThrough(t *testing.T) {
	c, mt := newMockClient(t)
	boom := errors.New("connection reset by peer")
	mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) { return nil, boom })
	store, err := sl.Result(c.GetStoreWithResponse(t.Context(), "47", sl.WithStoreKey(testKey)))
	if store != nil || !errors.Is(err, boom) {
		t.Fatalf("got (%+v, %v), want the transport error", store, err)
	}
	var apiErr *sl.APIError
	if errors.As(err, &apiErr) || errors.Is(err, sl.ErrMalformedResponse) {
		t.Errorf("transport error %v is classified as a StoreLink answer", err)
	}
}

// TestFailureStatusWithUnreadableBody checks what happens when a failure
// status comes with a body the generated decoder cannot read: an error,
// either way, never data and never a panic.
func TestFailureStatusWithUnreadableBody(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     []string
		body       string
		wantAPIErr *sl.APIError
	}{
		// Not JSON by content type: the decoder skips the body, so the status
		// survives as an APIError without code or message.
		{"HTML from a proxy", 502, []string{"Content-Type", "text/html"}, "<h1>Bad Gateway</h1>",
			&sl.APIError{StatusCode: 502}},
		{"plain 503", 503, []string{"Content-Type", "text/plain", "Retry-After", "7"}, "maintenance",
			&sl.APIError{StatusCode: 503, RetryAfter: 7 * time.Second}},
		// Declared JSON but is not, or a 429 whose Retry-After is a date:
		// the generated decoder fails before the status can be seen.
		{"garbled JSON 500", 500, []string{"Content-Type", "application/json"}, "{oops", nil},
		{"429 with a date", 429, []string{"Content-Type", "application/json", "Retry-After", "Sat, 28 Nov 2026 10:00:00 GMT"},
			`{"error":{"code":"rate_limited","message":"rate limit exceeded"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt := newMockClient(t)
			mt.RegisterNoResponder(jsonResponder(tt.status, tt.body, tt.header...))
			sup, err := sl.Result(c.GetSupplierWithResponse(t.Context(), "SUP-MADETA", sl.WithStoreKey(testKey)))
			if sup != nil || err == nil {
				t.Fatalf("got (%+v, %v), want an error", sup, err)
			}
			if tt.wantAPIErr == nil {
				if !errors.Is(err, sl.ErrMalformedResponse) {
					t.Errorf("error %v is not ErrMalformedResponse", err)
				}
				return
			}
			var apiErr *sl.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if diff := cmp.Diff(*tt.wantAPIErr, *apiErr); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckResponse exercises the parts of CheckResponse the generated client
// cannot reach: both Retry-After forms, redaction and bounds.
func TestCheckResponse(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   *sl.APIError
	}{
		{"success", 200, nil, exampleInventory, nil},
		{"success naming error in a value", 200, nil, `{"reason":"\"error\" in a reason"}`, nil},
		{"success with null error", 200, nil, `{"error":null}`, nil},
		{"error as a bare string", 200, nil, `{"error":"boom"}`,
			&sl.APIError{StatusCode: 200, Message: "boom", ErrorInSuccess: true}},
		{"201 with error body", 201, nil, `{"error":{"code":"unavailable","message":"try later"}}`,
			&sl.APIError{StatusCode: 201, Code: "unavailable", Message: "try later", ErrorInSuccess: true}},
		{"retry after HTTP date", 503,
			http.Header{"Retry-After": {"Sat, 28 Nov 2026 10:01:30 GMT"}, "Date": {"Sat, 28 Nov 2026 10:00:00 GMT"}},
			`{"error":{"code":"unavailable","message":"maintenance"}}`,
			&sl.APIError{StatusCode: 503, Code: "unavailable", Message: "maintenance", RetryAfter: 90 * time.Second}},
		{"retry after date in the past", 429,
			http.Header{"Retry-After": {"Sat, 28 Nov 2026 09:00:00 GMT"}, "Date": {"Sat, 28 Nov 2026 10:00:00 GMT"}},
			`{"error":{"code":"rate_limited","message":"slow down"}}`,
			&sl.APIError{StatusCode: 429, Code: "rate_limited", Message: "slow down"}},
		{"retry after overflowing", 429, http.Header{"Retry-After": {"99999999999999999999"}}, ``,
			&sl.APIError{StatusCode: 429}},
		{"retry after huge but parseable", 429, http.Header{"Retry-After": {"900000"}}, ``,
			&sl.APIError{StatusCode: 429, RetryAfter: 24 * time.Hour}},
		{"retry after garbage", 429, http.Header{"Retry-After": {"soon"}}, ``,
			&sl.APIError{StatusCode: 429}},
		{"retry after negative", 429, http.Header{"Retry-After": {"-5"}}, ``,
			&sl.APIError{StatusCode: 429}},
		{"retry after ignored on 500", 500, http.Header{"Retry-After": {"30"}}, ``,
			&sl.APIError{StatusCode: 500}},
		{"proxy body not copied", 502, nil, "<html>upstream said: " + testKey + "</html>",
			&sl.APIError{StatusCode: 502}},
		{"key redacted", 401, nil, `{"error":{"code":"invalid_key","message":"key ` + testKey + ` was rotated"}}`,
			&sl.APIError{StatusCode: 401, Code: "invalid_key", Message: "key [redacted] was rotated"}},
		{"single line", 400, nil, `{"error":{"code":"invalid_parameter","message":"bad sku\nX-Fake: yes\r\n"}}`,
			&sl.APIError{StatusCode: 400, Code: "invalid_parameter", Message: "bad sku X-Fake: yes"}},
		{"message bounded", 500, nil, `{"error":{"code":"internal","message":"` + long + `"}}`,
			&sl.APIError{StatusCode: 500, Code: "internal", Message: strings.Repeat("é", 250)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, "https://storelink.test/v1/stores/47", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(sl.StoreKeyHeader, testKey)
			resp := &http.Response{StatusCode: tt.status, Header: tt.header, Request: req}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			err = sl.CheckResponse(resp, []byte(tt.body))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckResponse = %v, want nil", err)
				}
				return
			}
			var apiErr *sl.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("CheckResponse = %v (%T), want an *APIError", err, err)
			}
			if diff := cmp.Diff(*tt.want, *apiErr); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if strings.Contains(apiErr.Error(), testKey) {
				t.Errorf("Error() %q contains the store key", apiErr.Error())
			}
		})
	}
}

func TestCheckResponseNil(t *testing.T) {
	if err := sl.CheckResponse(nil, nil); err == nil {
		t.Error("CheckResponse(nil) = nil, want an error")
	}
}

func TestAPIErrorText(t *testing.T) {
	tests := []struct {
		err  sl.APIError
		want string
	}{
		{sl.APIError{StatusCode: 404, Code: "not_found", Message: "sku 1 not found"}, "storelink: 404 not_found: sku 1 not found"},
		{sl.APIError{StatusCode: 502}, "storelink: 502 Bad Gateway"},
		{sl.APIError{StatusCode: 409, Code: "conflict"}, "storelink: 409 conflict"},
		{sl.APIError{StatusCode: 400, Message: "bad"}, "storelink: 400: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
