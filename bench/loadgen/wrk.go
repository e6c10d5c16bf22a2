package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// inventoryPath is the one request every mock is measured on: the butter's
// on-hand count at store 47.
const inventoryPath = "/v1/stores/47/inventory?sku=8847291"

// storeKeyHeader is the contract's store-key header.
const storeKeyHeader = "X-Korral-Store-Key"

// mockTarget is one mock StoreLink serving the contract on loopback.
type mockTarget struct {
	name string
	// start runs it and returns its base URL, the key for store 47 and the
	// process.
	start func(ctx context.Context, dir string) (baseURL, key string, p *child, err error)
}

// goMock is the mock target of the mockstorelink binary, with or without
// checking its own responses against the contract (requests are always
// checked).
func goMock(bin string, validateResponses bool) func(context.Context, string) (string, string, *child, error) {
	return func(ctx context.Context, dir string) (string, string, *child, error) {
		m, err := startMock(ctx, bin, dir, validateResponses, "")
		if err != nil {
			return "", "", nil, err
		}
		return m.url, m.key47, m.p, nil
	}
}

// mockProcess is a running mockstorelink.
type mockProcess struct {
	url     string // base URL
	key47   string // store 47's key
	keyring string // the keyring file it wrote
	p       *child
}

// startMock runs the mockstorelink binary in dir, with /_admin/ when
// adminToken is set (via the environment) and extra arguments. The mock runs
// on the real clock, as the servers measured against it do (their clock is
// not settable with UPSTREAM_BASE_URL): its sales history ends at the real
// now, so the answers measured are of the same kind on any date. A mock
// pinned to the tests' instant would age out of the servers' 14-day
// lookback 14 days after that instant.
func startMock(ctx context.Context, bin, dir string, validateResponses bool, adminToken string, extra ...string) (*mockProcess, error) {
	keyring := filepath.Join(dir, fmt.Sprintf("keyring-%d.json", time.Now().UnixNano()))
	args := []string{"--addr", "127.0.0.1:0", "--keyring-out", keyring, "--log-level", "error"}
	if !validateResponses {
		args = append(args, "--no-response-validation")
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if adminToken != "" {
		cmd.Env = append(cmd.Env, "MOCKSTORELINK_ADMIN_TOKEN="+adminToken)
	}
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := startChild(cmd)
	if err != nil {
		return nil, err
	}
	// The URL is printed once the listener and the keyring file exist.
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var url string
	select {
	case url = <-line:
	case <-time.After(10 * time.Second):
	case <-ctx.Done():
	}
	if url == "" {
		p.stop(5*time.Second, true)
		return nil, errors.New("mockstorelink printed no URL")
	}
	b, err := os.ReadFile(keyring)
	if err != nil {
		p.stop(5*time.Second, true)
		return nil, err
	}
	var keys map[string]string
	if err := json.Unmarshal(b, &keys); err != nil || keys["47"] == "" {
		p.stop(5*time.Second, true)
		return nil, fmt.Errorf("keyring %s has no key for store 47", keyring)
	}
	return &mockProcess{url: url, key47: keys["47"], keyring: keyring, p: p}, nil
}

// prismMock runs Prism's mock server on the same spec. Prism checks that a
// key is present, not which, so any non-empty key is accepted.
func prismMock(bin, spec string) func(context.Context, string) (string, string, *child, error) {
	return func(ctx context.Context, dir string) (string, string, *child, error) {
		addr, err := freeAddr()
		if err != nil {
			return "", "", nil, err
		}
		port := addr[strings.LastIndex(addr, ":")+1:]
		cmd := exec.Command(bin, "mock", "-h", "127.0.0.1", "-p", port, "-v", "error", spec)
		cmd.Env = os.Environ()
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		p, err := startChild(cmd)
		if err != nil {
			return "", "", nil, err
		}
		url := "http://" + addr
		const key = "prism-accepts-any-key"
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if status, _ := probe(ctx, url, key); status == http.StatusOK {
				return url, key, p, nil
			}
			select {
			case <-p.done:
				return "", "", nil, errors.New("prism exited before serving")
			case <-time.After(200 * time.Millisecond):
			}
		}
		p.stop(5*time.Second, true)
		return "", "", nil, errors.New("prism did not answer 200 within 60s")
	}
}

