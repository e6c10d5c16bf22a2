package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/korral/storelink/internal/e2etest"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mockstorelink"
)

// launch runs the command until the test ends and returns its URL.
func launch(t *testing.T, args []string, env map[string]string) (string, *e2etest.SyncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &e2etest.SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, func(k string) string { return env[k] }, pw, stderr)
		pw.CloseWithError(errors.New("run returned"))
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("run did not stop after cancel")
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL on stdout: %v; stderr: %s", err, stderr)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return strings.TrimSpace(line), stderr
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set(mockstorelink.StoreKeyHeader, key)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func readKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]string
	if err := json.Unmarshal(data, &keys); err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestRunServesTheMock(t *testing.T) {
	dir := t.TempDir()
	keyring, allKeys := filepath.Join(dir, "keyring.json"), filepath.Join(dir, "all.json")
	// An existing file with wide permissions is narrowed.
	if err := os.WriteFile(keyring, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	faults := filepath.Join(dir, "faults.json")
	if err := os.WriteFile(faults, []byte(`[{"kind":"status","operation_id":"getSupplier","status":503}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stderr := launch(t, []string{
		"--addr", "127.0.0.1:0", "--now", "2026-11-27T14:30:00+01:00",
		"--keyring-out", keyring, "--all-keys-out", allKeys, "--faults", faults,
	}, map[string]string{adminTokenEnv: "from-env"})
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %q", url)
	}

	ring := readKeys(t, keyring)
	if len(ring) != 2 || ring["47"] == "" || ring["102"] == "" {
		t.Errorf("keyring = %v, want stores 47 and 102", ring)
	}
	all := readKeys(t, allKeys)
	if len(all) < 6 || all["55"] == "" || all["47"] != ring["47"] {
		t.Errorf("all keys = %v", all)
	}

	status, body := get(t, url+"/v1/stores/47/inventory?sku="+mockstorelink.SKUButter, ring["47"])
	var inv struct {
		OnHand    int64  `json:"on_hand_units"`
		CountedAt string `json:"counted_at"`
	}
	if status != 200 || json.Unmarshal(body, &inv) != nil || inv.OnHand != mockstorelink.ButterOnHandSmichov {
		t.Errorf("inventory: %d %s", status, body)
	}
	if inv.CountedAt != "2026-11-27T13:55:00+01:00" {
		t.Errorf("counted_at %q does not follow --now", inv.CountedAt)
	}
	if status, _ := get(t, url+"/v1/suppliers/SUP-MADETA", ring["47"]); status != 503 {
		t.Errorf("fault from --faults not applied: %d", status)
	}

	// The admin token came from the environment.
	req, _ := http.NewRequest(http.MethodGet, url+"/_admin/keys", nil)
	req.Header.Set("Authorization", "Bearer from-env")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("admin with the env token: %d", resp.StatusCode)
	}

	var sawListening bool
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("stderr line is not JSON: %q", line)
			continue
		}
		if rec["msg"] == "mock StoreLink listening" {
			sawListening = true
		}
		if strings.Contains(line, ring["47"]) {
			t.Errorf("a log line leaks a key: %s", line)
		}
	}
	if !sawListening {
		t.Errorf("no start-up log line in %s", stderr)
	}
}

func TestRunDeterministicAcrossProcesses(t *testing.T) {
	fetch := func() (map[string]string, []byte) {
		dir := t.TempDir()
		ring := filepath.Join(dir, "k.json")
		url, _ := launch(t, []string{"--addr", "127.0.0.1:0", "--now", "default", "--keyring-out", ring}, nil)
		keys := readKeys(t, ring)
		_, body := get(t, url+"/v1/stores/102/pos?sku=8847291&since=2026-11-20T00:00:00%2B01:00", keys["102"])
		return keys, body
	}
	k1, b1 := fetch()
	k2, b2 := fetch()
	if diff := cmp.Diff(k1, k2); diff != "" {
		t.Errorf("keys differ between runs:\n%s", diff)
	}
	if !bytes.Equal(b1, b2) || len(b1) < 100 {
		t.Errorf("POS bytes differ between runs (%d vs %d bytes)", len(b1), len(b2))
	}
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	badFaults := filepath.Join(dir, "faults.json")
	if err := os.WriteFile(badFaults, []byte(`[{"kind":"meteor"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		usage bool
	}{
		{"unknown flag", []string{"--bogus"}, true},
		{"stray argument", []string{"serve"}, true},
		{"bad --now", []string{"--now", "tomorrow"}, true},
		{"bad --log-level", []string{"--log-level", "loud"}, true},
		{"--stores below the fixtures", []string{"--stores", "5"}, true},
		{"--stores negative", []string{"--stores", "-1"}, true},
		{"--stores beyond the bound", []string{"--stores", "1001"}, true},
		{"--skus below the fixtures", []string{"--skus", "11"}, true},
		{"--skus beyond the bound", []string{"--skus", "100001"}, true},
		{"missing faults file", []string{"--faults", filepath.Join(dir, "none.json")}, false},
		{"bad fault", []string{"--faults", badFaults}, false},
		{"bad address", []string{"--addr", "127.0.0.1:notaport"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tc.args, func(string) string { return "" }, &stdout, &stderr)
			if err == nil {
				t.Fatal("run accepted it")
			}
			if errors.Is(err, errUsage) != tc.usage {
				t.Errorf("usage error = %v, want %v: %v", errors.Is(err, errUsage), tc.usage, err)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// TestRunLargeWorld: --stores 180 --skus 18000 serves exactly that world
// with a key for every store; the bounds are accepted.
func TestRunLargeWorld(t *testing.T) {
	dir := t.TempDir()
	keyring := filepath.Join(dir, "keyring.json")
	url, _ := launch(t, []string{"--addr", "127.0.0.1:0", "--now", "default", "--stores", "180", "--skus", "18000",
		"--keyring-out", keyring}, nil)
	keys := readKeys(t, keyring)
	if len(keys) != 180 {
		t.Fatalf("--keyring-out holds %d stores, want 180", len(keys))
	}
	for _, id := range []string{"12", "47", "55", "102", "131", "210", "1007", "1180"} {
		if keys[id] == "" {
			t.Errorf("--keyring-out has no key for store %s", id)
		}
	}
	if _, ok := keys["1181"]; ok {
		t.Error("--keyring-out has a key for store 1181, the 181st")
	}
	k := keys["1180"]
	for path, want := range map[string]int{
		"/v1/stores/1180":                       200,
		"/v1/skus/9018000":                      200,
		"/v1/skus/9018001":                      404,
		"/v1/skus/9000013":                      200,
		"/v1/stores/1180/inventory?sku=9018000": 200,
	} {
		if code, body := get(t, url+path, k); code != want {
			t.Errorf("GET %s: %d, want %d: %s", path, code, want, body)
		}
	}
	_, body := get(t, url+"/v1/stores", k)
	var list struct {
		Stores []struct {
			StoreID string `json:"store_id"`
		} `json:"stores"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Stores) != 180 || list.Stores[179].StoreID != "1180" {
		t.Errorf("store list: %v, %d stores: %.300s", err, len(list.Stores), body)
	}

	for _, args := range [][]string{{"--stores", "6", "--skus", "12"}, {"--stores", "1000", "--skus", "100000"}} {
		all := filepath.Join(dir, "all-"+args[1]+".json")
		launch(t, append([]string{"--addr", "127.0.0.1:0", "--all-keys-out", all}, args...), nil)
		if n, _ := strconv.Atoi(args[1]); len(readKeys(t, all)) != n {
			t.Errorf("%v: %d keys, want %d", args, len(readKeys(t, all)), n)
		}
	}
}
