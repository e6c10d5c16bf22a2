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
// holds only the SHA-256 of the session id (Key), so its rows cannot be
// presented as cookies.
type Session struct {
	// Key is the hex SHA-256 of the session id.
	Key string
	// Approver is the approver's name; scope and revocation are read from
	// the backend on every request.
	Approver string
	// Ref is passed to Active (Approver.Ref); empty means Approver.
	Ref string
	// CSRF is the session's form token, derived from the session id
	// (csrfFor); Get may return it empty.
	CSRF     string
	Created  time.Time
	LastSeen time.Time
	// IdleUntil ends the session unless it is used before then.
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
// process; a shared store lets replicas accept each other's sessions. The
// console checks expiry itself; a store may drop expired sessions.
type SessionStore interface {
	// Create stores s under s.Key.
	Create(ctx context.Context, s Session) error
	// Get returns the session under key, ErrNoSession, or ErrRevoked when
	// the approver's record was revoked or replaced.
	Get(ctx context.Context, key string) (Session, error)
	// Touch records activity at at and extends the idle expiry to idleUntil.
	Touch(ctx context.Context, key string, at, idleUntil time.Time) error
	// Delete removes the session under key; a missing one is not an error.
	Delete(ctx context.Context, key string) error
}

// sessionIDBytes is the entropy of a session id and CSRF token: 256 bits.
const sessionIDBytes = 32

// newToken returns sessionIDBytes random bytes from crypto/rand, base64url.
func newToken() (string, error) {
	b := make([]byte, sessionIDBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// csrfFor derives the session's CSRF token from its id, which only the
// browser holds, so a store's reader cannot make it.
func csrfFor(id string) string {
	sum := sha256.Sum256([]byte("korral console csrf\x00" + id))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// sessionKey is the store's key for a session id.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// maxMemorySessions bounds the memory store; past it the oldest session is
// dropped.
const maxMemorySessions = 10000

// Memory is a SessionStore in process memory; sessions die with it.
type Memory struct {
	mu       sync.Mutex
	sessions map[string]Session
}

// NewMemory returns an empty in-memory SessionStore.
func NewMemory() *Memory {
	return &Memory{sessions: make(map[string]Session)}
}

// Create stores s, first dropping sessions expired at s.Created.
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
