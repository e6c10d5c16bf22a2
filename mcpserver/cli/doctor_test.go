package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// skewedStoreLink refuses every request as StoreLink does without a key,
// with its clock off by skew.
func skewedStoreLink(t *testing.T, skew time.Duration) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(skew).UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"invalid_key","message":"the store key is missing or not valid"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func doctor(t *testing.T, env Env) (string, error) {
	t.Helper()
	var out bytes.Buffer
	env.Stdout = &out
	err := Run(context.Background(), []string{"doctor"}, env)
	return out.String(), err
}

func TestDoctorFailures(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("ci short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		url  string
		vars map[string]string
		want []string
	}{
		{"configuration", "http://127.0.0.1:1", map[string]string{"MAX_ORDER_UNITS": "lots"},
			[]string{"FAIL  configuration: MAX_ORDER_UNITS=\"lots\": must be an integer"}},
		{"clock and token file", skewedStoreLink(t, time.Hour), map[string]string{"MCP_AUTH_TOKENS_FILE": tokens},
			[]string{"ok    upstream: StoreLink answers", "FAIL  clock: the local clock is -1h0m", "FAIL  token file: MCP_AUTH_TOKENS_FILE:",
				"FAIL  key of store 47: StoreLink refused to read store 47: AUTH_KEY_INVALID", "ok    state database:"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := testEnv(t, tc.url, tc.vars)
			out, err := doctor(t, env)
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Code != 1 {
				t.Errorf("err %v, want exit 1", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("doctor output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "key-47-0123456789") {
				t.Error("doctor prints a key")
			}
		})
	}
}

// foreignStoreLink answers with FastAPI error bodies and its own field
// names, so every answer breaks the contract.
func foreignStoreLink(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Korral-Store-Key") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":"Not authenticated"}`))
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/v1/stores/")
		_, _ = w.Write([]byte(`{"id":"` + id + `","display_name":"Store ` + id + `","tz":"Europe/Prague","hours":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A contract error of the upstream check does not stop doctor: every store
// gets its line and fix, and the exit is 1.
func TestDoctorGoesOnAfterAContractError(t *testing.T) {
	env, _ := testEnv(t, foreignStoreLink(t), map[string]string{
		"STORELINK_KEYRING": `{"47": "key-47-0123456789", "102": "key-102-0123456789", "55": "key-55-0123456789"}`,
	})
	out, err := doctor(t, env)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Errorf("err %v, want exit 1", err)
	}
	if !strings.Contains(out, "FAIL  upstream: UPSTREAM_BASE_URL=") || !strings.Contains(out, "but not with StoreLink's error body") ||
		!strings.Contains(out, "storelink-contract check") {
		t.Errorf("the upstream check does not name the contract error and its fix:\n%s", out)
	}
	for _, id := range []string{"47", "55", "102"} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "key of store "+id+":") {
				line = l
			}
		}
		if !strings.HasPrefix(line, "FAIL  key of store "+id+": store "+id+": UPSTREAM_CONTRACT_ERROR:") || !strings.Contains(line, "; fix: ") {
			t.Errorf("store %s: %q\n%s", id, line, out)
		}
	}
	for _, want := range []string{"ok    clock:", "ok    state database:"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0123456789") {
		t.Error("doctor prints a key")
	}
}

// With nothing at the base URL no key is sent, and each store says it was
// not checked.
func TestDoctorSkipsKeysOnlyWhenNothingAnswered(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	env, _ := testEnv(t, url, nil)
	out, err := doctor(t, env)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(out, "FAIL  upstream: cannot reach") ||
		!strings.Contains(out, "skip  key of store 47: not checked") {
		t.Errorf("err %v:\n%s", err, out)
	}
}
