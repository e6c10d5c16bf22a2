package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/foreignstorelink"
)

func TestHelpAndUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "usage:") || errOut.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-addr", "0.0.0.0:0"}, {"-addr", "192.0.2.1:80"}, {"-addr", "nonsense"}, {"-addr"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		if code != 2 || out.Len() != 0 || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on stderr", args, code, out.String(), errOut.String())
		}
	}
}

func TestServesUntilCancelled(t *testing.T) {
	keyring := filepath.Join(t.TempDir(), "keyring.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-keyring-out", keyring}, pw, &errOut)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line %q", line)
	}

	info, err := os.Stat(keyring)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("keyring mode %v, want 0600", info.Mode().Perm())
	}
	var keys map[string]string
	data, _ := os.ReadFile(keyring)
	if err := json.Unmarshal(data, &keys); err != nil || !reflect.DeepEqual(keys, foreignstorelink.DefaultKeys) {
		t.Fatalf("keyring %s: %v", data, err)
	}

	req, _ := http.NewRequest("GET", base+"/v1/stores/47", nil)
	req.Header.Set(foreignstorelink.KeyHeader, keys["47"])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET /v1/stores/47: %d", res.StatusCode)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop after cancellation")
	}
}
