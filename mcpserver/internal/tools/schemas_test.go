package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGeneratedSchemasAreCurrent fails when schemas.gen.go is not what the
// tools' types give; `go generate ./internal/tools` rewrites it.
func TestGeneratedSchemasAreCurrent(t *testing.T) {
	want, err := GeneratedSchemasSource(config.DefaultMaxOrderUnits)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("schemas.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schemas.gen.go is out of date with the tools' types: run `go generate ./internal/tools` in mcpserver")
	}
}

// listedTools is the tools/list answer of srv, as JSON.
func listedTools(t *testing.T, srv *mcp.Server) string {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGeneratedSchemasAreWhatTheTypesGive lists the tools of servers in
// many configurations, some served from schemas.gen.go and some not, and
// compares each list with the one built from the types at start-up. An
// option that changes a schema but is missing from schemaKey fails here.
func TestGeneratedSchemasAreWhatTheTypesGive(t *testing.T) {
	base := func(mutate func(*Options)) Options {
		o := Options{Upstream: newFake()}
		mutate(&o)
		return o
	}
	configs := map[string]Options{
		"read-only":      base(func(*Options) {}),
		"read-only demo": base(func(o *Options) { o.EmbeddedDemo = true }),
		"writes": base(func(o *Options) {
			o.Writes = &WriteOptions{MaxOrderUnits: config.DefaultMaxOrderUnits, AllowWrites: true}
		}),
		"approval demo": base(func(o *Options) {
			o.EmbeddedDemo, o.Writes = true, &WriteOptions{MaxOrderUnits: config.DefaultMaxOrderUnits, RequireApproval: true}
		}),
		"host consent": base(func(o *Options) {
			o.Writes = &WriteOptions{MaxOrderUnits: config.DefaultMaxOrderUnits, AllowWrites: true, HostConsent: testSealer(t)}
		}),
		"writes off":     base(func(o *Options) { o.Writes = &WriteOptions{MaxOrderUnits: config.DefaultMaxOrderUnits} }),
		"other ceiling":  base(func(o *Options) { o.Writes = &WriteOptions{MaxOrderUnits: 37, AllowWrites: true} }),
		"other lookback": base(func(o *Options) { o.DefaultLookbackDays = 21 }),
	}
	served := 0
	for name, opts := range configs {
		srv := New(opts)
		s := newServer(withDefaults(opts))
		s.collected = map[string][2]string{}
		built := build(s)
		if _, ok := generatedSchemas[s.schemaKey("korral_check_stock_risk")]; ok {
			served++
		}
		if got, want := listedTools(t, srv), listedTools(t, built); got != want {
			t.Errorf("%s: the tool list differs from the one built from the types:\n got %s\nwant %s", name, got, want)
		}
	}
	if served < 5 {
		t.Errorf("only %d of the configurations were served from schemas.gen.go", served)
	}
}
