package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The write phase times confirmed korral_raise_replenishment_order calls
// over HTTP against one SQLite replica and two PostgreSQL replicas, then
// checks the mock holds one order per successful confirm.

// orderUnits is every benchmark order's quantity.
const orderUnits = 24

// mockAdminToken enables the mock's /_admin/orders for the final count.
const mockAdminToken = "loadgen-admin-0123456789abcdefghijklmnop"

// writeResult is one write phase.
type writeResult struct {
	Backend  string    `json:"backend"`
	Replicas int       `json:"replicas"`
	Latency  latencies `json:"latency"`
	// Raised counts confirms answered "raised"; MockOrders the orders the
	// mock gained. They must be equal.
	Raised     int `json:"raised"`
	MockOrders int `json:"mock_orders"`
	// CPUPerOrderMS is the replicas' CPU time per measured call.
	CPUPerOrderMS float64 `json:"cpu_per_order_ms"`
	// Split is where an order's time went, from the replicas' logs.
	Split orderSplit `json:"split"`
}

// orderSplit is the median time of an order's parts as the replicas log
// them: the handler, the POST to StoreLink, and the handler without it.
type orderSplit struct {
	Orders       int     `json:"orders"`
	HandlerP50MS float64 `json:"handler_p50_ms"`
	PostP50MS    float64 `json:"post_p50_ms"`
	NotPostP50MS float64 `json:"handler_without_post_p50_ms"`
}

