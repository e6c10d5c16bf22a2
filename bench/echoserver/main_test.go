package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves newServer(answer) to an in-memory client.
func connect(t *testing.T, answer []byte) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := newServer(answer).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestEchoSendsTheMessageBack(t *testing.T) {
	cs := connect(t, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello" {
		t.Fatalf("echo answered %+v", res)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("without an answer file: tools %+v, %v; want echo alone", tools, err)
	}
}

func TestAnswerSendsTheFileBackAsTextAndStructuredContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "answer.json")
	want := `{"ok":true,"data":{"name":"Praha Smíchov ⟦x⟧","count":2}}`
	if err := os.WriteFile(path, []byte(want+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	answer, err := readAnswer(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := connect(t, answer).CallTool(context.Background(), &mcp.CallToolParams{Name: "answer", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
		t.Fatalf("answer's text: %+v", res)
	}
	got, _ := json.Marshal(res.StructuredContent)
	var a, b any
	_ = json.Unmarshal(got, &a)
	_ = json.Unmarshal([]byte(want), &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("structured content %s, want %s", got, want)
	}
	for _, bad := range []string{"", "[1]", "{", "null"} {
		p := filepath.Join(t.TempDir(), "bad.json")
		_ = os.WriteFile(p, []byte(bad), 0o600)
		if _, err := readAnswer(p); err == nil {
			t.Errorf("answer file %q accepted", bad)
		}
	}
	if _, err := readAnswer(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing answer file was accepted")
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
