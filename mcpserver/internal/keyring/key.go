// Package keyring holds the deployment's StoreLink keys, one per store, and
// applies the store-scoping rules: which store a call is for, and whether
// this deployment may ask StoreLink about it at all. A store without a key is
// refused here, so no request for it ever leaves the process.
//
// Keys are wrapped in Key, whose every printed, logged or marshalled form is
// a short fingerprint, so a key cannot reach a log line or a tool result by
// accident. Source keeps the keyring in force and reloads its file after
// StoreLink refuses a key.
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

// Key is one StoreLink key. The zero Key holds no secret.
//
// The secret sits behind a pointer so that even reflection-based printing of
// a struct holding a Key in an unexported field (which bypasses String and
// Format) shows an address, not the secret.
type Key struct {
	s *secret
}

// secret is the key and its SHA-256, hashed once: Equal runs on every
// reuse of cached master data (every trivial call), and hashing both keys
// there each time was a measurable share of that call (docs/benchmarks.md).
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
// the first 6 hex digits of the secret's SHA-256, or "key:none" for the zero
// Key. Six digits tell a rotated key from the old one at a glance and reveal
// nothing usable.
func (k Key) Fingerprint() string {
	if k.s == nil {
		return "key:none"
	}
	return "key:" + hex.EncodeToString(k.s.sum[:3])
}

// Equal compares two keys in constant time. Comparing the hashes keeps the
// time independent of the secrets' lengths too.
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

// Format prints the fingerprint for every verb, so %x or %s cannot dump the
// secret either.
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
