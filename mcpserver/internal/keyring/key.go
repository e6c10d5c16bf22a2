// Package keyring holds the deployment's StoreLink keys, one per store, and
// applies the store-scoping rules. A store without a key is refused here, so
// no request for it may leave the process. Every printed, logged or
// marshalled form of a Key is a fingerprint.
package keyring

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
)

// Key is one StoreLink key. The zero Key holds no secret. The secret sits
// behind a pointer so reflection-based printing shows an address only.
type Key struct {
	s *secret
}

// secret is the key and its SHA-256, hashed once because Equal runs on
// every cache hit (docs/benchmarks.md).
type secret struct {
	v   string
	sum [sha256.Size]byte
}

// NewKey wraps a secret.
func NewKey(v string) Key { return Key{s: &secret{v: v, sum: sha256.Sum256([]byte(v))}} }

// Reveal returns the secret, for the one place that puts it on the wire.
func (k Key) Reveal() string {
	if k.s == nil {
		return ""
	}
	return k.s.v
}

// IsZero reports whether k holds no secret.
func (k Key) IsZero() bool { return k.s == nil }

// Fingerprint identifies the key in logs without revealing it: "key:" and
// the first 6 hex digits of its SHA-256, or "key:none" for the zero Key.
func (k Key) Fingerprint() string {
	if k.s == nil {
		return "key:none"
	}
	return "key:" + hex.EncodeToString(k.s.sum[:3])
}

// Equal compares two keys in constant time, independent of their lengths.
func (k Key) Equal(o Key) bool {
	if k.s == nil || o.s == nil {
		return k.s == nil && o.s == nil
	}
	return subtle.ConstantTimeCompare(k.s.sum[:], o.s.sum[:]) == 1
}

// String returns the fingerprint.
func (k Key) String() string { return k.Fingerprint() }

// GoString returns the fingerprint in Go syntax, for %#v.
func (k Key) GoString() string { return "keyring.Key(" + strconv.Quote(k.Fingerprint()) + ")" }

// Format prints the fingerprint for every verb.
func (k Key) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = fmt.Fprint(f, k.GoString())
	case verb == 'q':
		_, _ = fmt.Fprint(f, strconv.Quote(k.Fingerprint()))
	default:
		_, _ = fmt.Fprint(f, k.Fingerprint())
	}
}

// MarshalJSON encodes the fingerprint as a JSON string.
func (k Key) MarshalJSON() ([]byte, error) { return json.Marshal(k.Fingerprint()) }

// MarshalText encodes the fingerprint, for encoders that prefer text.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.Fingerprint()), nil }

// LogValue logs the fingerprint.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.Fingerprint()) }