// probe sends the measured request once and returns its status and body.
func probe(ctx context.Context, baseURL, key string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+inventoryPath, nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set(storeKeyHeader, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// wrkResult is what wrk reports for one target.
type wrkResult struct {
	RequestsPerSec float64 `json:"requests_per_sec"`
	P50MS          float64 `json:"p50_ms"`
	P99MS          float64 `json:"p99_ms"`
	Requests       int64   `json:"requests"`
	Non2xx         int64   `json:"non_2xx"`
	SocketErrors   string  `json:"socket_errors,omitempty"`
	Peak           memory  `json:"peak"`
}

// runWrk starts the target, checks that the measured request answers 200,
// drives it with wrk, records the target's peak memory and stops it.
func runWrk(ctx context.Context, wrkBin string, t mockTarget, dir string, threads, conns int, dur time.Duration) (wrkResult, error) {
	url, key, p, err := t.start(ctx, dir)
	if err != nil {
		return wrkResult{}, fmt.Errorf("%s: start: %w", t.name, err)
	}
	defer p.stop(5*time.Second, true)
	if status, body := probe(ctx, url, key); status != http.StatusOK {
		return wrkResult{}, fmt.Errorf("%s: the measured request answers %d, not 200: %.300s", t.name, status, body)
	}
	cmd := exec.CommandContext(ctx, wrkBin, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", fmt.Sprintf("%ds", int(dur.Seconds())), "--latency", "-H", storeKeyHeader+": "+key, url+inventoryPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("%s: wrk: %w\n%s", t.name, err, out)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		return r, fmt.Errorf("%s: %w\n%s", t.name, err, out)
	}
	r.Peak, _ = readMemory(p.pid())
	return r, nil
}

var (
	wrkRPS      = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkTotal    = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in`)
	wrkNon2xx   = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s+([0-9]+)`)
	wrkSocket   = regexp.MustCompile(`(?m)^\s*Socket errors:\s*(.+)$`)
	wrkPct      = regexp.MustCompile(`(?m)^\s+(50|99)(?:\.0+)?%\s+([0-9.]+)(us|ms|s)\s*$`)
	unitToMilli = map[string]float64{"us": 1e-3, "ms": 1, "s": 1e3}
)

// parseWrk reads wrk's text report (with --latency).
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return r, errors.New("no Requests/sec in wrk output")
	}
	r.RequestsPerSec, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkTotal.FindStringSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		r.SocketErrors = strings.TrimSpace(m[1])
	}
	for _, m := range wrkPct.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		v *= unitToMilli[m[3]]
		if m[1] == "50" {
			r.P50MS = v
		} else {
			r.P99MS = v
		}
	}
	return r, nil
}

// mocksMarkdown renders the mocks' throughput under wrk and their ratios
// within each run.
func (r *report) mocksMarkdown(p func(string, ...any)) {
	if len(r.Runs) == 0 || len(r.Runs[0].Mocks) == 0 {
		return
	}
	p("## Mock StoreLink throughput (wrk %v, `GET %s` with the store key)", r.Config["wrk"], inventoryPath)
	p("")
	p("| Server | Requests/s | p50 ms | p99 ms | Non-2xx | Peak RSS MiB |")
	p("|---|---|---|---|---|---|")
	for _, name := range []string{mockFull, mockNoResp, mockPrism} {
		get := func(f func(wrkResult) float64) spread {
			return r.over(func(x runResult) (float64, bool) {
				w, ok := x.Mocks[name]
				return f(w), ok
			})
		}
		rps := get(func(w wrkResult) float64 { return w.RequestsPerSec })
		if rps.N == 0 {
			continue
		}
		p("| %s | %s | %s | %s | %s | %s |", name, rps.format(0),
			get(func(w wrkResult) float64 { return w.P50MS }).format(2),
			get(func(w wrkResult) float64 { return w.P99MS }).format(2),
			get(func(w wrkResult) float64 { return float64(w.Non2xx) }).format(0),
			get(func(w wrkResult) float64 { return mb(w.Peak.HWMKB) }).format(1))
	}
	p("")
	p("| Ratio (within each run) | |")
	p("|---|---|")
	if fullVsPrism := r.mockRatio(mockFull, mockPrism); fullVsPrism.N > 0 {
		p("| mockstorelink full validation / Prism | %sx |", fullVsPrism.format(1))
		p("| mockstorelink request validation only / Prism | %sx |", r.mockRatio(mockNoResp, mockPrism).format(1))
	}
	p("| mockstorelink request only / full validation | %sx |", r.mockRatio(mockNoResp, mockFull).format(2))
	p("")
}