// splitOrders reads server logs (one JSON object a line) and pairs each
// raised order's tool.ok duration with its POST's, by call id.
func splitOrders(logs ...io.Reader) (orderSplit, error) {
	type call struct{ handler, post float64 }
	calls := map[string]*call{}
	get := func(id string) *call {
		if calls[id] == nil {
			calls[id] = &call{handler: -1, post: -1}
		}
		return calls[id]
	}
	for _, l := range logs {
		sc := bufio.NewScanner(l)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			var e struct {
				Msg        string  `json:"msg"`
				CallID     string  `json:"call_id"`
				Tool       string  `json:"tool"`
				Method     string  `json:"method"`
				Route      string  `json:"route"`
				DurationMS float64 `json:"duration_ms"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.CallID == "" {
				continue
			}
			switch {
			case e.Msg == "tool.ok" && e.Tool == "korral_raise_replenishment_order":
				get(e.CallID).handler = e.DurationMS
			case e.Msg == "upstream.request" && e.Method == http.MethodPost && e.Route == "/v1/stores/{store_id}/replenishment":
				get(e.CallID).post = e.DurationMS
			}
		}
		if err := sc.Err(); err != nil {
			return orderSplit{}, err
		}
	}
	var handler, post, rest []float64
	for _, c := range calls {
		if c.handler >= 0 && c.post >= 0 {
			handler, post, rest = append(handler, c.handler), append(post, c.post), append(rest, c.handler-c.post)
		}
	}
	return orderSplit{Orders: len(handler), HandlerP50MS: median(handler), PostP50MS: median(post), NotPostP50MS: median(rest)}, nil
}

// writeTarget is one configuration of the write phase.
type writeTarget struct {
	backend  string // "sqlite" or "postgres"
	replicas int
	dsn      string // STATE_DATABASE_URL for postgres
}

// orderArgs are the arguments of the n-th order, with a distinct
// idempotency key and reason so no two calls collide in the ledger.
func orderArgs(phase string, n int) map[string]any {
	return map[string]any{
		"store_id":        "47",
		"sku":             "8847291",
		"quantity_units":  orderUnits,
		"reason":          fmt.Sprintf("Projected to sell out before close (load run %s, order %d).", phase, n),
		"confirm":         true,
		"idempotency_key": fmt.Sprintf("bench-%s-%06d", phase, n),
	}
}

// raised reports whether a tool result is an order StoreLink accepted.
func raised(res *mcp.CallToolResult) error {
	if res.IsError {
		return fmt.Errorf("tool error: %s", resultText(res))
	}
	var env struct {
		OK   bool `json:"ok"`
		Data struct {
			Mode    string `json:"mode"`
			OrderID string `json:"order_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &env); err != nil {
		return fmt.Errorf("not an envelope: %w", err)
	}
	if !env.OK || env.Data.Mode != "raised" || env.Data.OrderID == "" {
		return fmt.Errorf("not a raised order: %s", resultText(res))
	}
	return nil
}

// writeRun starts the mock and replicas, sends warm-up orders, then up to
// total orders round-robin until limit (sent calls are awaited, never
// cancelled), and compares the mock's orders with the confirms.
func writeRun(ctx context.Context, c config, hopts httpOptions, dir string, t writeTarget, callers, total int, limit time.Duration) (writeResult, error) {
	res := writeResult{Backend: t.backend, Replicas: t.replicas}
	mk, err := startMock(ctx, c.mock, dir, true, mockAdminToken)
	if err != nil {
		return res, err
	}
	defer mk.p.stop(5*time.Second, true)
	admin := mockAdmin{url: mk.url, token: mockAdminToken}
	seeded, err := admin.orderCount(ctx)
	if err != nil {
		return res, err
	}
	servers, err := startReplicas(ctx, c, hopts, dir, t, mk, callers)
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	if err != nil {
		return res, err
	}
	sessions := make([]*mcp.ClientSession, callers)
	for i := range sessions {
		sessions[i] = servers[i%t.replicas].sessions[i/t.replicas]
	}
	phase := fmt.Sprintf("%s%d-%d", t.backend, t.replicas, time.Now().UnixNano())
	for i, cs := range sessions {
		if err := raiseOrder(ctx, cs, phase+"-warm", i); err != nil {
			return res, fmt.Errorf("warm-up order: %w%s", err, servers[i%t.replicas].logTail())
		}
	}
	cpu0, err := cpuOf(servers)
	if err != nil {
		return res, err
	}
	o := raiseOrders(ctx, sessions, phase, total, limit)
	cpu1, err := cpuOf(servers)
	if err != nil {
		return res, err
	}
	res.Latency = summarise(o.durs, o.errs, o.wall)
	if len(o.durs) > 0 {
		res.CPUPerOrderMS = msf(cpu1-cpu0) / float64(len(o.durs))
	}
	res.Raised = len(sessions) + len(o.durs) - o.errs
	if res.Split, err = replicaSplit(servers); err != nil {
		return res, fmt.Errorf("read the replicas' logs: %w", err)
	}
	after, err := admin.orderCount(ctx)
	if err != nil {
		return res, err
	}
	res.MockOrders = after - seeded
	if res.MockOrders != res.Raised {
		return res, fmt.Errorf("ERROR: the mock StoreLink received %d orders but %d confirms were answered as raised (%s, %d replicas): the ledger and StoreLink disagree",
			res.MockOrders, res.Raised, t.backend, t.replicas)
	}
	if o.firstErr != nil {
		return res, fmt.Errorf("%d of %d orders failed, first: %w", o.errs, len(o.durs), o.firstErr)
	}
	return res, nil
}

// startReplicas starts the target's replicas against mk.
func startReplicas(ctx context.Context, c config, hopts httpOptions, dir string, t writeTarget, mk *mockProcess, callers int) ([]*mcpServer, error) {
	hopts.Args = append(append([]string{}, hopts.Args...), "--stateless")
	perReplica := (callers + t.replicas - 1) / t.replicas
	var servers []*mcpServer
	for i := range t.replicas {
		rdir := filepath.Join(dir, fmt.Sprintf("%s-replica%d", t.backend, i+1))
		if err := os.MkdirAll(rdir, 0o700); err != nil {
			return servers, err
		}
		// At debug: a POST answered at its first attempt is logged there
		// (ADR 0046), and the handler's figures pair it with tool.ok.
		env := serverEnv(rdir, "UPSTREAM_BASE_URL="+mk.url, "STORELINK_KEYRING_FILE="+mk.keyring, "ALLOW_WRITES=true", "LOG_LEVEL=debug")
		if t.dsn != "" {
			env = append(withoutVar(env, "STATE_DB_PATH"), "STATE_DATABASE_URL="+t.dsn)
		}
		s, err := startHTTP(ctx, c.server, rdir, env, hopts, perReplica)
		if err != nil {
			return servers, fmt.Errorf("replica %d: %w", i+1, err)
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// raiseOrder confirms order i of phase and checks that it was raised.
func raiseOrder(ctx context.Context, cs *mcp.ClientSession, phase string, i int) error {
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_raise_replenishment_order", Arguments: orderArgs(phase, i)})
	if err != nil {
		return err
	}
	return raised(r)
}

// orderRun is what the measured orders of one write phase gave.
type orderRun struct {
	durs     []time.Duration // one per order sent
	errs     int
	firstErr error
	wall     time.Duration
}

// raiseOrders sends up to total orders from every session at once, until
// they are all sent or limit has passed.
func raiseOrders(ctx context.Context, sessions []*mcp.ClientSession, phase string, total int, limit time.Duration) orderRun {
	durs := make([]time.Duration, total)
	var next, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(limit)
	for _, cs := range sessions {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				t0 := time.Now()
				err := raiseOrder(ctx, cs, phase, i)
				durs[i] = time.Since(t0)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	o := orderRun{durs: durs[:min(int(next.Load()), total)], errs: int(errs.Load()), wall: time.Since(start)}
	o.firstErr, _ = firstErr.Load().(error)
	return o
}

// cpuOf is the CPU time the servers have used so far, summed.
func cpuOf(servers []*mcpServer) (time.Duration, error) {
	var sum time.Duration
	for _, s := range servers {
		d, err := cpuTime(s.proc.pid())
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// replicaSplit reads where the orders' time went from the replicas' logs.
func replicaSplit(servers []*mcpServer) (orderSplit, error) {
	var logs []io.Reader
	for _, s := range servers {
		f, err := os.Open(s.logPath)
		if err != nil {
			return orderSplit{}, err
		}
		defer f.Close()
		logs = append(logs, f)
	}
	return splitOrders(logs...)
}

// orderCount asks the mock's admin endpoint how many orders it holds.
func (m mockAdmin) orderCount(ctx context.Context) (int, error) {
	var orders []json.RawMessage
	if err := m.do(ctx, http.MethodGet, "/_admin/orders", nil, &orders); err != nil {
		return 0, err
	}
	return len(orders), nil
}

// withoutVar drops every KEY=… entry of key from env.
func withoutVar(env []string, key string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}

// writesRun is the write phase of one run: one SQLite replica, then two
// replicas on PostgreSQL when a database is given.
func writesRun(ctx context.Context, c config, hopts *httpOptions, dir string, r *runResult, log func(string, ...any)) error {
	if hopts == nil {
		log("  writes: skipped, this build of storelink-mcp has no HTTP transport")
		return nil
	}
	targets := []writeTarget{{backend: "sqlite", replicas: 1}}
	if c.databaseURL != "" {
		// One replica separates the database's cost from the second's.
		targets = append(targets,
			writeTarget{backend: "postgres", replicas: 1, dsn: c.databaseURL},
			writeTarget{backend: "postgres", replicas: 2, dsn: c.databaseURL})
	} else {
		log("  writes: no --database-url (no PostgreSQL): the two-replica write phase is skipped")
	}
	for _, t := range targets {
		log("  writes: up to %d confirmed orders (at most %s) from %d callers, %d %s replica(s)", c.writeOrders, c.writeDur, c.callers, t.replicas, t.backend)
		w, err := writeRun(ctx, c, *hopts, dir, t, c.callers, c.writeOrders, c.writeDur)
		if err != nil {
			return fmt.Errorf("writes on %s: %w", t.backend, err)
		}
		r.Writes = append(r.Writes, w)
	}
	return nil
}

// label names a write configuration in the report.
func (w writeResult) label() string {
	return fmt.Sprintf("%s, %d replica(s)", w.Backend, w.Replicas)
}

// writeOf finds a run's write result for one configuration.
func writeOf(run runResult, label string) (writeResult, bool) {
	for _, w := range run.Writes {
		if w.label() == label {
			return w, true
		}
	}
	return writeResult{}, false
}

// writesMarkdown renders the write-phase table.
func (r *report) writesMarkdown(p func(string, ...any)) {
	var labels []string
	for _, run := range r.Runs {
		for _, w := range run.Writes {
			if !slices.Contains(labels, w.label()) {
				labels = append(labels, w.label())
			}
		}
	}
	if len(labels) == 0 {
		return
	}
	p("## The write path over HTTP: confirmed `korral_raise_replenishment_order`")
	p("")
	p("`serve --http --stateless` replicas against one mockstorelink process, %v callers round-robin over the replicas, each order with its own idempotency key and reason; at most %v orders or %v per configuration. Raised = confirms answered `raised` (warm-up included), Mock = orders the mock received. Handler, POST and handler without POST are the replicas' own log figures (tool.ok and upstream.request duration_ms, paired by call id): the handler reserves the key in the ledger, sends the POST and records the outcome; the audit insert, the HTTP exchange and the JSON come on top.",
		r.Config["callers"], r.Config["write_orders"], r.Config["write_duration"])
	p("")
	p("| State, replicas | Orders/run | p50 ms | p95 ms | p99 ms | Orders/s | Replicas' CPU ms/order | Handler p50 ms | POST p50 ms | Handler without POST p50 ms | Errors | Raised / Mock |")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, label := range labels {
		s := func(f func(writeResult) float64, d int) string {
			return r.over(func(x runResult) (float64, bool) {
				w, ok := writeOf(x, label)
				return f(w), ok
			}).format(d)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |", label,
			s(func(w writeResult) float64 { return float64(w.Latency.Calls) }, 0),
			s(func(w writeResult) float64 { return w.Latency.P50MS }, 1),
			s(func(w writeResult) float64 { return w.Latency.P95MS }, 1),
			s(func(w writeResult) float64 { return w.Latency.P99MS }, 1),
			s(func(w writeResult) float64 { return w.Latency.CallsPerSec }, 0),
			s(func(w writeResult) float64 { return w.CPUPerOrderMS }, 2),
			s(func(w writeResult) float64 { return w.Split.HandlerP50MS }, 1),
			s(func(w writeResult) float64 { return w.Split.PostP50MS }, 1),
			s(func(w writeResult) float64 { return w.Split.NotPostP50MS }, 1),
			s(func(w writeResult) float64 { return float64(w.Latency.Errors) }, 0),
			s(func(w writeResult) float64 { return float64(w.Raised) }, 0),
			s(func(w writeResult) float64 { return float64(w.MockOrders) }, 0))
	}
	base := labels[0]
	for _, label := range labels[1:] {
		ratio := func(f func(writeResult) float64) spread {
			return r.over(func(x runResult) (float64, bool) {
				a, okA := writeOf(x, label)
				b, okB := writeOf(x, base)
				if !okA || !okB || f(b) == 0 {
					return 0, false
				}
				return f(a) / f(b), true
			})
		}
		p("")
		p("%s against %s, ratios within each run: p50 %s, p99 %s, throughput %s.", label, base,
			ratio(func(w writeResult) float64 { return w.Latency.P50MS }).format(2),
			ratio(func(w writeResult) float64 { return w.Latency.P99MS }).format(2),
			ratio(func(w writeResult) float64 { return w.Latency.CallsPerSec }).format(2))
	}
	p("")
}
