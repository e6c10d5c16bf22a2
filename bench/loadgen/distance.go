package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The distance phase times korral_check_stock_risk over stdio against a
// large mock with latency on every route, for several store counts, with
// master data cold and warm. Wall time over the latency is the number of
// sequential round trips; the same calls without latency are the floor.

const (
	// distanceDelay is the latency injected on every route of the mock.
	distanceDelay = 50 * time.Millisecond
	// distanceWorldStores and distanceWorldSKUs size the mock's world
	// (mockstorelink --stores --skus, ADR 0025).
	distanceWorldStores = 180
	distanceWorldSKUs   = 18000
	// distanceMinCalls is the fewest measured calls per row.
	distanceMinCalls = 3
	// distanceCallTimeout bounds one call.
	distanceCallTimeout = time.Minute
)

// distanceCases are the store counts of the rows; 0 is the sweep.
var distanceCases = []int{1, 6, 20, 0}

// distanceMasters are the master data states, in measuring order.
var distanceMasters = []string{"cold", "warm"}

// distanceResult is one run of the phase.
type distanceResult struct {
	DelayMS     float64       `json:"delay_ms"`
	WorldStores int           `json:"world_stores"`
	WorldSKUs   int           `json:"world_skus"`
	Rows        []distanceRow `json:"rows"`
}

// distanceRow is one store count with master data cold or warm.
type distanceRow struct {
	// Stores is the number of stores in store_ids; 0 is the sweep.
	Stores int `json:"stores"`
	// Master is "cold" or "warm".
	Master string `json:"master_data"`
	// Available is false when the server refused the call; Note says why.
	Available bool   `json:"available"`
	Note      string `json:"note,omitempty"`
	// WallMS are the measured calls with latency; FloorMS without.
	WallMS  []float64 `json:"wall_ms,omitempty"`
	FloorMS []float64 `json:"floor_ms,omitempty"`
	// Received is what the mock received for one call at distance.
	Received *requestCounts `json:"received,omitempty"`
}

// key names the row across runs.
func (d distanceRow) key() string { return fmt.Sprintf("%d/%s", d.Stores, d.Master) }

// storesLabel is the row's store count as the report shows it.
func storesLabel(stores, world int) string {
	switch {
	case stores == 0:
		return fmt.Sprintf("sweep, all %d", world)
	case stores == 1:
		return "1 store"
	}
	return fmt.Sprintf("%d stores", stores)
}

// distanceLimit is a row's limit: at most a number of round trips, or
// strictly under a wall time.
type distanceLimit struct {
	RoundTrips float64
	Wall       time.Duration
}

// limitFor is a row's limit: 2.3 round trips cold and 1.3 warm for up to
// 20 stores; for the sweep, under 2 s cold and 1 s warm.
func limitFor(stores int, master string) distanceLimit {
	switch {
	case stores == 0 && master == "cold":
		return distanceLimit{Wall: 2 * time.Second}
	case stores == 0:
		return distanceLimit{Wall: time.Second}
	case master == "cold":
		return distanceLimit{RoundTrips: 2.3}
	}
	return distanceLimit{RoundTrips: 1.3}
}

func (l distanceLimit) String() string {
	if l.RoundTrips > 0 {
		return fmt.Sprintf("≤ %.1f round trips", l.RoundTrips)
	}
	return fmt.Sprintf("< %g s", l.Wall.Seconds())
}

// ratio is the measured median against the limit.
func (l distanceLimit) ratio(medianMS float64, delay time.Duration) float64 {
	if l.RoundTrips > 0 {
		return roundTrips(medianMS, delay) / l.RoundTrips
	}
	return medianMS / msf(l.Wall)
}

// met says whether a ratio from [distanceLimit.ratio] is within the limit.
func (l distanceLimit) met(ratio float64) bool {
	if l.RoundTrips > 0 {
		return ratio <= 1
	}
	return ratio < 1
}

