package console

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// LoginLimiter is the login rate limit: admitting an attempt reserves a
// slot under its name key and its address key in one step, and the
// attempt ends by recording a failure or releasing the slot. A key is
// refused while its recent failures plus its attempts in flight reach the
// limit, so a burst of concurrent logins gets no more secret checks than
// the limit allows. The state database implements it for every replica
// sharing it (state.LoginAttempts); MemoryLogins serves one process.
type LoginLimiter = state.LoginAttempts

// The values a LoginLimiter takes and returns, named here so that code
// outside the module can implement one.
type (
	// LoginRequest is one attempt to admit: name, address, time and limit.
	LoginRequest = state.LoginRequest
	// LoginAdmission says whether an attempt was admitted, and if not when
	// to try again.
	LoginAdmission = state.LoginAdmission
	// LoginSlot is the reservation an admitted attempt holds.
	LoginSlot = state.LoginSlot
	// LoginOutcome is how an admitted attempt ended.
	LoginOutcome = state.LoginOutcome
)

// loginHold is how long an admitted attempt holds its slot should it never
// be settled (its process died mid-check). It outlasts any request the
// console's server lets run.
const loginHold = 2 * time.Minute

// maxChecksPerAddress is how many logins from one address this process
// checks or queues for the secret check at once; more are refused at once
// with 429, before the limiter is asked, so that one address cannot fill
// the queue of the slow verifier in front of everybody else.
const maxChecksPerAddress = 3

// maxMemoryAttempts bounds MemoryLogins. Each admitted attempt adds one
// row for at most a window; past the bound, attempts are refused until rows
// lapse, rather than forgetting failures.
const maxMemoryAttempts = 100000

// MemoryLogins is a LoginLimiter in the process's memory: the limit of one
// process, forgotten at a restart. Keys are the state database's
// (state.LoginNameKey, state.LoginAddrKey), so one name has one set of
// attempts however it is spelt.
type MemoryLogins struct {
	mu   sync.Mutex
	next int64
	rows map[int64]memAttempt
}

type memAttempt struct {
	nameKey, addrKey string
	failed           bool
	expires          time.Time
}

var _ LoginLimiter = (*MemoryLogins)(nil)

// NewMemoryLogins returns an empty in-memory limiter.
func NewMemoryLogins() *MemoryLogins { return &MemoryLogins{rows: make(map[int64]memAttempt)} }

// AdmitLogin implements LoginLimiter.
func (m *MemoryLogins) AdmitLogin(_ context.Context, r state.LoginRequest) (state.LoginAdmission, error) {
	if err := state.CheckLoginRequest(r); err != nil {
		return state.LoginAdmission{}, err
	}
	slot := state.LoginSlot{NameKey: state.LoginNameKey(r.Name), AddrKey: state.LoginAddrKey(r.Addr), Window: r.Window}
	m.mu.Lock()
	defer m.mu.Unlock()
	var name, addr []time.Time
	for id, a := range m.rows {
		if !a.expires.After(r.Now) {
			delete(m.rows, id)
			continue
		}
		if a.nameKey == slot.NameKey {
			name = append(name, a.expires)
		}
		if a.addrKey == slot.AddrKey {
			addr = append(addr, a.expires)
		}
	}
	var retry time.Time
	for _, exp := range [][]time.Time{name, addr} {
		slices.SortFunc(exp, time.Time.Compare)
		if t := state.LoginRetryAt(exp, r.Limit); t.After(retry) {
			retry = t
		}
	}
	if !retry.IsZero() {
		return state.LoginAdmission{RetryAt: retry}, nil
	}
	if len(m.rows) >= maxMemoryAttempts {
		return state.LoginAdmission{RetryAt: r.Now.Add(time.Minute)}, nil
	}
	m.next++
	slot.ID = m.next
	m.rows[slot.ID] = memAttempt{nameKey: slot.NameKey, addrKey: slot.AddrKey, expires: r.Now.Add(r.Hold)}
	return state.LoginAdmission{Admitted: true, Slot: slot}, nil
}

// SettleLogin implements LoginLimiter.
func (m *MemoryLogins) SettleLogin(_ context.Context, slot state.LoginSlot, outcome state.LoginOutcome, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch outcome {
	case state.LoginFailed:
		m.rows[slot.ID] = memAttempt{nameKey: slot.NameKey, addrKey: slot.AddrKey, failed: true, expires: now.Add(slot.Window)}
	case state.LoginSucceeded:
		delete(m.rows, slot.ID)
		for id, a := range m.rows {
			if a.failed && a.nameKey == slot.NameKey {
				delete(m.rows, id)
			}
		}
	case state.LoginAborted:
		if a, ok := m.rows[slot.ID]; ok && !a.failed {
			delete(m.rows, slot.ID)
		}
	default:
		return errors.New("console: unknown login outcome")
	}
	return nil
}

// checkGate bounds the secret checks one address has running or waiting in
// this process.
type checkGate struct {
	mu   sync.Mutex
	busy map[string]int
}

func newCheckGate() *checkGate { return &checkGate{busy: make(map[string]int)} }

// enter takes a place for addr, or reports false when it holds
// maxChecksPerAddress already.
func (g *checkGate) enter(addr string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy[addr] >= maxChecksPerAddress {
		return false
	}
	g.busy[addr]++
	return true
}

func (g *checkGate) leave(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy[addr]--; g.busy[addr] <= 0 {
		delete(g.busy, addr)
	}
}
