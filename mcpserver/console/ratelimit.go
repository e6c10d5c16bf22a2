package console

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// LoginLimiter is the login rate limit. Admitting an attempt reserves a
// slot under its name and address keys; the attempt ends by recording a
// failure or releasing the slot. A key is refused while failures plus
// attempts in flight reach the limit. state.LoginAttempts is shared by
// replicas; MemoryLogins serves one process.
type LoginLimiter = state.LoginAttempts

// The values a LoginLimiter uses, named so code outside the module can
// implement one.
type (
	// LoginRequest is one attempt to admit: name, address, time and limit.
	LoginRequest = state.LoginRequest
	// LoginAdmission says whether an attempt was admitted, else when to
	// retry.
	LoginAdmission = state.LoginAdmission
	// LoginSlot is the reservation an admitted attempt holds.
	LoginSlot = state.LoginSlot
	// LoginOutcome is how an admitted attempt ended.
	LoginOutcome = state.LoginOutcome
)

// loginHold is how long an unsettled attempt holds its slot; it outlasts
// any request.
const loginHold = 2 * time.Minute

// maxChecksPerAddress is how many secret checks one address may have
// running or queued here; more get 429, so one address cannot fill the
// verifier's queue.
const maxChecksPerAddress = 3

// maxMemoryAttempts bounds MemoryLogins; past it attempts are refused
// rather than failures forgotten.
const maxMemoryAttempts = 100000

// MemoryLogins is a LoginLimiter in process memory, keyed like the state
// database (state.LoginNameKey, state.LoginAddrKey).
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

// checkGate bounds the secret checks per address in this process.
type checkGate struct {
	mu   sync.Mutex
	busy map[string]int
}

func newCheckGate() *checkGate { return &checkGate{busy: make(map[string]int)} }

// enter takes a place for addr, or false at maxChecksPerAddress.
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