// roundTrips is a wall in units of the injected latency.
func roundTrips(ms float64, delay time.Duration) float64 {
	if delay <= 0 {
		return 0
	}
	return ms / msf(delay)
}

// mockRequest is one record of the mock's /_admin/requests.
type mockRequest struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operation_id"`
	StoreID     string `json:"store_id"`
	Status      int    `json:"status"`
}

// requestCounts is what the mock received for one call.
type requestCounts struct {
	// Stores is how many stores were asked for inventory or POS.
	Stores       int `json:"stores"`
	InventoryMin int `json:"inventory_per_store_min"`
	InventoryMax int `json:"inventory_per_store_max"`
	POSMin       int `json:"pos_per_store_min"`
	POSMax       int `json:"pos_per_store_max"`
	// StoreReads, SKUReads and SupplierReads are the master data.
	StoreReads    int `json:"store_reads"`
	SKUReads      int `json:"sku_reads"`
	SupplierReads int `json:"supplier_reads"`
	// Other is every other request, Total all of them.
	Other int `json:"other"`
	Total int `json:"total"`
}

// countRequests sums the mock's request log.
func countRequests(reqs []mockRequest) requestCounts {
	inv, pos := map[string]int{}, map[string]int{}
	c := requestCounts{Total: len(reqs)}
	for _, r := range reqs {
		switch r.OperationID {
		case mockstorelink.OpGetInventory:
			inv[r.StoreID]++
		case mockstorelink.OpListPOSTransactions:
			pos[r.StoreID]++
		case mockstorelink.OpGetStore:
			c.StoreReads++
		case mockstorelink.OpGetSKU:
			c.SKUReads++
		case mockstorelink.OpGetSupplier:
			c.SupplierReads++
		default:
			c.Other++
		}
	}
	stores := map[string]bool{}
	for id := range inv {
		stores[id] = true
	}
	for id := range pos {
		stores[id] = true
	}
	c.Stores = len(stores)
	first := true
	for id := range stores {
		i, p := inv[id], pos[id]
		if first {
			c.InventoryMin, c.InventoryMax, c.POSMin, c.POSMax = i, i, p, p
			first = false
			continue
		}
		c.InventoryMin, c.InventoryMax = min(c.InventoryMin, i), max(c.InventoryMax, i)
		c.POSMin, c.POSMax = min(c.POSMin, p), max(c.POSMax, p)
	}
	return c
}

// asExpected says whether the call read each store's inventory and POS
// exactly once, the SKU and supplier at most once (none when warm), and
// nothing else.
func (c requestCounts) asExpected(stores int) bool {
	return c.Stores == stores && c.InventoryMin == 1 && c.InventoryMax == 1 && c.POSMin == 1 && c.POSMax == 1 &&
		c.SKUReads <= 1 && c.SupplierReads <= 1 && c.Other == 0
}

// mockAdmin is the mock's control endpoint.
type mockAdmin struct {
	url, token string
}

// latencyFaults is the fault list that delays every route by d; nil clears.
func latencyFaults(d time.Duration) []byte {
	if d <= 0 {
		return []byte("[]")
	}
	b, _ := json.Marshal([]mockstorelink.Fault{{Kind: mockstorelink.FaultLatency, Delay: d}})
	return b
}

func (m mockAdmin) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, m.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("mock admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("mock admin %s %s: HTTP %d: %s", method, path, resp.StatusCode, b)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// setLatency puts d on every route of the mock; 0 removes it.
func (m mockAdmin) setLatency(ctx context.Context, d time.Duration) error {
	return m.do(ctx, http.MethodPut, "/_admin/faults", latencyFaults(d), nil)
}

func (m mockAdmin) resetRequests(ctx context.Context) error {
	return m.do(ctx, http.MethodDelete, "/_admin/requests", nil, nil)
}

func (m mockAdmin) requests(ctx context.Context) ([]mockRequest, error) {
	var out []mockRequest
	err := m.do(ctx, http.MethodGet, "/_admin/requests", nil, &out)
	return out, err
}

// keyringStores reads the stores of a keyring file the mock wrote, in
// orderStores order.
func keyringStores(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var keys map[string]string
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("keyring %s: %w", path, err)
	}
	return orderStores(slices.Collect(maps.Keys(keys))), nil
}

