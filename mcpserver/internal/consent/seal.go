// Package consent seals the state of a host consent question
// (WRITE_APPROVAL=host, MCP revision 2026-07-28): the server answers a tool
// call with input_required and an opaque requestState that the client
// echoes on its retry.
//
// The state is sealed with AES-256-GCM under a key only the servers hold, so
// a client can neither read nor change it. It binds the question to one order
// (Fingerprint), lapses after StateTTL, and carries a nonce that the state
// database records on first use, so an answer is honoured once across all
// replicas.
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

// StateTTL is how long a sealed question may be answered: long enough
// for a person to read the order and type its quantity, short enough that
// an answer left lying in a host's history is soon worthless.
const StateTTL = 5 * time.Minute

// KeyBytes is the length of the sealing key: AES-256.
const KeyBytes = 32

// version prefixes every sealed state, so that a later format can be told
// apart (and this one refused) without trying to open it.
const version = "v1."

// aad binds the ciphertext to its purpose: a key reused elsewhere by
// mistake still cannot make this package accept another thing it sealed.
var aad = []byte("korral-storelink host-consent state v1")

// The reasons Open refuses a state.
var (
	// ErrInvalid: not a state this key sealed (altered, truncated, another
	// key, another format).
	ErrInvalid = errors.New("consent: the state was not sealed by this server or was altered")
	// ErrExpired: the state is past its expiry.
	ErrExpired = errors.New("consent: the state has expired")
	// ErrMismatch: the state was sealed for another order.
	ErrMismatch = errors.New("consent: the state was sealed for another order")
)

// Fingerprint names one exact order request: a question sealed for one
// fingerprint answers for no other.
type Fingerprint [sha256.Size]byte

// Order is what a fingerprint binds.
type Order struct {
	StoreID       string
	SKU           string
	QuantityUnits int64
	// RequestHash is the ledger's fingerprint of store, SKU, quantity and
	// folded reason (state.RequestHash).
	RequestHash    string
	IdempotencyKey string
	// RequestedBy is who asked: the caller's identity (over HTTP the
	// bearer token's label).
	RequestedBy string
}

// FingerprintOf is the fingerprint of o. Fields are length-prefixed, so no
// two different orders share one.
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

// ParseKey reads a key file's content: 64 hexadecimal digits (as
// `openssl rand -hex 32` writes them), optionally followed by a newline.
func ParseKey(content []byte) ([]byte, error) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(content), "\n"), "\r")
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != KeyBytes {
		return nil, fmt.Errorf("must hold %d hexadecimal digits (%d random bytes); generate it with `openssl rand -hex %d`", 2*KeyBytes, KeyBytes, KeyBytes)
	}
	return key, nil
}

// Seal returns a sealed state for fp, expiring StateTTL from now, with a
// fresh nonce, and the State it holds.
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

// Open checks a sealed state against the order it is presented for:
// sealed by this key and unaltered (else ErrInvalid), not expired by the
// Sealer's clock (ErrExpired), and for fp (ErrMismatch). It does not
// record the nonce: the caller does, in the state database.
func (s *Sealer) Open(token string, fp Fingerprint) (State, error) {
	body, ok := strings.CutPrefix(token, version)
	if !ok {
		return State{}, ErrInvalid
	}
	// Strict: a last character whose unused bits differ is another string
	// for the same bytes; only the one Seal wrote is that state.
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
