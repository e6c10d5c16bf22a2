package approver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

// cheap keeps the suite fast; DefaultParams is exercised once, in
// TestDefaultParamsVerifier.
var cheap = Params{Memory: 64, Time: 1, Threads: 1}

var now = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// register opens a real SQLite state store.
func register(t *testing.T) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, path
}

// counted wraps v's key derivation to record each call's parameters.
type counted struct {
	mu    sync.Mutex
	calls []call
}

type call struct {
	params  Params
	saltLen int
	keyLen  uint32
}

func (c *counted) wrap(v *Verifier) {
	inner := v.derive
	v.derive = func(secret, salt []byte, p Params, keyLen uint32) []byte {
		c.mu.Lock()
		c.calls = append(c.calls, call{p, len(salt), keyLen})
		c.mu.Unlock()
		return inner(secret, salt, p, keyLen)
	}
}

func (c *counted) take() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

func TestVerifyRightSecret(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db, WithParams(cheap))
	secret := NewSecret()
	added, err := v.Add(ctx, "Jana Nováková", []string{"47"}, secret, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, typed := range []string{"Jana Nováková", "jana novákOVÁ"} {
		got, err := v.Verify(ctx, typed, secret, "47")
		if err != nil {
			t.Fatalf("Verify(%q): %v", typed, err)
		}
		if got.ID != added.ID || got.Name != "Jana Nováková" {
			t.Errorf("Verify(%q) = %+v; want the registered record and spelling", typed, got)
		}
	}
	if _, err := v.Verify(ctx, "Jana Nováková", secret, ""); err == nil || errors.Is(err, ErrDenied) {
		t.Errorf("Verify without a store: err = %v; want a caller's error", err)
	}
}

// TestWrongSecretAndUnknownNameAlike: the caller cannot tell them apart by
// the error, nor by the work done (one derivation at the same cost).
func TestWrongSecretAndUnknownNameAlike(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db, WithParams(cheap))
	var c counted
	c.wrap(v)
	secret := NewSecret()
	if _, err := v.Add(ctx, "Jana", nil, secret, now); err != nil {
		t.Fatal(err)
	}
	// A record whose verifier cannot be read (a tampered register) is
	// treated as an unknown name, too.
	if _, err := db.AddApprover(ctx, state.Approver{Name: "Broken", Verifier: "$argon2id$v=19$m=1,t=1,p=1$x$y", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	c.take()
	cases := []struct{ what, name, secret string }{
		{"wrong secret", "Jana", NewSecret()},
		{"secret with one character changed", "Jana", secret[:len(secret)-1] + string(secret[len(secret)-1]^1)},
		{"empty secret", "Jana", ""},
		{"unknown name", "Petr", secret},
		{"invalid name", "Ja\nna", secret},
		{"over-long name", strings.Repeat("x", 10000), secret},
		{"unreadable verifier", "Broken", secret},
	}
	var first string
	for i, tc := range cases {
		_, err := v.Verify(ctx, tc.name, tc.secret, "47")
		if !errors.Is(err, ErrDenied) {
			t.Errorf("%s: err = %v, want ErrDenied", tc.what, err)
			continue
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Errorf("%s: error %q differs from a wrong secret's %q", tc.what, err, first)
		}
		calls := c.take()
		// The first call also made the dummy verifier, before the lookup,
		// whatever the name.
		if i == 0 && len(calls) == 2 {
			calls = calls[1:]
		}
		want := call{cheap, saltLen, keyLen}
		if len(calls) != 1 || calls[0] != want {
			t.Errorf("%s: derivations %+v; want exactly one at the stored cost %+v", tc.what, calls, want)
		}
	}
	if strings.Contains(first, "Jana") || strings.Contains(first, "Petr") {
		t.Errorf("the denial %q names the approver", first)
	}
}

func TestRevokedOnlyToTheSecretsHolder(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db, WithParams(cheap))
	secret := NewSecret()
	if _, err := v.Add(ctx, "Jana", nil, secret, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevokeApprover(ctx, "Jana", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, err := v.Verify(ctx, "Jana", secret, "47")
	if !errors.Is(err, ErrRevoked) || !strings.Contains(err.Error(), "2026-11-27T10:00:00Z") {
		t.Errorf("right secret of a revoked approver: err = %v, want ErrRevoked with the time", err)
	}
	if _, err := v.Verify(ctx, "Jana", NewSecret(), "47"); !errors.Is(err, ErrDenied) {
		t.Errorf("wrong secret of a revoked approver: err = %v, want ErrDenied (revocation is not told)", err)
	}
	// Rotation: the old secret stays refused, the new one works.
	fresh := NewSecret()
	if _, err := v.Add(ctx, "Jana", nil, fresh, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, "Jana", secret, "47"); !errors.Is(err, ErrDenied) {
		t.Errorf("the old secret after rotation: err = %v, want ErrDenied", err)
	}
	if _, err := v.Verify(ctx, "Jana", fresh, "47"); err != nil {
		t.Errorf("the new secret after rotation: %v", err)
	}
}

func TestStoreScope(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db, WithParams(cheap))
	scoped, all := NewSecret(), NewSecret()
	if _, err := v.Add(ctx, "Jana", []string{"47", "9"}, scoped, now); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Add(ctx, "Eva", nil, all, now); err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"47", "9"} {
		if _, err := v.Verify(ctx, "Jana", scoped, store); err != nil {
			t.Errorf("Jana for store %s: %v", store, err)
		}
	}
	_, err := v.Verify(ctx, "Jana", scoped, "102")
	if !errors.Is(err, ErrOutOfScope) || !strings.Contains(err.Error(), "store(s) 9, 47 only, not of store 102") {
		t.Errorf("Jana for store 102: err = %v, want ErrOutOfScope naming her stores", err)
	}
	if _, err := v.Verify(ctx, "Jana", all, "102"); !errors.Is(err, ErrDenied) {
		t.Errorf("wrong secret for a store out of scope: err = %v, want ErrDenied", err)
	}
	if _, err := v.Verify(ctx, "Eva", all, "102"); err != nil {
		t.Errorf("Eva (every store) for store 102: %v", err)
	}
}

