package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestEchoSendsTheMessageBack(t *testing.T) {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := newServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello" {
		t.Fatalf("echo answered %+v", res)
	}
}

func TestRequireTokenRefusesAMissingOrWrongToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("bench s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := readTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	h := requireToken(tokens, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for header, want := range map[string]int{"": 401, "Bearer wrong": 401, "s3cret-token": 401, "Bearer s3cret-token": http.StatusTeapot} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Authorization %q: status %d, want %d", header, w.Code, want)
		}
	}
	if _, err := readTokens(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing token file was accepted")
	}
}
