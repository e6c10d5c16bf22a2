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

// foreignStoreLink answers as another team's StoreLink would: FastAPI error
// bodies ({"detail": ...}) and its own field names, so every answer breaks
// our contract in some way.
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

// TestDoctorGoesOnAfterAContractError: the upstream check's contract error
// (a 401 in another body) does not stop doctor; every store and key gets
// its own line, each failure its fix, and the exit is 1.
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

// TestDoctorSkipsKeysOnlyWhenNothingAnswered: with nothing at the base URL
// no key is sent anywhere, and each store says it was not checked.
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

// envelopeStoreLink is a StoreLink whose error envelope differs from the
// contract ({"detail": ...}, as FastAPI writes it) and whose store data
// keeps the contract. It knows the keys in keys (store to key); any other
// key is refused with 401, a key of another store with 403. Without
// storeList, GET /v1/stores is a 404 in the same envelope.
func envelopeStoreLink(t *testing.T, keys map[string]string, storeList bool) string {
	owner := map[string]string{}
	for store, key := range keys {
		owner[key] = store
	}
	day := `{"closed":false,"opens":"07:00","closes":"22:00"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		refuse := func(status int, detail string) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"detail":"` + detail + `"}`))
		}
		if r.URL.Path == "/v1/stores" && !storeList {
			refuse(http.StatusNotFound, "Not Found")
			return
		}
		store, known := owner[r.Header.Get("X-Korral-Store-Key")]
		switch {
		case r.Header.Get("X-Korral-Store-Key") == "":
			refuse(http.StatusUnauthorized, "Not authenticated")
		case !known:
			refuse(http.StatusUnauthorized, "Invalid key")
		case r.URL.Path == "/v1/stores":
			_, _ = w.Write([]byte(`{"stores":[{"store_id":"` + store + `","name":"Store ` + store + `","timezone":"Europe/Prague"}]}`))
		case r.URL.Path != "/v1/stores/"+store:
			refuse(http.StatusForbidden, "Forbidden")
		default:
			_, _ = w.Write([]byte(`{"store_id":"` + store + `","name":"Store ` + store + `","timezone":"Europe/Prague","opening_hours":{` +
				`"monday":` + day + `,"tuesday":` + day + `,"wednesday":` + day + `,"thursday":` + day + `,"friday":` + day +
				`,"saturday":` + day + `,"sunday":{"closed":true}}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// doctorLine returns the line of one check, or "".
func doctorLine(out, check string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l[min(len(l), 6):], check+":") {
			return l
		}
	}
	return ""
}

// TestDoctorNamesTheKeyWhateverTheErrorBody: against a StoreLink whose
// error envelope differs from the contract, a rotated key (401) and
// another store's key (403) each name the store and the fix "install its
// current key", never "the key is not the problem"; the upstream line says
// what works and does not send the operator to UPSTREAM_BASE_URL, since
// the answers are JSON.
func TestDoctorNamesTheKeyWhateverTheErrorBody(t *testing.T) {
	for _, storeList := range []bool{true, false} {
		t.Run(map[bool]string{true: "with a store list", false: "without a store list"}[storeList], func(t *testing.T) {
			// StoreLink knows 47's key, 102's current key and 88's; the
			// keyring holds an old key for 102 and 88's key under store 55.
			url := envelopeStoreLink(t, map[string]string{"47": "key-47-0123456789", "102": "key-102-new-0123456789", "88": "key-88-0123456789"}, storeList)
			env, _ := testEnv(t, url, map[string]string{
				"STORELINK_KEYRING": `{"47": "key-47-0123456789", "102": "key-102-old-0123456789", "55": "key-88-0123456789"}`,
			})
			out, err := doctor(t, env)
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Code != 1 {
				t.Errorf("err %v, want exit 1", err)
			}
			if l := doctorLine(out, "key of store 47"); !strings.HasPrefix(l, "ok    ") {
				t.Errorf("store 47: %q\n%s", l, out)
			}
			for id, status := range map[string]string{"102": "401", "55": "403"} {
				l := doctorLine(out, "key of store "+id)
				if !strings.HasPrefix(l, "FAIL  ") || !strings.Contains(l, status) || !strings.Contains(l, "store "+id+"'s key") ||
					!strings.Contains(l, "fix: install store "+id+"'s current key") || strings.Contains(l, "not the problem") {
					t.Errorf("store %s (%s): %q", id, status, l)
				}
			}
			up := doctorLine(out, "upstream")
			if !strings.HasPrefix(up, "FAIL  ") || !strings.Contains(up, "store data reads fine (store 47)") ||
				!strings.Contains(up, "the error bodies differ from the contract") || !strings.Contains(up, "storelink-contract check") {
				t.Errorf("upstream: %q", up)
			}
			if _, fix, _ := strings.Cut(up, "; fix: "); strings.Contains(fix, "UPSTREAM_BASE_URL") {
				t.Errorf("the upstream fix points at UPSTREAM_BASE_URL although StoreLink answers in JSON: %q", fix)
			}
			if strings.Contains(out, "0123456789") {
				t.Error("doctor prints a key")
			}
		})
	}
}

// TestDoctorBlamesTheAddressOnlyWithoutJSON: a server whose every answer
// is HTML (a web server at the wrong address) is the one case whose fix
// is UPSTREAM_BASE_URL, for the upstream line and each store.
func TestDoctorBlamesTheAddressOnlyWithoutJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html><body>Not Found</body></html>"))
	}))
	t.Cleanup(srv.Close)
	env, _ := testEnv(t, srv.URL, nil)
	out, _ := doctor(t, env)
	up := doctorLine(out, "upstream")
	if _, fix, _ := strings.Cut(up, "; fix: "); !strings.HasPrefix(up, "FAIL  ") || !strings.Contains(fix, "set UPSTREAM_BASE_URL") {
		t.Errorf("upstream: %q", up)
	}
	if l := doctorLine(out, "key of store 47"); !strings.Contains(l, "check that UPSTREAM_BASE_URL") || strings.Contains(l, "current key") {
		t.Errorf("store 47: %q\n%s", l, out)
	}
}
