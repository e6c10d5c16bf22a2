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
	"strings"
	"testing"
	"time"
)

func TestHelpListAndUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "usage:") || errOut.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-list"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "request-quantity") {
		t.Errorf("-list: exit %d\n%s", code, out.String())
	}
	for _, args := range [][]string{{}, {"-member", "nobody"}, {"-member", "no-store-list", "extra"}, {"-member", "no-store-list", "-addr", "0.0.0.0:0"}, {"-nope"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		if code != 2 || out.Len() != 0 || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on stderr", args, code, out.String(), errOut.String())
		}
	}
}

// The member answers with its departure, with the keys it wrote, until
// the command is stopped.
func TestServesTheMemberUntilCancelled(t *testing.T) {
	keyring := filepath.Join(t.TempDir(), "keyring.json")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-member", "no-store-list", "-keyring-out", keyring}, pw, io.Discard)
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
	var keys map[string]string
	b, err := os.ReadFile(keyring)
	if err != nil || json.Unmarshal(b, &keys) != nil || keys["47"] == "" {
		t.Fatalf("keyring %s: %v", b, err)
	}
	get := func(path string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("X-Korral-Store-Key", keys["47"])
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/v1/stores"); got != http.StatusNotFound {
		t.Errorf("the store list: %d, want 404", got)
	}
	if got := get("/v1/stores/47"); got != http.StatusOK {
		t.Errorf("store 47: %d", got)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after the stop", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no stop within 10 s")
	}
}
