package mockstorelink_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mockstorelink"
)

func adminDo(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestAdminDisabledWithoutToken(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	for _, tok := range []string{"", "anything"} {
		status, body := adminDo(t, "GET", m.URL+"/_admin/keys", tok, "")
		if status != 404 || strings.Contains(string(body), "slk_") {
			t.Errorf("token %q: %d %s", tok, status, body)
		}
	}
	if n := m.Server.RequestCount(nil); n != 0 {
		t.Errorf("admin calls were recorded as API requests: %d", n)
	}
}

// adminWorld is a mock with the admin endpoint at u, enabled by token.
type adminWorld struct {
	m        *mockstorelink.Running
	u, token string
}

// TestAdminEndpoint runs its steps in order: adminKeys sets store 47's key
// to k-47, which the later steps use.
func TestAdminEndpoint(t *testing.T) {
	t.Parallel()
	const token = "admin-secret"
	m := start(t, mockstorelink.Options{AdminToken: token})
	w := adminWorld{m: m, u: m.URL + "/_admin", token: token}
	adminKeys(t, w)
	adminFaults(t, w)
	adminRecords(t, w)
}

// adminKeys lists, rotates and sets keys over HTTP.
func adminKeys(t *testing.T, w adminWorld) {
	for _, tok := range []string{"", "wrong"} {
		if status, body := adminDo(t, "GET", w.u+"/keys", tok, ""); status != 401 || errorCode(t, body) != "invalid_admin_token" {
			t.Errorf("w.token %q: %d %s", tok, status, body)
		}
	}

	status, body := adminDo(t, "GET", w.u+"/keys", w.token, "")
	var keys map[string]string
	if status != 200 || json.Unmarshal(body, &keys) != nil {
		t.Fatalf("keys: %d %s", status, body)
	}
	if diff := cmp.Diff(w.m.Server.Keys(), keys); diff != "" {
		t.Errorf("keys (-Go +admin):\n%s", diff)
	}

	// Rotate over HTTP: the old key stops working at once.
	old := keys["47"]
	status, body = adminDo(t, "POST", w.u+"/keys/47/rotate", w.token, "")
	var rotated struct{ StoreID, Key string }
	if status != 200 || json.Unmarshal(body, &rotated) != nil || rotated.Key == old || rotated.Key == "" {
		t.Fatalf("rotate: %d %s", status, body)
	}
	if s, _, _ := rawGet(t, w.m.URL+"/v1/stores/47", old); s != 401 {
		t.Errorf("old key after admin rotation: %d", s)
	}
	if s, _, _ := rawGet(t, w.m.URL+"/v1/stores/47", rotated.Key); s != 200 {
		t.Errorf("new key after admin rotation: %d", s)
	}
	if s, _ := adminDo(t, "POST", w.u+"/keys/999/rotate", w.token, ""); s != 404 {
		t.Errorf("rotate unknown store: %d", s)
	}
	if s, _ := adminDo(t, "PUT", w.u+"/keys/47", w.token, `{"key":"k-47"}`); s != 204 {
		t.Errorf("set key: %d", s)
	}
	if s, _, _ := rawGet(t, w.m.URL+"/v1/stores/47", "k-47"); s != 200 {
		t.Errorf("key set over admin: %d", s)
	}
}

// adminFaults sets, lists and clears faults over HTTP.
func adminFaults(t *testing.T, w adminWorld) {
	if s, b := adminDo(t, "PUT", w.u+"/faults", w.token, `[{"kind":"explode"}]`); s != 400 {
		t.Errorf("bad fault accepted: %d %s", s, b)
	}
	if s, _ := adminDo(t, "PUT", w.u+"/faults", w.token, `[{"kind":"rate_limit","retry_after":3,"operation_id":"getStore"}]`); s != 204 {
		t.Fatalf("set faults: %d", s)
	}
	if s, _, _ := rawGet(t, w.m.URL+"/v1/stores/47", "k-47"); s != 429 {
		t.Errorf("with admin fault: %d", s)
	}
	status, body := adminDo(t, "GET", w.u+"/faults", w.token, "")
	if status != 200 || !strings.Contains(string(body), `"rate_limit"`) {
		t.Errorf("list faults: %d %s", status, body)
	}
	if s, _ := adminDo(t, "DELETE", w.u+"/faults", w.token, ""); s != 204 {
		t.Errorf("clear faults: %d", s)
	}
	if s, _, _ := rawGet(t, w.m.URL+"/v1/stores/47", "k-47"); s != 200 {
		t.Errorf("after clearing: %d", s)
	}
}

// adminRecords reads and resets the request records, and reads the orders
// and violations.
func adminRecords(t *testing.T, w adminWorld) {
	status, body := adminDo(t, "GET", w.u+"/requests", w.token, "")
	if status != 200 || !strings.Contains(string(body), `"operation_id":"getStore"`) || strings.Contains(string(body), "k-47") {
		t.Errorf("requests: %d %s", status, body)
	}
	if s, _ := adminDo(t, "DELETE", w.u+"/requests", w.token, ""); s != 204 || w.m.Server.RequestCount(nil) != 0 {
		t.Errorf("reset requests: %d", s)
	}
	status, body = adminDo(t, "GET", w.u+"/orders", w.token, "")
	if status != 200 || !strings.Contains(string(body), mockstorelink.OrderOpen) {
		t.Errorf("orders: %d %s", status, body)
	}
	if status, body = adminDo(t, "GET", w.u+"/violations", w.token, ""); status != 200 || string(body) != "[]\n" {
		t.Errorf("violations: %d %q", status, body)
	}
	if s, _ := adminDo(t, "GET", w.u+"/nothing", w.token, ""); s != 404 {
		t.Errorf("unknown admin path: %d", s)
	}
}
