package consent

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeyBytes) }

func sealer(t *testing.T, k []byte, now *time.Time) *Sealer {
	t.Helper()
	s, err := NewSealer(k, func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var order = Order{StoreID: "47", SKU: "4006381333931", QuantityUnits: 24, RequestHash: "abc", IdempotencyKey: "butter-0001", RequestedBy: "host/stdio"}

func TestSealOpenRoundTrip(t *testing.T) {
	now := t0
	s := sealer(t, key(1), &now)
	fp := FingerprintOf(order)
	tok, st, err := s.Seal(fp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "v1.") || strings.Contains(tok, order.IdempotencyKey) || strings.Contains(tok, "47") && strings.Contains(tok, order.SKU) {
		t.Errorf("token %q is not opaque", tok)
	}
	got, err := s.Open(tok, fp)
	if err != nil || got.Fingerprint != st.Fingerprint || got.Nonce != st.Nonce || !got.ExpiresAt.Equal(t0.Add(StateTTL)) || len(got.Nonce) != 32 {
		t.Fatalf("Open = %+v, %v; sealed %+v", got, err, st)
	}
	// Every seal has its own nonce and its own ciphertext.
	tok2, st2, _ := s.Seal(fp)
	if tok2 == tok || st2.Nonce == st.Nonce {
		t.Error("two seals share a nonce or a ciphertext")
	}
}

// TestTamperedStateIsInvalid flips every bit position class of every byte
// of the sealed body: the GCM nonce, the ciphertext and the tag. Each
// alteration, a truncation, an extension, another prefix and another key
// is ErrInvalid.
func TestTamperedStateIsInvalid(t *testing.T) {
	now := t0
	s := sealer(t, key(1), &now)
	fp := FingerprintOf(order)
	tok, _, err := s.Seal(fp)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, "v1."))
	if err != nil {
		t.Fatal(err)
	}
	ns, tag := 12, 16
	if len(raw) <= ns+tag {
		t.Fatalf("sealed body of %d bytes", len(raw))
	}
	for i := range raw {
		for _, bit := range []byte{0x01, 0x80} {
			b := bytes.Clone(raw)
			b[i] ^= bit
			region := "ciphertext"
			switch {
			case i < ns:
				region = "nonce"
			case i >= len(raw)-tag:
				region = "tag"
			}
			if _, err := s.Open("v1."+base64.RawURLEncoding.EncodeToString(b), fp); !errors.Is(err, ErrInvalid) {
				t.Errorf("byte %d (%s) ^%#x: err=%v, want ErrInvalid", i, region, bit, err)
			}
		}
	}
	for name, bad := range map[string]string{
		"truncated":       tok[:len(tok)-1],
		"short":           "v1." + base64.RawURLEncoding.EncodeToString(raw[:ns+tag-1]),
		"extended":        tok + "AA",
		"other prefix":    "v2." + strings.TrimPrefix(tok, "v1."),
		"no prefix":       strings.TrimPrefix(tok, "v1."),
		"not base64":      "v1.%%%%",
		"empty":           "",
		"another's key":   mustSeal(t, sealer(t, key(2), &now), fp),
		"one byte of key": mustSeal(t, sealer(t, append(key(1)[:KeyBytes-1], 0), &now), fp),
	} {
		if _, err := s.Open(bad, fp); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err=%v, want ErrInvalid", name, err)
		}
	}
}

// A state is the one string Seal wrote: its last character changed only
// in the bits base64 leaves unused decodes to the same bytes under a
// lenient decoder, and is refused all the same.
func TestStateWithOtherUnusedBitsIsInvalid(t *testing.T) {
	now := t0
	s := sealer(t, key(1), &now)
	fp := FingerprintOf(order)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for range 20 {
		tok := mustSeal(t, s, fp)
		body := strings.TrimPrefix(tok, "v1.")
		if len(body)%4 == 0 {
			t.Fatalf("a state of %d characters has no unused bits: this test needs another length", len(body))
		}
		last := strings.IndexByte(alphabet, body[len(body)-1])
		alt := tok[:len(tok)-1] + string(alphabet[last^1])
		if _, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(alt, "v1.")); err != nil {
			t.Fatalf("the lenient decoder refuses %q: %v", alt, err)
		}
		if _, err := s.Open(alt, fp); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Open(state with other unused bits) = %v, want ErrInvalid", err)
		}
	}
}

func mustSeal(t *testing.T, s *Sealer, fp Fingerprint) string {
	t.Helper()
	tok, _, err := s.Seal(fp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestExpiryBoundary: a state opens until the instant before its expiry
// and is expired at it and after.
func TestExpiryBoundary(t *testing.T) {
	now := t0
	s := sealer(t, key(1), &now)
	fp := FingerprintOf(order)
	tok := mustSeal(t, s, fp)
	for _, c := range []struct {
		at   time.Time
		want error
	}{
		{t0, nil},
		{t0.Add(StateTTL - time.Nanosecond), nil},
		{t0.Add(StateTTL), ErrExpired},
		{t0.Add(StateTTL + time.Nanosecond), ErrExpired},
		{t0.Add(24 * time.Hour), ErrExpired},
	} {
		now = c.at
		if _, err := s.Open(tok, fp); !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("at expiry%+v: err=%v, want %v", c.at.Sub(t0.Add(StateTTL)), err, c.want)
		}
	}
}

// TestFingerprintMismatch: a state sealed for one order opens for no order
// that differs in any bound field.
func TestFingerprintMismatch(t *testing.T) {
	now := t0
	s := sealer(t, key(1), &now)
	tok := mustSeal(t, s, FingerprintOf(order))
	others := map[string]func(o *Order){
		"store":           func(o *Order) { o.StoreID = "102" },
		"sku":             func(o *Order) { o.SKU = "4006381333932" },
		"quantity":        func(o *Order) { o.QuantityUnits = 240 },
		"request hash":    func(o *Order) { o.RequestHash = "abd" },
		"idempotency key": func(o *Order) { o.IdempotencyKey = "butter-0002" },
		"requester":       func(o *Order) { o.RequestedBy = "other/stdio" },
		// Length prefixes keep a shifted boundary from colliding.
		"shifted fields": func(o *Order) { o.StoreID, o.SKU = "474006381333931", "" },
	}
	for name, change := range others {
		o := order
		change(&o)
		if FingerprintOf(o) == FingerprintOf(order) {
			t.Errorf("%s: same fingerprint", name)
		}
		if _, err := s.Open(tok, FingerprintOf(o)); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: err=%v, want ErrMismatch", name, err)
		}
	}
}

func TestKeys(t *testing.T) {
	if _, err := NewSealer(key(1)[:16], nil); err == nil {
		t.Error("a 16-byte key was accepted: AES-256 needs 32")
	}
	good := strings.Repeat("ab", KeyBytes)
	for content, ok := range map[string]bool{
		good: true, good + "\n": true, good + "\r\n": true,
		good[:62]: false, good + "ab": false, strings.Repeat("zz", KeyBytes): false, "": false, good + "\n\n": false,
	} {
		k, err := ParseKey([]byte(content))
		if (err == nil) != ok || ok && len(k) != KeyBytes {
			t.Errorf("ParseKey(%q) = %d bytes, %v; want ok=%v", content, len(k), err, ok)
		}
		if err != nil && strings.Contains(err.Error(), content) && content != "" {
			t.Errorf("ParseKey's error quotes the key: %v", err)
		}
	}
}
