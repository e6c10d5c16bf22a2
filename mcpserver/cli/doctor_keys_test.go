package cli

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"
)

// envelopeStoreLink is a StoreLink with a non-contract error envelope
// ({"detail": ...}) and contract store data. Unknown keys get 401, another
// store's key 403. Without storeList, GET /v1/stores is a 404.
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

// With a non-contract error envelope, a rotated key (401) and another
// store's key (403) each name the store and "install its current key"; the
// upstream line does not blame UPSTREAM_BASE_URL, since answers are JSON.
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

// When every answer is HTML, the fix is UPSTREAM_BASE_URL, for the upstream
// line and each store.
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

// One store answering HTML, among JSON answers, is not blamed on
// UPSTREAM_BASE_URL.
func TestDoctorOneStoreWithoutJSON(t *testing.T) {
	good, err := url.Parse(envelopeStoreLink(t, map[string]string{"47": "key-47-0123456789", "102": "key-102-0123456789"}, true))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(good)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/stores/102" {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html><body>Not Found</body></html>"))
	}))
	t.Cleanup(front.Close)
	env, _ := testEnv(t, front.URL, map[string]string{
		"STORELINK_KEYRING": `{"47": "key-47-0123456789", "102": "key-102-0123456789"}`,
	})
	out, _ := doctor(t, env)
	l := doctorLine(out, "key of store 102")
	if !strings.HasPrefix(l, "FAIL  ") || strings.Contains(l, "UPSTREAM_BASE_URL") || !strings.Contains(l, "is not JSON") || !strings.Contains(l, "the address is StoreLink's") {
		t.Errorf("store 102: %q\n%s", l, out)
	}
	if l := doctorLine(out, "key of store 47"); !strings.HasPrefix(l, "ok    ") {
		t.Errorf("store 47: %q", l)
	}
	if up := doctorLine(out, "upstream"); strings.Contains(up, "set UPSTREAM_BASE_URL") {
		t.Errorf("upstream: %q", up)
	}
}
