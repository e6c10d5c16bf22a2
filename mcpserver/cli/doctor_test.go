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
