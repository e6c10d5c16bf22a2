package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/zoo"
	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// The first hour with a differing StoreLink, for every zoo member: check,
// apply suggest's proposals to a copy of the repository, generate, build,
// check again, then compare each tool's figures with the member's own state
// and check a confirmed order is its one new order.

// adaptRun is one member's adaptation: the member, its keyring and the adapted binaries.
type adaptRun struct {
	spec    zoo.Spec
	member  *zoo.Member
	mock    *mockstorelink.Server
	url     string
	dir     string
	keyring string
	// repo is the adapted copy; mcp and contract its binaries.
	repo, mcp, contract string
	patch               string
}

func startMember(t *testing.T, spec zoo.Spec) *adaptRun {
	t.Helper()
	mock, err := mockstorelink.New(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &adaptRun{spec: spec, mock: mock, member: spec.Build(mock), dir: t.TempDir()}
	srv := httptest.NewServer(r.member)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	r.keyring = filepath.Join(r.dir, "keyring.json")
	b, _ := json.Marshal(mock.DefaultKeyring())
	if err := os.WriteFile(r.keyring, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// copyRepo copies the repository's tracked files, as on disk, to a new directory.
func copyRepo(t *testing.T) string {
	t.Helper()
	root := e2etest.Root(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "repo")
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree, or a submodule
		}
		info, _ := os.Stat(filepath.Join(root, f))
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// runIn runs a command in dir (killed after ten minutes) and returns its exit code.
func runIn(t *testing.T, dir string, stdin []byte, stdout, stderr io.Writer, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: no end within 10 minutes", name, args)
	}
	return cmd.ProcessState.ExitCode()
}

// sh runs a command in dir and fails the test on a non-zero exit.
func sh(t *testing.T, dir string, stdin []byte, name string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if code := runIn(t, dir, stdin, &out, &out, name, args...); code != 0 {
		t.Fatalf("%s %v in %s: exit %d\n%s", name, args, dir, code, out.String())
	}
	return out.String()
}

// check runs storelink-contract against the member, with writes at store 47,
// and returns the JSON report decoded and raw.
func (r *adaptRun) check(t *testing.T, bin string) (checkReport, []byte) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := runIn(t, "", nil, &out, &errb, bin, "check", "--base-url", r.url, "--keyring-file", r.keyring,
		"--allow-writes", "--write-store", "47", "--format", "json"); code != 0 && code != 1 {
		t.Fatalf("check: exit %d\n%s", code, errb.String())
	}
	var rep checkReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("the check's report is not JSON: %v\n%s", err, out.String())
	}
	return rep, out.Bytes()
}

