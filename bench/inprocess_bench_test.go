package bench

import (
	"context"
	"errors"
	"io"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/korral/storelink/internal/demostorelink"
	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inProcess runs the whole storelink-mcp program (cli.Run, exactly as the
// binary does) inside the test process: stdin and stdout are pipes to a
// go-sdk client, and the embedded StoreLink is the real mock on a loopback
// port, reached through the real upstream adapter over HTTP. What is left
// out compared with the binary is only the process boundary: exec, and the
// kernel pipes of stdio.
func inProcess(b *testing.B, validateResponses bool) *mcp.ClientSession {
	b.Helper()
	p := startInProcess(b, b.TempDir(), validateResponses)
	b.Cleanup(func() { p.stop(b) })
	return p.session
}

// program is one in-process run of the storelink-mcp program.
type program struct {
	session  *mcp.ClientSession
	serverIn *io.PipeWriter
	cancel   context.CancelFunc
	done     chan error
}

func startInProcess(b *testing.B, dir string, validateResponses bool) *program {
	// storelink-mcp's embedded StoreLink, with or without the mock's
	// response validation.
	return startProgram(b, dir, nil, demostorelink.Func(demostorelink.Options{ValidateResponses: validateResponses}))
}

// startProgram runs cli.Run in dir with embedded as its StoreLink and env
// added to its environment, and connects a client over pipes.
func startProgram(b *testing.B, dir string, env map[string]string, embedded cli.EmbeddedFunc) *program {
	b.Helper()
	all := map[string]string{
		"STATE_DB_PATH":      filepath.Join(dir, "state.db"),
		"STORELINK_MOCK_NOW": mockstorelink.DefaultNow().Format(time.RFC3339),
		"HOME":               dir,
	}
	maps.Copy(all, env)
	toServer, serverIn := io.Pipe()
	serverOut, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, nil, cli.Env{
			Getenv:   func(k string) string { return all[k] },
			Stdin:    toServer,
			Stdout:   fromServer,
			Stderr:   io.Discard, // the JSON log lines are still formatted
			Embedded: embedded,
		})
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: serverOut, Writer: serverIn}, nil)
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	return &program{session: cs, serverIn: serverIn, cancel: cancel, done: done}
}

// stop closes the session and stdin and waits for the program to return.
func (p *program) stop(b *testing.B) {
	_ = p.session.Close()
	_ = p.serverIn.Close()
	p.cancel()
	select {
	case err := <-p.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("server: %v", err)
		}
	case <-time.After(10 * time.Second):
		b.Error("server did not stop")
	}
}

// BenchmarkCheckStockRiskInProcess is one korral_check_stock_risk call for
// the butter at store 47 through the assembled program: JSON-RPC framing,
// argument validation, five StoreLink requests over loopback HTTP (with the
// mock's request validation, and with or without its response validation),
// the projection, the envelope, the log lines and the SQLite audit row.
func BenchmarkCheckStockRiskInProcess(b *testing.B) {
	for _, v := range []struct {
		name     string
		validate bool
	}{{"mock-validates-responses", true}, {"mock-no-response-validation", false}} {
		b.Run(v.name, func(b *testing.B) {
			cs := inProcess(b, v.validate)
			params := &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: map[string]any{"store_id": "47", "sku": mockstorelink.SKUButter}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
		})
	}
}

// BenchmarkStartupInProcess is the program's own share of a cold start:
// cli.Run from the environment to a completed tools/list (configuration,
// state database, embedded StoreLink, tool schemas, the MCP handshake),
// without exec and the Go runtime's start. The driver's cold start figure
// is this plus the process.
func BenchmarkStartupInProcess(b *testing.B) {
	ctx := context.Background()
	// One state database for every start, as a host's restarts would find it.
	dir := b.TempDir()
	for b.Loop() {
		p := startInProcess(b, dir, true)
		if _, err := p.session.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
}

// BenchmarkTrivialCallInProcess is one korral_list_authorized_stores call
// through the assembled program: the per-call overhead every tool pays
// (framing, decoding, the tool wrapper, the log lines, the audit row) with
// almost no work of its own (the store list is master data, cached after
// the first call).
func BenchmarkTrivialCallInProcess(b *testing.B) {
	cs := inProcess(b, false)
	params := &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
}
