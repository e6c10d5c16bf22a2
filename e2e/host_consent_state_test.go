package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// Host consent's sealed requestState, retried by the test as an attacker would.

// manualConsent lets the test hold a 2026-07-28 client's requestState and retry with it.
type manualConsent struct {
	t       *testing.T
	w       *e2etest.World
	creates int // StoreLink's order requests before the test
}

// ask confirms args and returns the question's sealed, unreadable state; nothing is sent.
func (m manualConsent) ask(h *consentHost, label string, args map[string]any) string {
	t := m.t
	t.Helper()
	r := h.do(label, map[string]any{"arguments": args, "manual": true})
	if r.Result == nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" || r.Result.InputRequests["confirm_order"] == nil {
		t.Fatalf("%s: %s: want input_required with a requestState and the question, got %+v", h.name, label, r.Result)
	}
	if strings.Contains(r.Result.RequestState, mockstorelink.SKUButter) || strings.Contains(r.Result.RequestState, "consent-") {
		t.Errorf("%s: the requestState is readable: %s", label, r.Result.RequestState)
	}
	sentNothing(t, m.w, label, m.creates)
	return r.Result.RequestState
}

// retry answers the question of state with a, and checks the tool's answer.
func (m manualConsent) retry(h *consentHost, label string, args map[string]any, state string, a map[string]any, want string) map[string]any {
	m.t.Helper()
	r := h.do(label, map[string]any{"arguments": args, "requestState": state, "inputResponses": map[string]any{"confirm_order": a}})
	return h.expect(label, r, want)
}

// TestHostConsentSealedState: forged accepts, altered states, other orders'
// states and other keys' states are refused and send nothing, here and at
// another replica; an answered state is spent.
func TestHostConsentSealedState(t *testing.T) {
	inst := findTSClient(t)
	requireClient2(t, inst)
	w, env := consentWorld(t)
	h := startConsentHost(t, inst, "manual", "2", true, env)
	m := manualConsent{t: t, w: w, creates: w.Requests(isCreate)}

	// A declined question replayed with a forged accept, here and at a second
	// server sharing the database and key.
	declined := e2etest.Order(24, "confirm", true, "idempotency_key", "sealed-declined-0001")
	st := m.ask(h, "question to decline", declined)
	m.retry(h, "decline", declined, st, map[string]any{"action": "decline"}, "HOST_CONSENT_DECLINED")
	m.retry(h, "the declined state replayed with an accept", declined, st, accept(24), "HOST_CONSENT_STATE_REPLAYED")
	replica := startConsentHost(t, inst, "replica", "2", true, env)
	m.retry(replica, "replayed at another replica", declined, st, accept(24), "HOST_CONSENT_STATE_REPLAYED")
	sentNothing(t, w, "replays", m.creates)

	tampered := e2etest.Order(30, "confirm", true, "idempotency_key", "sealed-tampered-0001")
	st = m.ask(h, "question to tamper with", tampered)
	m.refuseAltered(h, tampered, st)

	// A state sealed with another key: another deployment's, or an old key.
	otherKey := filepath.Join(w.Dir, "other.key")
	if err := os.WriteFile(otherKey, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := startConsentHost(t, inst, "other key", "2", true, append(slices.Clone(env), "HOST_CONSENT_KEY_FILE="+otherKey))
	m.retry(foreign, "state of another key", tampered, st, accept(30), "HOST_CONSENT_STATE_INVALID")
	sentNothing(t, w, "other key", m.creates)

	// The untouched state, answered right, is honoured once: the order lands.
	env2 := m.retry(h, "the untouched state, accepted", tampered, st, accept(30), "ok")
	if d, _ := env2["data"].(map[string]any); d["mode"] != "raised" {
		t.Errorf("accepted: %v", env2)
	}
	onlyOrder(t, w, 30)
	sentNothing(t, w, "after the accept", m.creates+1)
	judge(t, w)
}

// refuseAltered presents st altered, truncated, and for other orders: each is
// refused and sends nothing.
func (m manualConsent) refuseAltered(h *consentHost, args map[string]any, st string) {
	for _, i := range []int{0, 3, len(st) / 2, len(st) - 1} {
		b := []byte(st)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		m.retry(h, fmt.Sprintf("state altered at %d", i), args, string(b), accept(30), "HOST_CONSENT_STATE_INVALID")
	}
	m.retry(h, "state truncated", args, st[:len(st)-4], accept(30), "HOST_CONSENT_STATE_INVALID")
	sentNothing(m.t, m.w, "tampered", m.creates)

	anotherStore := e2etest.Order(30, "confirm", true, "idempotency_key", "sealed-tampered-0001")
	anotherStore["store_id"] = "102"
	for label, other := range map[string]map[string]any{
		"more units":    e2etest.Order(300, "confirm", true, "idempotency_key", "sealed-tampered-0001"),
		"another key":   e2etest.Order(30, "confirm", true, "idempotency_key", "sealed-tampered-0002"),
		"another store": anotherStore,
	} {
		m.retry(h, "state for "+label, other, st, accept(other["quantity_units"]), "HOST_CONSENT_STATE_MISMATCH")
	}
	sentNothing(m.t, m.w, "mismatch", m.creates)
}

// TestHostConsentAcrossPostgresReplicas: a state sealed at one replica is
// answered at the other, and one answered at one is refused at the other.
func TestHostConsentAcrossPostgresReplicas(t *testing.T) {
	inst := findTSClient(t)
	requireClient2(t, inst)
	dsn := pgDatabase(t)
	w, _ := consentWorld(t)
	keyFile := filepath.Join(w.Dir, "consent.key")
	envA, dirA := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "WRITE_APPROVAL=host", "HOST_CONSENT_KEY_FILE="+keyFile)
	envB, dirB := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "WRITE_APPROVAL=host", "HOST_CONSENT_KEY_FILE="+keyFile)
	a := startConsentHost(t, inst, "replica A", "2", true, envA)
	b := startConsentHost(t, inst, "replica B", "2", true, envB)
	m := manualConsent{t: t, w: w, creates: w.Requests(isCreate)}

	declined := e2etest.Order(24, "confirm", true, "idempotency_key", "pg-consent-declined-0001")
	st := m.ask(a, "question", declined)
	m.retry(a, "declined at A", declined, st, map[string]any{"action": "decline"}, "HOST_CONSENT_DECLINED")
	m.retry(b, "replayed at B with an accept", declined, st, accept(24), "HOST_CONSENT_STATE_REPLAYED")
	sentNothing(t, w, "replay at the other replica", m.creates)

	accepted := e2etest.Order(36, "confirm", true, "idempotency_key", "pg-consent-accepted-0001")
	st = m.ask(a, "question", accepted)
	m.retry(b, "sealed at A, accepted at B", accepted, st, accept(36), "ok")
	onlyOrder(t, w, 36)
	sentNothing(t, w, "after the accept", m.creates+1)
	a.stop()
	b.stop()
	pgJudge(t, w, dsn)
	noSQLite(t, dirA, dirB)
}
