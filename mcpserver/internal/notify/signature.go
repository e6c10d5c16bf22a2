package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a notice's signature:
//
//	X-Korral-Signature: t=1764343800,v1=<64 hex digits>
//
// t is the Unix time of the attempt, v1 the hex HMAC-SHA256 of the decimal
// t, a full stop and the raw body. A receiver refuses a t far from its own
// clock, so a captured request cannot be replayed later.
const SignatureHeader = "X-Korral-Signature"

// DefaultTolerance is the clock difference Verify accepts when given none.
const DefaultTolerance = 5 * time.Minute

// ErrInvalidSignature is wrapped by every error Verify returns.
var ErrInvalidSignature = errors.New("invalid webhook signature")

// Sign returns the SignatureHeader value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a SignatureHeader value against the raw body: one t, a
// matching v1 (several allow secret rotation), and t within tolerance of now
// (0 means DefaultTolerance). It takes constant time; failures wrap
// ErrInvalidSignature.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%w: %q is not key=value", ErrInvalidSignature, shorten(part))
		}
		switch k {
		case "t":
			if ts != "" {
				return fmt.Errorf("%w: more than one t", ErrInvalidSignature)
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return fmt.Errorf("%w: v1 is not 64 hex digits", ErrInvalidSignature)
			}
			sigs = append(sigs, sig)
		}
		// Other keys are ignored: a later scheme (v2) may be sent beside v1.
	}
	if ts == "" {
		return fmt.Errorf("%w: no t= timestamp", ErrInvalidSignature)
	}
	if len(sigs) == 0 {
		return fmt.Errorf("%w: no v1= signature", ErrInvalidSignature)
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: t is not a Unix time", ErrInvalidSignature)
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: t is %s away from now, more than %s", ErrInvalidSignature, d.Abs().Round(time.Second), tolerance)
	}
	want := mac(secret, ts, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 matches the body and secret", ErrInvalidSignature)
}

func shorten(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
