package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// Session is one approver's login as a SessionStore keeps it. The store
// never sees the session id the browser holds, only its SHA-256 (Key), so
// whoever can read the store (a database backup, say) cannot present a
// stored row as a cookie.
type Session struct {
	// Key is the hex SHA-256 of the session id.
	Key string
	// Approver is the approver's name; scope and revocation are read from
	// the backend on every request, never from the session.
	Approver string
	// Ref is the backend's handle of the login (Approver.Ref), which Active
	// is given; empty means Approver.
	Ref string
	// CSRF is the session's synchronizer token, which every POST form
	// carries back. The console derives it from the session id (csrfFor),
	// so a store need not keep it; Get may return it empty.
	CSRF     string
	Created  time.Time
	LastSeen time.Time
	// IdleUntil ends the session if it is not used before then; a store
	// may sweep a session past it.
	IdleUntil time.Time
	// ExpiresAt is the absolute end of the session, however active it is.
	ExpiresAt time.Time
}

// ref is what Active is given for the session.
func (s Session) ref() string {
	if s.Ref != "" {
		return s.Ref
	}
	return s.Approver
}

// ErrNoSession reports that a SessionStore holds no session under a key.
var ErrNoSession = errors.New("console: no such session")

// SessionStore keeps console sessions on the server side. Memory serves one
// process; a store shared by every replica (the state database) lets any of
// them accept a session, also after a restart. The console judges expiry
// itself; a store may also drop sessions whose ExpiresAt or IdleUntil has
// passed.
type SessionStore interface {
	// Create stores s under s.Key.
	Create(ctx context.Context, s Session) error
	// Get returns the session stored under key, or ErrNoSession. A store
	// that sees the approver's record revoked (or replaced) returns
	// ErrRevoked, and the console ends the session.
	Get(ctx context.Context, key string) (Session, error)
	// Touch records activity at at, which pushes back the idle expiry to
	// idleUntil.
	Touch(ctx context.Context, key string, at, idleUntil time.Time) error
	// Delete removes the session under key; deleting a missing one is not
	// an error.
	Delete(ctx context.Context, key string) error
}

// sessionIDBytes is the entropy of a session id and of a CSRF token: 256
// bits, beyond any guessing.
const sessionIDBytes = 32

// newToken returns sessionIDBytes random bytes from crypto/rand, base64url.
func newToken() (string, error) {
	b := make([]byte, sessionIDBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// csrfFor is the synchronizer token of the session with id: derived from
// the id, which only the browser holds, so no store keeps it and whoever
// reads a store (which holds only sessionKey) cannot make it.
func csrfFor(id string) string {
	sum := sha256.Sum256([]byte("korral console csrf\x00" + id))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// sessionKey is the store's key for a session id.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// maxMemorySessions bounds the memory store. Sessions need a verified
// secret, so reaching it takes many real logins; past it the oldest
// session makes room.
const maxMemorySessions = 10000

// Memory is a SessionStore in the process's memory: sessions die with the
// process, and another replica does not know them.
type Memory struct {
	mu       sync.Mutex
	sessions map[string]Session
}

// NewMemory returns an empty in-memory SessionStore.
func NewMemory() *Memory {
	return &Memory{sessions: make(map[string]Session)}
}

// Create stores s, first dropping the sessions whose absolute or idle
// expiry has passed (judged by s.Created, the caller's clock).
func (m *Memory) Create(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, old := range m.sessions {
		if !s.Created.Before(old.ExpiresAt) || !old.IdleUntil.IsZero() && !s.Created.Before(old.IdleUntil) {
			delete(m.sessions, k)
		}
	}
	if len(m.sessions) >= maxMemorySessions {
		oldest := ""
		for k, old := range m.sessions {
			if oldest == "" || old.Created.Before(m.sessions[oldest].Created) {
				oldest = k
			}
		}
		delete(m.sessions, oldest)
	}
	m.sessions[s.Key] = s
	return nil
}

// Get returns the session under key, or ErrNoSession.
func (m *Memory) Get(_ context.Context, key string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok {
		return Session{}, ErrNoSession
	}
	return s, nil
}

// Touch sets the session's LastSeen and IdleUntil.
func (m *Memory) Touch(_ context.Context, key string, at, idleUntil time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok {
		return ErrNoSession
	}
	s.LastSeen, s.IdleUntil = at, idleUntil
	m.sessions[key] = s
	return nil
}

// Delete removes the session under key.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, key)
	return nil
}

// Len is the number of sessions held, for tests and metrics.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}
