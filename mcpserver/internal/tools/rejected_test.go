package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/stdiotransport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// auditCollector keeps the audit events in memory.
type auditCollector struct {
	mu     sync.Mutex
	events []AuditEvent
}

func (a *auditCollector) Record(_ context.Context, e AuditEvent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
	return nil
}

func (a *auditCollector) take() []AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.events
	a.events = nil
	return out
}

// TestEveryRefusedCallIsAuditedOnce sends tools/call requests the SDK
// refuses through the real server and stdio transport, wired as the CLI
// wires it: each leaves exactly one audit event saying why.
func TestEveryRefusedCallIsAuditedOnce(t *testing.T) {
	sink := &auditCollector{}
	opts := Options{Audit: sink, SessionName: "stdio-test"}
	ms := New(opts)
	rej := NewRejections(opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := &stdiotransport.Transport{Reader: inR, Writer: outW, Inspect: func(req *jsonrpc.Request) {
		if tool, reason, refused := audit.UndecodableCall(req); refused {
			rej.Record(context.Background(), tool, reason, "host", "stdio-test")
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ms.Run(ctx, tr) }()
	defer func() { _ = inW.Close(); cancel(); <-done }()
	answers := bufio.NewScanner(outR)
	ask := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !answers.Scan() {
			t.Fatalf("no answer to %s", line)
		}
		var m map[string]any
		if err := json.Unmarshal(answers.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ask(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")

	for i, c := range []struct{ params, tool, reason string }{
		{`{"name":5}`, "-", `"name" is not a string`},
		{`"x"`, "-", `"params" is not a JSON object`},
		{`[1]`, "-", `"params" is not a JSON object`},
		{`null`, "-", `"params" is missing`},
		{`{"name":"korral_nope","_meta":[1]}`, "korral_nope", `"params" do not decode`},
		{`{"name":"korral_nope","requestState":7}`, "korral_nope", `"params" do not decode`},
		{`{"name":"korral_nope\u001b[2K"}`, `korral_nope\x1b[2K`, "unknown tool"},
		// The SDK matches field names exactly: "NAME" is ignored there,
		// so the call is an unknown tool "" and not undecodable.
		{`{"NAME":5}`, "", "unknown tool"},
		// A case variant that does not decode fails encoding/json's
		// whole-params reading, so the exact-name reading decides: the
		// SDK ignores "Name" and reads "name".
		{`{"Name":5,"name":"korral_nope"}`, "korral_nope", "unknown tool"},
	} {
		ans := ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, c.params))
		if ans["error"] == nil {
			t.Fatalf("params %s: answered %v, want an error", c.params, ans)
		}
		events := sink.take()
		if len(events) != 1 {
			t.Fatalf("params %s: %d audit events, want 1: %+v", c.params, len(events), events)
		}
		e := events[0]
		if e.Tool != c.tool || e.Outcome != "error" || e.ErrorCode != "INVALID_ARGUMENT" || e.Client != "host" ||
			e.Session != "stdio-test" || !strings.Contains(e.Summary, c.reason) {
			t.Errorf("params %s: audit event %+v", c.params, e)
		}
	}
	// A call that decodes reaches the tool, which audits it itself.
	ask(`{"jsonrpc":"2.0","id":"args","method":"tools/call","params":{"name":"korral_get_order_status","arguments":[1]}}`)
	if events := sink.take(); len(events) != 1 || events[0].Tool != "korral_get_order_status" {
		t.Fatalf("arguments that are not an object: %+v", events)
	}
}
