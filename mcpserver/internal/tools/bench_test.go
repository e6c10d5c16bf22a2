package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// butterArgs asks whether the butter at store 47 runs out before closing.
var butterArgs = map[string]any{"store_id": "47", "sku": "8847291"}

// BenchmarkEnvelope measures turning a handler's answer into the tool
// result: the JSON envelope and the log line, for a real risk answer
// (28 days) and a real error.
func BenchmarkEnvelope(b *testing.B) {
	out, err := riskAnswer(28)
	if err != nil {
		b.Fatal(err)
	}
	s := &server{opts: Options{Now: func() time.Time { return testNow }}, log: slog.New(slog.DiscardHandler)}
	c := &call{id: "bench", tool: "korral_check_stock_risk", storeID: "47", sku: "8847291", summary: "checked"}
	ctx := context.Background()
	b.Run("ok-stock-risk", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			res := s.succeed(ctx, c, out, time.Millisecond)
			n = len(res.Content[0].(*mcp.TextContent).Text)
		}
		b.ReportMetric(float64(n), "bytes/envelope")
	})
	b.Run("error", func(b *testing.B) {
		e := apperr.New(apperr.StoreNotAuthorized, "store 55 is not authorized for this deployment; authorized stores: 47, 102", "Use one of 47, 102.")
		b.ReportAllocs()
		for b.Loop() {
			if res := s.fail(ctx, c, e, time.Millisecond); !res.IsError {
				b.Fatal("error envelope without isError")
			}
		}
	})
}

// BenchmarkToolCallInMemory is one korral_check_stock_risk call through a
// real MCP client and server joined in memory, with an in-memory StoreLink.
// The variants add the JSON log lines and the SQLite audit row.
func BenchmarkToolCallInMemory(b *testing.B) {
	kr, err := keyring.Parse([]byte(`{"47":"k1","102":"k2"}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name  string
		log   bool
		audit bool
	}{
		{"bare", false, false},
		{"json-log", true, false},
		{"json-log+sqlite-audit", true, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			opts := Options{
				Upstream: newFake(),
				Keyring:  func() *keyring.Keyring { return kr },
				Now:      func() time.Time { return testNow },
				Writes:   &WriteOptions{MaxOrderUnits: 500},
			}
			if v.log {
				opts.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
			}
			if v.audit {
				db, err := sqlite.Open(filepath.Join(b.TempDir(), "state.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = db.Close() })
				opts.Audit = audit.Store{Log: db}
			}
			cs := benchSession(b, New(opts))
			params := &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: butterArgs}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("call: %v %v", err, res)
				}
			}
		})
	}
}

// BenchmarkToolsList is the answer every client asks for first.
func BenchmarkToolsList(b *testing.B) {
	kr, err := keyring.Parse([]byte(`{"47":"k1"}`))
	if err != nil {
		b.Fatal(err)
	}
	cs := benchSession(b, New(Options{Upstream: newFake(), Keyring: func() *keyring.Keyring { return kr }, Writes: &WriteOptions{MaxOrderUnits: 500}}))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		n = ModelVisibleBytes(res.Tools)
	}
	b.ReportMetric(float64(n), "model-visible-bytes")
}

// riskAnswer is the risk tool's answer for the butter at store 47 with days
// of history.
func riskAnswer(days int) (*stockRiskOut, error) {
	kr, err := keyring.Parse([]byte(`{"47":"k1"}`))
	if err != nil {
		return nil, err
	}
	s := &server{opts: Options{Upstream: newFake(), Keyring: func() *keyring.Keyring { return kr }, Now: func() time.Time { return testNow }}, log: slog.New(slog.DiscardHandler)}
	return s.checkStockRisk(context.Background(), &call{tool: "korral_check_stock_risk"}, stockRiskIn{SKU: "8847291", LookbackDays: days})
}

func benchSession(b *testing.B, srv *mcp.Server) *mcp.ClientSession {
	b.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

// The envelope is the same JSON whichever way it is read.
func TestBenchEnvelopeIsValid(t *testing.T) {
	out, err := riskAnswer(28)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{opts: Options{Now: func() time.Time { return testNow }}, log: slog.New(slog.DiscardHandler)}
	res := s.succeed(context.Background(), &call{tool: "korral_check_stock_risk"}, out, 0)
	var env struct {
		OK   bool            `json:"ok"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil || !env.OK || !strings.Contains(string(env.Data), `"evidence":{"columns"`) {
		t.Fatalf("envelope %v %v", env, err)
	}
}
