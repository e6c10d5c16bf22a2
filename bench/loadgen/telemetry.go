package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The telemetry phase measures what metrics and tracing cost a trivial HTTP
// call; each setting runs twice, in opposite orders.

// telemetrySetting is one way of starting the server.
type telemetrySetting struct {
	Name    string
	metrics bool
	tracing bool
}

var telemetrySettings = []telemetrySetting{
	{Name: "off"},
	{Name: "metrics on (/metrics scraped every second), no collector", metrics: true},
	{Name: "metrics on, tracing on to an unreachable collector", metrics: true, tracing: true},
}

// telemetryResult is one setting's figures in one run (the mean of its two
// measurements).
type telemetryResult struct {
	Setting     string  `json:"setting"`
	P50MS       float64 `json:"trivial_p50_ms"`
	CallsPerSec float64 `json:"calls_per_sec"`
}

// trivial is the call the phase is about: it reads nothing from StoreLink,
// so the telemetry is as large a share of it as it can be.
func trivial() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{}}
}

func telemetryRun(ctx context.Context, c config, hopts httpOptions, dir string, log func(string, ...any)) ([]telemetryResult, error) {
	sum := map[string]*telemetryResult{}
	order := slices.Clone(telemetrySettings)
	for round := range 2 {
		if round == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			log("  telemetry: %s", s.Name)
			p50, rate, err := measureTelemetry(ctx, c, hopts, dir, s)
			if err != nil {
				return nil, fmt.Errorf("telemetry (%s): %w", s.Name, err)
			}
			r := sum[s.Name]
			if r == nil {
				r = &telemetryResult{Setting: s.Name}
				sum[s.Name] = r
			}
			r.P50MS += p50 / 2
			r.CallsPerSec += rate / 2
		}
	}
	var out []telemetryResult
	for _, s := range telemetrySettings {
		out = append(out, *sum[s.Name])
	}
	return out, nil
}

// measureTelemetry starts the server with setting s and returns the
// trivial call's sequential p50 and its throughput with c.callers sessions.
func measureTelemetry(ctx context.Context, c config, hopts httpOptions, dir string, s telemetrySetting) (float64, float64, error) {
	env := serverEnv(dir)
	h := hopts
	h.Args = slices.Clone(hopts.Args)
	metricsAddr := ""
	if s.metrics {
		var err error
		if metricsAddr, err = freeAddr(); err != nil {
			return 0, 0, err
		}
		h.Args = append(h.Args, "--metrics", metricsAddr)
	}
	if s.tracing {
		dead, err := freeAddr()
		if err != nil {
			return 0, 0, err
		}
		env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+dead, "OTEL_TRACES_SAMPLER=always_on")
	}
	srv, err := startHTTP(ctx, c.server, dir, env, h, c.callers)
	if err != nil {
		return 0, 0, err
	}
	defer srv.close()
	stop := make(chan struct{})
	var scrapes sync.WaitGroup
	if metricsAddr != "" {
		// A Prometheus scraping every second, as production would.
		scrapes.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if resp, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
			}
		})
	}
	defer func() { close(stop); scrapes.Wait() }()
	if _, err := callMany(ctx, srv.sessions[:1], 1, 100); err != nil {
		return 0, 0, err
	}
	seq, err := callMany(ctx, srv.sessions[:1], 1, c.seqCalls)
	if err != nil {
		return 0, 0, err
	}
	conc, err := callMany(ctx, srv.sessions, c.callers, c.conCalls)
	if err != nil {
		return 0, 0, err
	}
	return seq.P50MS, conc.CallsPerSec, nil
}

// callMany makes total trivial calls from callers goroutines spread over
// sessions.
func callMany(ctx context.Context, sessions []*mcp.ClientSession, callers, total int) (latencies, error) {
	durs := make([]time.Duration, total)
	var next, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range callers {
		cs := sessions[i%len(sessions)]
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= total {
					return
				}
				t0 := time.Now()
				res, err := cs.CallTool(ctx, trivial())
				durs[n] = time.Since(t0)
				if err != nil || res.IsError {
					errs.Add(1)
					if err == nil {
						err = fmt.Errorf("tool error: %s", resultText(res))
					}
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	l := summarise(durs, int(errs.Load()), time.Since(start))
	if e, ok := firstErr.Load().(error); ok {
		return l, fmt.Errorf("%d of %d calls failed, first: %w", errs.Load(), total, e)
	}
	return l, nil
}

// telemetryMarkdown is the phase's table: each setting beside off, and the
// cost as a share of off's figure.
func (r *report) telemetryMarkdown(p func(string, ...any)) {
	get := func(name string, f func(telemetryResult) float64) spread {
		return r.over(func(x runResult) (float64, bool) {
			for _, t := range x.Telemetry {
				if t.Setting == name {
					return f(t), true
				}
			}
			return 0, false
		})
	}
	p50 := func(t telemetryResult) float64 { return t.P50MS }
	rate := func(t telemetryResult) float64 { return t.CallsPerSec }
	off := telemetrySettings[0].Name
	if get(off, p50).N == 0 {
		return
	}
	p("## Telemetry overhead: a trivial call (`korral_list_authorized_stores`) over Streamable HTTP")
	p("")
	p("| Setting | trivial call p50, 1 caller (ms) | calls/s, %v sessions | p50 cost | throughput cost |", r.Config["callers"])
	p("|---|---|---|---|---|")
	base50, baseRate := get(off, p50).Median, get(off, rate).Median
	for _, s := range telemetrySettings {
		a, b := get(s.Name, p50), get(s.Name, rate)
		cost50, costRate := "", ""
		if s.Name != off && base50 > 0 && baseRate > 0 {
			cost50 = fmt.Sprintf("%+.1f%%", (a.Median/base50-1)*100)
			costRate = fmt.Sprintf("%+.1f%%", (1-b.Median/baseRate)*100)
		}
		p("| %s | %s | %s | %s | %s |", s.Name, a.format(3), b.format(0), cost50, costRate)
	}
	p("")
	p("Each setting is a fresh server measured twice per run, in opposite orders; costs compare medians over the runs (positive: slower). Target: under 5%% with metrics on and no collector.")
	p("")
}