// TestAuthorizeFollowsTheRegister is the console's path: a login, then each
// decision re-read against the register.
func TestAuthorizeFollowsTheRegister(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db, WithParams(cheap))
	secret := NewSecret()
	if _, err := v.Add(ctx, "Jana", []string{"47"}, secret, now); err != nil {
		t.Fatal(err)
	}
	login, err := v.Authenticate(ctx, "jana", secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Authorize(ctx, login, "47"); err != nil {
		t.Errorf("Authorize for store 47: %v", err)
	}
	if _, err := v.Authorize(ctx, login, "102"); !errors.Is(err, ErrOutOfScope) {
		t.Errorf("Authorize for store 102: err = %v, want ErrOutOfScope", err)
	}
	if _, err := db.RevokeApprover(ctx, "Jana", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Authorize(ctx, login, "47"); !errors.Is(err, ErrRevoked) {
		t.Errorf("Authorize after revocation: err = %v, want ErrRevoked", err)
	}
	// Added again under the same name: the old login is not the new record.
	if _, err := v.Add(ctx, "Jana", []string{"47"}, NewSecret(), now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Authorize(ctx, login, "47"); !errors.Is(err, ErrRevoked) {
		t.Errorf("Authorize with a login of the replaced record: err = %v, want ErrRevoked", err)
	}
}

// TestOnlyTheVerifierIsStored reads the database file's bytes: the secret
// is not in them, the verifier is.
func TestOnlyTheVerifierIsStored(t *testing.T) {
	ctx := ctxOf(t)
	db, path := register(t)
	v := New(db, WithParams(cheap))
	secret := NewSecret()
	a, err := v.Add(ctx, "Jana", nil, secret, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		raw = append(raw, b...)
	}
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatal("the secret is in the database file")
	}
	if !bytes.Contains(raw, []byte(a.Verifier)) || !strings.HasPrefix(a.Verifier, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("verifier %q not found in the file as written", a.Verifier)
	}
}

// TestDefaultParamsVerifier checks the production encoding against argon2
// itself: the parameters written are the ones used.
func TestDefaultParamsVerifier(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db)
	secret := NewSecret()
	a, err := v.Add(ctx, "Jana", nil, secret, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Verifier, "$argon2id$v=19$m=65536,t=1,p=2$") {
		t.Fatalf("verifier %q does not carry DefaultParams", a.Verifier)
	}
	parts := strings.Split(a.Verifier, "$")
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	hash, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) != 16 || len(hash) != 32 {
		t.Fatalf("salt %d bytes (%v), hash %d bytes (%v)", len(salt), err1, len(hash), err2)
	}
	if want := argon2.IDKey([]byte(secret), salt, 1, 64*1024, 2, 32); !bytes.Equal(want, hash) {
		t.Error("the stored hash is not argon2id of the secret under the stored parameters")
	}
	if _, err := v.Verify(ctx, "Jana", secret, "47"); err != nil {
		t.Errorf("Verify: %v", err)
	}
	// Two approvers with one secret get different salts, so different
	// verifiers.
	b, err := v.Add(ctx, "Eva", nil, secret, now)
	if err != nil || b.Verifier == a.Verifier || strings.Split(b.Verifier, "$")[4] == parts[4] {
		t.Errorf("two verifiers of one secret share a salt: %q, %q (%v)", a.Verifier, b.Verifier, err)
	}
}