// orderStores puts mockstorelink.StoreSmichov first, then the rest by
// number (ids that are not numbers last, by text).
func orderStores(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int {
		if a == b {
			return 0
		}
		if a == mockstorelink.StoreSmichov {
			return -1
		}
		if b == mockstorelink.StoreSmichov {
			return 1
		}
		na, errA := strconv.Atoi(a)
		nb, errB := strconv.Atoi(b)
		switch {
		case errA == nil && errB == nil:
			return na - nb
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

// riskArgs are a row's arguments: the first n stores, or all when n is 0.
func riskArgs(stores []string, n int) map[string]any {
	ids := []string{"all"}
	if n > 0 {
		ids = slices.Clone(stores[:n])
	}
	return map[string]any{"sku": mockstorelink.SKUButter, "store_ids": ids}
}

// errRefused is a call the server refused as an invalid argument.
var errRefused = errors.New("refused")

// unavailable says whether err is the server refusing the arguments.
func unavailable(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return errors.Is(err, errRefused) || strings.Contains(s, "INVALID_ARGUMENT") ||
		strings.Contains(s, "-32602") || strings.Contains(strings.ToLower(s), "invalid params")
}

// distancePlan is how many calls a row makes, and its time limit.
type distancePlan struct {
	calls, floorCalls int
	deadline          time.Time
}

// planFor sizes a row: the sweep makes half the calls of the others.
func planFor(stores, calls int, deadline time.Time) distancePlan {
	p := distancePlan{calls: calls, floorCalls: max(calls/2, distanceMinCalls), deadline: deadline}
	if stores == 0 {
		p.calls = max(calls/2, distanceMinCalls)
		p.floorCalls = max(calls/4, distanceMinCalls)
	}
	return p
}

// more says whether the i-th measured call (0-based) is still to be made.
func (p distancePlan) more(i int, now time.Time) bool {
	return i < p.calls && (i < distanceMinCalls || now.Before(p.deadline))
}

// distanceRun is the phase for one run.
func distanceRun(ctx context.Context, c config, dir string, log func(string, ...any)) (*distanceResult, error) {
	ddir := filepath.Join(dir, "distance")
	if err := os.MkdirAll(ddir, 0o700); err != nil {
		return nil, err
	}
	mk, err := startMock(ctx, c.mock, ddir, false, mockAdminToken,
		"--stores", strconv.Itoa(distanceWorldStores), "--skus", strconv.Itoa(distanceWorldSKUs))
	if err != nil {
		return nil, fmt.Errorf("mockstorelink: %w", err)
	}
	defer mk.p.stop(5*time.Second, true)
	url, keyring := mk.url, mk.keyring
	stores, err := keyringStores(keyring)
	if err != nil {
		return nil, err
	}
	if len(stores) < slices.Max(distanceCases) {
		return nil, fmt.Errorf("the mock's keyring holds %d stores, fewer than %d", len(stores), slices.Max(distanceCases))
	}
	admin := mockAdmin{url: url, token: mockAdminToken}
	res := &distanceResult{DelayMS: msf(distanceDelay), WorldStores: len(stores), WorldSKUs: distanceWorldSKUs}
	deadline := time.Now().Add(c.distanceDur)
	log("  distance: %d ms on every route, %d stores and %d SKUs, %d calls a row (the sweep half), at most %s",
		distanceDelay.Milliseconds(), len(stores), distanceWorldSKUs, c.distanceCalls, c.distanceDur)
	for _, master := range distanceMasters {
		sdir := filepath.Join(ddir, master)
		if err := os.MkdirAll(sdir, 0o700); err != nil {
			return nil, err
		}
		env := serverEnv(sdir, "UPSTREAM_BASE_URL="+url, "STORELINK_KEYRING_FILE="+keyring)
		if master == "cold" {
			env = append(env, "MASTER_DATA_TTL=0")
		}
		s, err := startStdio(ctx, c.server, sdir, env)
		if err != nil {
			return nil, err
		}
		for _, n := range distanceCases {
			row, err := measureDistance(ctx, s.sessions[0], admin, riskArgs(stores, n), planFor(n, c.distanceCalls, deadline))
			if err != nil {
				s.close()
				return nil, fmt.Errorf("%s, master data %s: %w%s", storesLabel(n, len(stores)), master, err, s.logTail())
			}
			row.Stores, row.Master = n, master
			res.Rows = append(res.Rows, row)
			if !row.Available {
				log("  distance: %s, %s: not available (%s)", storesLabel(n, len(stores)), master, row.Note)
				continue
			}
			med := median(row.WallMS)
			log("  distance: %s, %s: median %.0f ms (%.2f round trips), floor %.1f ms, %d calls",
				storesLabel(n, len(stores)), master, med, roundTrips(med, distanceDelay), median(row.FloorMS), len(row.WallMS))
		}
		s.close()
	}
	return res, nil
}

// measureDistance makes one row's calls: a warm-up without latency, the
// floor, one counted call at distance, then the measured ones.
func measureDistance(ctx context.Context, cs *mcp.ClientSession, admin mockAdmin, args map[string]any, plan distancePlan) (distanceRow, error) {
	var row distanceRow
	call := func() (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, distanceCallTimeout)
		defer cancel()
		t0 := time.Now()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: maps.Clone(args)})
		d := time.Since(t0)
		if err != nil {
			return d, err
		}
		if res.IsError {
			text := resultText(res)
			if strings.Contains(text, "INVALID_ARGUMENT") {
				return d, fmt.Errorf("%w: %s", errRefused, text)
			}
			return d, fmt.Errorf("tool error: %s", text)
		}
		return d, nil
	}
	if err := admin.setLatency(ctx, 0); err != nil {
		return row, err
	}
	if _, err := call(); err != nil {
		if unavailable(err) {
			row.Note = refusal(err)
			return row, nil
		}
		return row, err
	}
	row.Available = true
	for range plan.floorCalls {
		d, err := call()
		if err != nil {
			return row, err
		}
		row.FloorMS = append(row.FloorMS, msf(d))
	}
	if err := admin.setLatency(ctx, distanceDelay); err != nil {
		return row, err
	}
	defer func() { _ = admin.setLatency(context.WithoutCancel(ctx), 0) }()
	if err := admin.resetRequests(ctx); err != nil {
		return row, err
	}
	if _, err := call(); err != nil {
		return row, err
	}
	reqs, err := admin.requests(ctx)
	if err != nil {
		return row, err
	}
	counts := countRequests(reqs)
	row.Received = &counts
	for i := 0; plan.more(i, time.Now()); i++ {
		d, err := call()
		if err != nil {
			return row, err
		}
		row.WallMS = append(row.WallMS, msf(d))
	}
	return row, nil
}

// refusal is the short reason of a refused call for the report; it never
// holds a '|' (Markdown table cell).
func refusal(err error) string {
	text, _ := strings.CutPrefix(err.Error(), errRefused.Error()+": ")
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(text), &env) == nil && env.Error.Code != "" {
		text = env.Error.Code + ": " + env.Error.Message
	}
	text, _, _ = strings.Cut(text, "\n")
	text = strings.ReplaceAll(text, "|", "/")
	if r := []rune(text); len(r) > 100 {
		text = string(r[:100]) + "…"
	}
	return text
}
