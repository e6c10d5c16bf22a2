package e2e_test

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// Host consent (WRITE_APPROVAL=host) with the official TypeScript clients of
// both generations: an order lands only when the person typed its quantity,
// and every refusal sends nothing to the mock StoreLink.

// consentScript is the conformance/tsclient driver that answers the server's questions.
const consentScript = "consent.mjs"

// consentKey is a sealing key for the tests (64 hex digits).
const consentKey = "5c1f0e2d3b4a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

// consentReply is the driver's answer to one call.
type consentReply struct {
	ID     int `json:"id"`
	Result *struct {
		IsError        bool             `json:"isError"`
		Content        []map[string]any `json:"content"`
		ResultType     string           `json:"resultType"`
		RequestState   string           `json:"requestState"`
		InputRequests  map[string]any   `json:"inputRequests"`
		StructuredData map[string]any   `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// Asked is every question the server put to the user in the call.
	Asked []struct {
		Message         string         `json:"message"`
		RequestedSchema map[string]any `json:"requestedSchema"`
		// Mode, URL and ElicitationID are a URL question's.
		Mode          string `json:"mode"`
		URL           string `json:"url"`
		ElicitationID string `json:"elicitationId"`
	} `json:"asked"`
}

// envelope is the tool's answer inside a reply; nil when there is none.
func (r consentReply) envelope() map[string]any {
	if r.Result == nil || len(r.Result.Content) == 0 {
		return nil
	}
	text, _ := r.Result.Content[0]["text"].(string)
	var env map[string]any
	_ = json.Unmarshal([]byte(text), &env)
	return env
}

// consentHost is one driver process and the storelink-mcp it spawned.
type consentHost struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *e2etest.SyncBuffer
	nextID int
	// protocol is the revision the client connected with.
	protocol string
}

// requireClient2 skips (or fails under CI=true) unless the 2.x client is installed.
func requireClient2(t *testing.T, inst tsInstall) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(inst.modules, "@modelcontextprotocol", "client", "package.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("@modelcontextprotocol/client is not installed in %s, and CI=true requires this test: run `make tsclient`", inst.modules)
		}
		t.Skipf("@modelcontextprotocol/client is not installed: run `make tsclient` to run this test")
	}
}

// startConsentHost starts consent.mjs spawning the real binary with env, as a
// client of generation "1" or "2", with or without form elicitation.
func startConsentHost(t *testing.T, inst tsInstall, name, generation string, elicitation bool, env []string) *consentHost {
	t.Helper()
	return launchConsentHost(t, inst, name, stdioServer(t, env, map[string]any{"generation": generation, "elicitation": elicitation}))
}

// stdioServer is a driver's configuration for spawning the binary over stdio
// with exactly env (and PATH), plus extra.
func stdioServer(t *testing.T, env []string, extra map[string]any) map[string]any {
	t.Helper()
	serverEnv := map[string]string{"PATH": os.Getenv("PATH")}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		serverEnv[k] = v
	}
	cfg := map[string]any{"command": e2etest.Binary(t), "env": serverEnv}
	maps.Copy(cfg, extra)
	return cfg
}

// launchConsentHost starts consent.mjs with cfg and waits until its client is connected.
func launchConsentHost(t *testing.T, inst tsInstall, name string, cfg map[string]any) *consentHost {
	t.Helper()
	work := stageTSScript(t, inst, consentScript)
	cfgJSON, _ := json.Marshal(cfg)
	cmd := exec.Command(inst.node, filepath.Join(work, consentScript), string(cfgJSON))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &consentHost{t: t, name: name, cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), stderr: &e2etest.SyncBuffer{}}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			h.lines <- slices.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(h.stop)
	var ready struct {
		Ready    bool   `json:"ready"`
		Protocol string `json:"protocol"`
	}
	if line := h.next(30 * time.Second); line == nil || json.Unmarshal(line, &ready) != nil || !ready.Ready {
		t.Fatalf("%s: the client did not connect: %s\nstderr:\n%s", name, line, tail(h.stderr.String(), 4000))
	}
	h.protocol = ready.Protocol
	return h
}

func (h *consentHost) next(wait time.Duration) []byte {
	select {
	case line := <-h.lines:
		return line
	case <-time.After(wait):
		return nil
	}
}

// stop closes the driver's stdin (ending the session and the server), bounded
// in time, then kills it by PID.
func (h *consentHost) stop() {
	_ = h.stdin.Close()
	done := make(chan struct{})
	go func() { _ = h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = h.cmd.Process.Kill()
		<-done
	}
}

// do sends one request to the driver and returns its reply.
func (h *consentHost) do(label string, req map[string]any) consentReply {
	h.t.Helper()
	h.nextID++
	req["id"] = h.nextID
	if req["name"] == nil {
		req["name"] = "korral_raise_replenishment_order"
	}
	line, _ := json.Marshal(req)
	if _, err := h.stdin.Write(append(line, '\n')); err != nil {
		h.t.Fatalf("%s: %s: write to the client: %v", h.name, label, err)
	}
	got := h.next(90 * time.Second)
	if got == nil {
		h.t.Fatalf("%s: %s: no answer in 90 s\nstderr:\n%s", h.name, label, tail(h.stderr.String(), 4000))
	}
	var r consentReply
	if err := json.Unmarshal(got, &r); err != nil || r.ID != h.nextID {
		h.t.Fatalf("%s: %s: reply %s (%v)", h.name, label, got, err)
	}
	if r.Error != nil {
		h.t.Fatalf("%s: %s: the client threw %v: %s\nstderr:\n%s", h.name, label, r.Error.Code, r.Error.Message, tail(h.stderr.String(), 4000))
	}
	return r
}

// expect checks the tool's answer ("ok" or an error code) and returns the envelope.
func (h *consentHost) expect(label string, r consentReply, want string) map[string]any {
	h.t.Helper()
	env := r.envelope()
	if env == nil {
		h.t.Fatalf("%s: %s: no envelope in %+v", h.name, label, r.Result)
	}
	got := "ok"
	if ok, _ := env["ok"].(bool); !ok {
		got = e2etest.Code(env)
	}
	if got != want {
		h.t.Errorf("%s: %s: got %s, want %s: %v", h.name, label, got, want, env)
	}
	if (got == "ok") == r.Result.IsError {
		h.t.Errorf("%s: %s: answer %s with isError=%v", h.name, label, got, r.Result.IsError)
	}
	return env
}

func accept(units any) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{"quantity_units": units}}
}

// consentWorld is a mock StoreLink and a host-consent server environment.
func consentWorld(t *testing.T) (*e2etest.World, []string) {
	t.Helper()
	w := e2etest.NewWorld(t)
	keyFile := filepath.Join(w.Dir, "consent.key")
	if err := os.WriteFile(keyFile, []byte(consentKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return w, w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=host", "HOST_CONSENT_KEY_FILE="+keyFile)
}

// orderList is the mock's orders beyond its fixtures, as "store sku units".
func orderList(w *e2etest.World) []string {
	var out []string
	for _, o := range placed(w) {
		out = append(out, fmt.Sprintf("%s %s %d", o.StoreID, o.SKU, o.QuantityUnits))
	}
	slices.Sort(out)
	return out
}

// sentNothing fails if StoreLink got a new order request since creates were counted.
func sentNothing(t *testing.T, w *e2etest.World, label string, creates int) {
	t.Helper()
	if n := w.Requests(isCreate); n != creates {
		t.Errorf("%s: StoreLink got %d order request(s), want %d: nothing may be sent", label, n, creates)
	}
}

// consentAuditRows is the outcome, code and summary of the write tool's audit rows, in order.
func consentAuditRows(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT outcome, error_code, summary FROM audit WHERE tool = 'korral_raise_replenishment_order' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o, c, s string
		if err := rows.Scan(&o, &c, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, o+" "+c+" "+s)
	}
	return out
}

// onlyOrder fails unless StoreLink holds exactly one new order: units of butter at store 47.
func onlyOrder(t *testing.T, w *e2etest.World, units int) {
	t.Helper()
	if got, want := orderList(w), []string{fmt.Sprintf("47 %s %d", mockstorelink.SKUButter, units)}; !slices.Equal(got, want) {
		t.Errorf("StoreLink's orders %v, want exactly %v", got, want)
	}
}

// consentRefusal is an answer a person gives that must send nothing.
type consentRefusal struct {
	label  string
	answer map[string]any
	want   string
}

var (
	declined = consentRefusal{"decline", map[string]any{"action": "decline"}, "HOST_CONSENT_DECLINED"}
	mistyped = consentRefusal{"wrong quantity", accept(240), "HOST_CONSENT_QUANTITY_MISMATCH"}
)

// refuseEach confirms an order of 24 per refusal, with its own key: each
// answer is the refusal's code, and StoreLink and the ledger got nothing.
func refuseEach(t *testing.T, h *consentHost, w *e2etest.World, keyPrefix string, creates int, refusals ...consentRefusal) {
	t.Helper()
	for i, c := range refusals {
		key := fmt.Sprintf("%s-refused-%d", keyPrefix, i)
		r := h.do(c.label, map[string]any{"arguments": e2etest.Order(24, "confirm", true, "idempotency_key", key), "answer": c.answer})
		ans := h.expect(c.label, r, c.want)
		sentNothing(t, w, c.label, creates)
		if len(r.Asked) != 1 {
			t.Fatalf("%s: the user was asked %d time(s), want once", c.label, len(r.Asked))
		}
		if msg := errMessage(ans); !strings.Contains(msg, "nothing was sent") {
			t.Errorf("%s: the answer does not say nothing was sent: %s", c.label, msg)
		}
		if _, found := ledgerEntries(t, w.StatePath)[key]; found {
			t.Errorf("%s: the ledger recorded the refused order", c.label)
		}
	}
}

// acceptOrder confirms 24 units under key with the right quantity typed; exactly that order lands.
func acceptOrder(t *testing.T, h *consentHost, w *e2etest.World, key string, creates int) consentReply {
	t.Helper()
	r := h.do("accept", map[string]any{"arguments": e2etest.Order(24, "confirm", true, "idempotency_key", key), "answer": accept(24)})
	ans := h.expect("accept", r, "ok")
	if d, _ := ans["data"].(map[string]any); d["mode"] != "raised" || d["order_id"] == "" {
		t.Errorf("accept: %v", ans)
	}
	onlyOrder(t, w, 24)
	sentNothing(t, w, "after the accept", creates+1)
	return r
}

// TestHostConsentWithBothClientGenerations walks every answer a person can
// give, on a 2025-11-25 session and on a 2026-07-28 one.
func TestHostConsentWithBothClientGenerations(t *testing.T) {
	inst := findTSClient(t)
	requireClient2(t, inst)
	for _, gen := range []string{"1", "2"} {
		t.Run("generation "+gen, func(t *testing.T) {
			w, env := consentWorld(t)
			h := startConsentHost(t, inst, "host gen "+gen, gen, true, env)
			creates := w.Requests(isCreate)

			// A preview asks nobody and sends nothing.
			r := h.do("preview", map[string]any{"arguments": e2etest.Order(24), "answer": accept(24)})
			h.expect("preview", r, "ok")
			if len(r.Asked) != 0 {
				t.Errorf("a preview asked the user: %v", r.Asked)
			}
			refuseEach(t, h, w, "consent-"+gen, creates, declined,
				consentRefusal{"cancel", map[string]any{"action": "cancel"}, "HOST_CONSENT_CANCELLED"},
				mistyped, consentRefusal{"quantity off by one", accept(23), "HOST_CONSENT_QUANTITY_MISMATCH"})
			checkConsentQuestion(t, h, "consent-"+gen+"-shown")
			acceptOrder(t, h, w, "consent-"+gen+"-accepted", creates)
			// Its replay asks nobody and sends nothing.
			r = h.do("replay of the accepted order", map[string]any{"arguments": e2etest.Order(24, "confirm", true, "idempotency_key", "consent-"+gen+"-accepted"), "answer": accept(24)})
			h.expect("replay of the accepted order", r, "ok")
			if len(r.Asked) != 0 {
				t.Errorf("the replay asked the user")
			}
			sentNothing(t, w, "after the replay", creates+1)
			h.stop()
			// 2025-11-25 is asked inside the call; 2026-07-28 gets input_required and retries.
			if mrtr := strings.Contains(h.stderr.String(), `"msg":"tool.input_required"`); mrtr != (gen == "2") {
				t.Errorf("generation %s: input_required answers %v", gen, mrtr)
			}

			// A host without elicitation: refused, with the way to approval mode.
			bare := startConsentHost(t, inst, "no elicitation gen "+gen, gen, false, env)
			r = bare.do("no elicitation", map[string]any{"arguments": e2etest.Order(36, "confirm", true, "idempotency_key", "consent-"+gen+"-bare"), "answer": accept(36)})
			ans := bare.expect("no elicitation", r, "HOST_CONSENT_UNAVAILABLE")
			if !strings.Contains(errMessage(ans), "WRITE_APPROVAL=required") || len(r.Asked) != 0 {
				t.Errorf("no elicitation: %s (asked %d)", errMessage(ans), len(r.Asked))
			}
			sentNothing(t, w, "no elicitation", creates+1)
			bare.stop()
			checkConsentAudit(t, w)
			judge(t, w)
		})
	}
}

// checkConsentQuestion declines an order of 24 and checks the question showed
// the order and asked for the quantity, with nothing filled in.
func checkConsentQuestion(t *testing.T, h *consentHost, key string) {
	t.Helper()
	r := h.do("question", map[string]any{"arguments": e2etest.Order(24, "confirm", true, "idempotency_key", key), "answer": map[string]any{"action": "decline"}})
	q := r.Asked
	if len(q) != 1 {
		return
	}
	for _, want := range []string{"Store: 47", "Madeta butter 250g (SKU " + mockstorelink.SKUButter + ")", "Quantity: 24 units (", "case(s) of",
		"Days of cover after delivery: ", "Reason: Projected to sell out before close", "type the quantity in units (24)"} {
		if !strings.Contains(q[0].Message, want) {
			t.Errorf("the question lacks %q:\n%s", want, q[0].Message)
		}
	}
	field, _ := q[0].RequestedSchema["properties"].(map[string]any)["quantity_units"].(map[string]any)
	if field["type"] != "integer" || field["default"] != nil {
		t.Errorf("the form's quantity field: %v", field)
	}
}

// checkConsentAudit: the audit trail says what happened, refusals included.
func checkConsentAudit(t *testing.T, w *e2etest.World) {
	t.Helper()
	rows := strings.Join(consentAuditRows(t, w.StatePath), "\n")
	for _, want := range []string{"HOST_CONSENT_DECLINED", "HOST_CONSENT_CANCELLED", "HOST_CONSENT_QUANTITY_MISMATCH", "HOST_CONSENT_UNAVAILABLE",
		"The person at the host confirmed it by typing the quantity."} {
		if !strings.Contains(rows, want) {
			t.Errorf("the audit trail lacks %q:\n%s", want, rows)
		}
	}
}

// TestHostConsentOverHTTP is host consent over `serve --http` with a bearer
// token, for both client generations: the right quantity lands exactly that
// order, and a decline or a wrong quantity sends nothing.
func TestHostConsentOverHTTP(t *testing.T) {
	inst := findTSClient(t)
	requireClient2(t, inst)
	for _, gen := range []string{"1", "2"} {
		t.Run("generation "+gen, func(t *testing.T) {
			w, env := consentWorld(t)
			tokens := filepath.Join(w.Dir, "tokens")
			e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
			p := e2etest.StartHTTP(t, append(env, "MCP_AUTH_TOKENS_FILE="+tokens))
			h := launchConsentHost(t, inst, "http host gen "+gen, map[string]any{"url": p.Base + "/mcp", "token": e2etest.TokenDairy, "generation": gen, "elicitation": true})
			wantProtocol := map[string]string{"1": "2025-11-25", "2": "2026-07-28"}[gen]
			if h.protocol != wantProtocol {
				t.Errorf("the client connected with %q, want %q", h.protocol, wantProtocol)
			}
			creates := w.Requests(isCreate)
			refuseEach(t, h, w, "http-consent-"+gen, creates, declined, mistyped)
			if got := orderList(w); len(got) != 0 {
				t.Errorf("StoreLink's orders after the refusals: %v, want none", got)
			}
			if r := acceptOrder(t, h, w, "http-consent-"+gen+"-accepted", creates); len(r.Asked) != 1 {
				t.Errorf("accept: the user was asked %d time(s), want once", len(r.Asked))
			}
			h.stop()
			p.Stop()
			checkAskedOverHTTP(t, p, gen)
			judge(t, w)
		})
	}
}

// checkAskedOverHTTP checks each generation was asked its own way over HTTP.
func checkAskedOverHTTP(t *testing.T, p *e2etest.HTTPProc, gen string) {
	t.Helper()
	var mrtr int
	sessions := map[string]int{}
	for _, l := range p.LogLines() {
		if l["msg"] == "tool.input_required" {
			mrtr++
		}
		switch l["msg"] {
		case "tool.ok", "tool.err", "tool.input_required":
			if l["tool"] == "korral_raise_replenishment_order" {
				sessions[fmt.Sprint(l["session"])]++
			}
		}
	}
	if gen == "1" {
		// One session held every call, and nothing was answered input_required.
		if _, stateless := sessions[""]; mrtr != 0 || len(sessions) != 1 || stateless {
			t.Errorf("generation 1: %d input_required answers, audited sessions %v; want none and one session\n%s", mrtr, sessions, tail(p.Stderr.String(), 4000))
		}
	} else if mrtr != 3 || len(sessions) != 1 || sessions[""] == 0 {
		// Every call met input_required first, outside any session.
		t.Errorf("generation 2: %d input_required answers, audited sessions %v; want 3 and no session\n%s", mrtr, sessions, tail(p.Stderr.String(), 4000))
	}
}

// TestHostConsentNeedsItsKey: in host mode the server refuses to start
// without a sealing key, and says how to make one.
func TestHostConsentNeedsItsKey(t *testing.T) {
	w := e2etest.NewWorld(t)
	_, stderr, exit := e2etest.RunCLIStdin(t, w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=host"), "")
	if exit != 2 || !strings.Contains(stderr, "WRITE_APPROVAL=host needs HOST_CONSENT_KEY_FILE: write a key with `openssl rand -hex 32 > FILE`") {
		t.Fatalf("exit %d, stderr:\n%s", exit, stderr)
	}
	if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
		t.Errorf("the refusal is %d lines, want one:\n%s", n+1, stderr)
	}
	if _, err := os.Stat(w.StatePath); err == nil {
		t.Error("the refused server created its state database")
	}
}