// checkReport is what the test reads of a check's JSON report.
type checkReport struct {
	Causes []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"causes"`
}

func (c checkReport) ids() []string {
	var out []string
	for _, x := range c.Causes {
		out = append(out, x.ID)
	}
	slices.Sort(out)
	return out
}

// buildOnce builds the unpatched binaries once per test run.
var unpatched struct {
	once          sync.Once
	mcp, contract string
	err           error
}

func (r *adaptRun) adapt(t *testing.T) {
	t.Helper()
	root := e2etest.Root(t)
	unpatched.once.Do(func() {
		dir, err := os.MkdirTemp("", "storelink-zoo-")
		if err != nil {
			unpatched.err = err
			return
		}
		unpatched.contract = filepath.Join(dir, "storelink-contract")
		cmd := exec.Command("go", "build", "-o", unpatched.contract, "./cmd/storelink-contract")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			unpatched.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if unpatched.err != nil {
		t.Fatal(unpatched.err)
	}
	// 1. The check, with the contract as it is.
	first, raw := r.check(t, unpatched.contract)
	report := filepath.Join(r.dir, "report.json")
	if err := os.WriteFile(report, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// 2. suggest's patch, applied to a copy.
	var patch, sugErr bytes.Buffer
	if code := runIn(t, "", nil, &patch, &sugErr, unpatched.contract, "suggest", report); code != 0 {
		t.Fatalf("suggest: exit %d\n%s", code, sugErr.String())
	}
	r.patch = patch.String()
	t.Logf("%s: %d causes; suggest:\n%s", r.spec.Name, len(first.Causes), sugErr.String())
	if strings.TrimSpace(r.patch) == "" {
		r.mcp, r.contract = e2etest.Binary(t), unpatched.contract
		return
	}
	r.repo = copyRepo(t)
	sh(t, r.repo, nil, "git", "init", "-q")
	sh(t, r.repo, nil, "git", "add", "-A")
	sh(t, r.repo, patch.Bytes(), "git", "apply", "-p1", "-")
	// 3. make generate, and a build: no hand edit anywhere.
	sh(t, r.repo, nil, "make", "generate")
	bin := filepath.Join(r.dir, "bin")
	sh(t, r.repo, nil, "go", "build", "-o", bin+"/", "./cmd/storelink-mcp", "./cmd/storelink-contract")
	r.mcp, r.contract = filepath.Join(bin, "storelink-mcp"), filepath.Join(bin, "storelink-contract")
	// 4. The check again: no cause the first check did not report.
	again, _ := r.check(t, r.contract)
	for _, id := range again.ids() {
		if !slices.Contains(first.ids(), id) {
			t.Errorf("%s: the check after the patch reports a new cause %s", r.spec.Name, id)
		}
	}
}

// direct asks the member itself, with store 47's key.
func (r *adaptRun) direct(t *testing.T, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.url+path, nil)
	req.Header.Set("X-Korral-Store-Key", r.mock.DefaultKeyring()["47"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v
}

// unitsSince sums the member's butter sales units at store 47 since start.
func (r *adaptRun) unitsSince(t *testing.T, start string) float64 {
	t.Helper()
	total, cursor := 0.0, ""
	for range 100 {
		q := url.Values{"sku": {mockstorelink.SKUButter}, "since": {start}, "limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		page := r.direct(t, "/v1/stores/47/pos?"+q.Encode())
		txs, _ := page["transactions"].([]any)
		for _, x := range txs {
			tx, _ := x.(map[string]any)
			u, _ := tx["units"].(float64)
			total += u
		}
		if cursor, _ = page["next_cursor"].(string); cursor == "" {
			return total
		}
	}
	t.Fatal("more than 100 pages of sales")
	return 0
}

// quantityOf is an order's quantity in the member's shape.
func quantityOf(o map[string]any) float64 {
	for _, k := range []string{"quantity_units", "quantity"} {
		if q, ok := o[k].(float64); ok {
			return q
		}
	}
	return -1
}

func TestZooAdaptation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolkit once per member that needs a patch")
	}
	for _, spec := range zoo.Members() {
		t.Run(spec.Name, func(t *testing.T) { zooMember(t, spec) })
	}
}

// zooMember adapts the toolkit to one member and checks the tools against its state.
func zooMember(t *testing.T, spec zoo.Spec) {
	r := startMember(t, spec)
	r.adapt(t)
	before := r.member.Orders()
	p := e2etest.StartBinary(t, r.mcp, []string{
		"UPSTREAM_BASE_URL=" + r.url, "STORELINK_KEYRING_FILE=" + r.keyring,
		"STATE_DB_PATH=" + filepath.Join(r.dir, "state.db"), "ALLOW_WRITES=true", "HOME=" + r.dir,
	})

	// The stores the keyring names.
	stores := data(t, p.Call("korral_list_authorized_stores", map[string]any{}))
	var ids []string
	list, _ := stores["stores"].([]any)
	for _, s := range list {
		m, _ := s.(map[string]any)
		id, _ := m["store_id"].(string)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"102", "47"}) {
		t.Errorf("stores: %v", stores)
	}

	// The stock answer: the member's own on-hand figure.
	inv := r.direct(t, "/v1/stores/47/inventory?sku="+mockstorelink.SKUButter)
	risk := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	if ok, _ := risk["ok"].(bool); !ok {
		t.Fatalf("stock risk: %v", risk)
	}
	if got, want := fmt.Sprint(findNumber(data(t, risk), "on_hand_units")), fmt.Sprint(inv["on_hand_units"]); got != want {
		t.Errorf("on hand: the tool says %s, the member %s", got, want)
	}

	// The tool's units lie between the member's own, read before and after it.
	salesArgs := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	sales := p.Call("korral_list_recent_sales", salesArgs)
	if ok, _ := sales["ok"].(bool); !ok {
		t.Fatalf("recent sales: %v", sales)
	}
	sd := data(t, sales)
	start, _ := sd["window_start"].(string)
	lo := r.unitsSince(t, start)
	sd = data(t, p.Call("korral_list_recent_sales", salesArgs))
	hi := r.unitsSince(t, start)
	if got := num(sd["units_sold_in_window"]); sd["window_start"] == start && (got < lo || got > hi) {
		t.Errorf("units sold since %s: the tool says %v, the member %v to %v", start, got, lo, hi)
	}

	r.checkOneOrder(t, p, spec.Name, before)
}

// checkOneOrder confirms one order at p and checks it is the member's one new
// order, with the quantity asked and the status the tool reads.
func (r *adaptRun) checkOneOrder(t *testing.T, p *e2etest.Proc, name string, before []map[string]any) {
	t.Helper()
	order := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true,
		"reason", "Zoo adaptation: "+url.PathEscape(name)))
	d := data(t, order)
	orderID, _ := d["order_id"].(string)
	// Exactly one new order, the one the tool names, with the quantity asked.
	known := map[any]bool{}
	for _, o := range before {
		known[o["order_id"]] = true
	}
	var added []map[string]any
	for _, o := range r.member.Orders() {
		if !known[o["order_id"]] {
			added = append(added, o)
		}
	}
	if len(added) != 1 {
		t.Fatalf("the member holds %d new orders after one confirmed order, want 1: %v (tool: %v)", len(added), added, order)
	}
	if held := added[0]; held["order_id"] != orderID || quantityOf(held) != 24 {
		t.Errorf("the tool raised %q; the member holds %v", orderID, held)
	}
	status := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": orderID, "store_id": "47"}))
	if status["order_id"] != orderID || status["status"] != added[0]["status"] {
		t.Errorf("status: %v; the member holds %v", status, added[0])
	}
}

// findNumber finds the first value of key anywhere in v.
func findNumber(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		if x, ok := t[key]; ok {
			return x
		}
		for _, e := range t {
			if x := findNumber(e, key); x != nil {
				return x
			}
		}
	case []any:
		for _, e := range t {
			if x := findNumber(e, key); x != nil {
				return x
			}
		}
	}
	return nil
}