func TestParseVerifierRefuses(t *testing.T) {
	good := newVerifier(cheap, randomSalt(), idKey, "secret").String()
	if _, err := parseVerifier(good); err != nil {
		t.Fatalf("parseVerifier(%q): %v", good, err)
	}
	salt, hash := strings.Split(good, "$")[4], strings.Split(good, "$")[5]
	for _, s := range []string{
		"",
		"$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + hash,
		"$argon2id$v=16$m=64,t=1,p=1$" + salt + "$" + hash,
		"$argon2id$v=19$t=1,m=64,p=1$" + salt + "$" + hash,
		"$argon2id$v=19$m=64,t=1$" + salt + "$" + hash,
		"$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + hash,
		"$argon2id$v=19$m=4,t=1,p=1$" + salt + "$" + hash,
		"$argon2id$v=19$m=4194304,t=1,p=1$" + salt + "$" + hash,
		"$argon2id$v=19$m=64,t=1000,p=1$" + salt + "$" + hash,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "=$" + hash,
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdA$" + hash,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$aGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + hash + "$",
	} {
		if _, err := parseVerifier(s); err == nil {
			t.Errorf("parseVerifier accepted %q", s)
		}
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	raw, err := base64.RawURLEncoding.DecodeString(a)
	if err != nil || len(raw) != 32 || len(a) != 43 || a == b || strings.Contains(a, "$") {
		t.Errorf("NewSecret = %q (%d bytes, %v), then %q", a, len(raw), err, b)
	}
	if err := CheckSecret(a); err != nil {
		t.Errorf("a generated secret fails CheckSecret: %v", err)
	}
}

func TestCheckSecret(t *testing.T) {
	for _, tc := range []struct{ secret, why string }{
		{"short-secret-15", "15 characters, at least 16"},
		{"sixteen chars\tok", "control character"},
		{"a-line-break-inside\nx", "control character"},
		{strings.Repeat("x", MaxSecretLen+1), "longer than 1024"},
		{"invalid-utf8-\xff-secret", "UTF-8"},
	} {
		if err := CheckSecret(tc.secret); !errors.Is(err, ErrSecretInvalid) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("CheckSecret(%.20q) = %v, want ErrSecretInvalid saying %q", tc.secret, err, tc.why)
		}
	}
	if err := CheckSecret("correct horse battery"); err != nil {
		t.Errorf("a 21-character passphrase: %v", err)
	}
	ctx := ctxOf(t)
	db, _ := register(t)
	if _, err := New(db, WithParams(cheap)).Add(ctx, "Jana", nil, "letmein", now); !errors.Is(err, ErrSecretInvalid) {
		t.Errorf("Add with a short secret: err = %v", err)
	}
	if list, _ := db.ListApprovers(ctx); len(list) != 0 {
		t.Errorf("a refused Add stored %+v", list)
	}
}

// TestAddRefusesBeforeHashing: a bad name or store list costs no hash.
func TestAddRefusesBeforeHashing(t *testing.T) {
	ctx := ctxOf(t)
	db, _ := register(t)
	v := New(db, WithParams(cheap))
	var c counted
	c.wrap(v)
	if _, err := v.Add(ctx, "Ja\x1bna", nil, NewSecret(), now); !errors.Is(err, state.ErrApproverInvalid) {
		t.Errorf("bad name: err = %v", err)
	}
	if _, err := v.Add(ctx, "Jana", []string{"abc"}, NewSecret(), now); !errors.Is(err, state.ErrApproverInvalid) {
		t.Errorf("bad store: err = %v", err)
	}
	if calls := c.take(); len(calls) != 0 {
		t.Errorf("refused adds hashed %d times", len(calls))
	}
	if _, err := v.Add(ctx, "Jana", nil, NewSecret(), now); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Add(ctx, "JANA", nil, NewSecret(), now); !errors.Is(err, state.ErrApproverExists) {
		t.Errorf("a second Jana: err = %v, want ErrApproverExists", err)
	}
}

// TestHashingIsBounded: with every slot taken, a verification waits, and
// gives up with its context rather than hashing beside the others.
func TestHashingIsBounded(t *testing.T) {
	db, _ := register(t)
	v := New(db, WithParams(cheap), WithConcurrency(1))
	v.sem <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Authenticate(ctx, "Jana", NewSecret()); !errors.Is(err, context.Canceled) || errors.Is(err, ErrDenied) {
		t.Errorf("Authenticate with no free slot: err = %v, want the context's error", err)
	}
	<-v.sem
	if _, err := v.Authenticate(context.Background(), "Jana", NewSecret()); !errors.Is(err, ErrDenied) {
		t.Errorf("Authenticate with a free slot: err = %v, want ErrDenied", err)
	}
}

func TestSameName(t *testing.T) {
	if !SameName("Jana Nováková", "JANA NOVA\u0301KOVA\u0301") || SameName("Jana", "Jan") {
		t.Error("SameName does not compare as the register does")
	}
}
