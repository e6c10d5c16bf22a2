// Package consent seals the state of a host consent question
// (WRITE_APPROVAL=host) that the client echoes on its retry. AES-256-GCM
// under a server key keeps it unreadable and unalterable; it binds one order
// (Fingerprint), lapses after StateTTL, and carries a single-use nonce the
// state database records.
package consent

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StateTTL is how long a sealed question may be answered.
const StateTTL = 5 * time.Minute

// KeyBytes is the length of the sealing key: AES-256.
const KeyBytes = 32

// version prefixes every sealed state to identify its format.
const version = "v1."

// aad binds the ciphertext to its purpose.
var aad = []byte("korral-storelink host-consent state v1")

// The reasons Open refuses a state.
var (
	// ErrInvalid: not a state this key sealed.
	ErrInvalid = errors.New("consent: the state was not sealed by this server or was altered")
	// ErrExpired: the state is past its expiry.
	ErrExpired = errors.New("consent: the state has expired")
	// ErrMismatch: the state was sealed for another order.
	ErrMismatch = errors.New("consent: the state was sealed for another order")
)

// Fingerprint names one exact order request.
type Fingerprint [sha256.Size]byte

// Order is what a fingerprint binds.
type Order struct {
	StoreID       string
	SKU           string
	QuantityUnits int64
	// RequestHash is state.RequestHash of the order.
	RequestHash    string
	IdempotencyKey string
	// RequestedBy is the caller's identity.
	RequestedBy string
}

// FingerprintOf is the fingerprint of o; fields are length-prefixed.
func FingerprintOf(o Order) Fingerprint {
	h := sha256.New()
	for _, f := range []string{"v1", o.StoreID, o.SKU, strconv.FormatInt(o.QuantityUnits, 10), o.RequestHash, o.IdempotencyKey, o.RequestedBy} {
		fmt.Fprintf(h, "%d:%s;", len(f), f)
	}
	var fp Fingerprint
	copy(fp[:], h.Sum(nil))
	return fp
}

// State is what a sealed state says once opened.
type State struct {
	Fingerprint Fingerprint
	// Nonce is single use: the state database records it on first use.
	Nonce     string
	ExpiresAt time.Time
}

type plaintext struct {
	Fingerprint string `json:"fp"`
	ExpiresAt   int64  `json:"exp"` // Unix nanoseconds
	Nonce       string `json:"nonce"`
}

// Sealer seals and opens states with one key. It is safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
	now  func() time.Time
	ttl  time.Duration
}

// NewSealer returns a Sealer with key (KeyBytes long) and clock now (nil:
// time.Now).
func NewSealer(key []byte, now func() time.Time) (*Sealer, error) {
	if len(key) != KeyBytes {
		return nil, fmt.Errorf("consent: the key must be %d bytes, not %d", KeyBytes, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Sealer{aead: aead, now: now, ttl: StateTTL}, nil
}

// ParseKey reads a key file: 64 hex digits, optionally with a newline.
func ParseKey(content []byte) ([]byte, error) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(content), "\n"), "\r")
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != KeyBytes {
		return nil, fmt.Errorf("must hold %d hexadecimal digits (%d random bytes); generate it with `openssl rand -hex %d`", 2*KeyBytes, KeyBytes, KeyBytes)
	}
	return key, nil
}

// Seal returns a sealed state for fp, expiring StateTTL from now, and its
// State.
func (s *Sealer) Seal(fp Fingerprint) (string, State, error) {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", State{}, err
	}
	st := State{Fingerprint: fp, Nonce: hex.EncodeToString(n[:]), ExpiresAt: s.now().Add(s.ttl)}
	pt, err := json.Marshal(plaintext{Fingerprint: hex.EncodeToString(fp[:]), ExpiresAt: st.ExpiresAt.UnixNano(), Nonce: st.Nonce})
	if err != nil {
		return "", State{}, err
	}
	iv := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(pt)+s.aead.Overhead())
	if _, err := rand.Read(iv); err != nil {
		return "", State{}, err
	}
	sealed := s.aead.Seal(iv, iv, pt, aad)
	return version + base64.RawURLEncoding.EncodeToString(sealed), st, nil
}

// Open checks a sealed state: sealed by this key (else ErrInvalid), not
// expired (ErrExpired), and for fp (ErrMismatch). The caller records the
// nonce.
func (s *Sealer) Open(token string, fp Fingerprint) (State, error) {
	body, ok := strings.CutPrefix(token, version)
	if !ok {
		return State{}, ErrInvalid
	}
	// Strict: only the exact string Seal wrote is accepted.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return State{}, ErrInvalid
	}
	ns := s.aead.NonceSize()
	pt, err := s.aead.Open(nil, raw[:ns], raw[ns:], aad)
	if err != nil {
		return State{}, ErrInvalid
	}
	var p plaintext
	if err := json.Unmarshal(pt, &p); err != nil {
		return State{}, ErrInvalid
	}
	got, err := hex.DecodeString(p.Fingerprint)
	if err != nil || len(got) != len(fp) || p.Nonce == "" || p.ExpiresAt == 0 {
		return State{}, ErrInvalid
	}
	st := State{Nonce: p.Nonce, ExpiresAt: time.Unix(0, p.ExpiresAt).UTC()}
	copy(st.Fingerprint[:], got)
	// The expiry is an instant: at it, the state has lapsed.
	if !s.now().Before(st.ExpiresAt) {
		return State{}, ErrExpired
	}
	if subtle.ConstantTimeCompare(st.Fingerprint[:], fp[:]) != 1 {
		return State{}, ErrMismatch
	}
	return st, nil
}
