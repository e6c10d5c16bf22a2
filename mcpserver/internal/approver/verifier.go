package approver

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are the cost of argon2id for one verifier. They are written into
// each verifier, so raising them later leaves the verifiers made before
// readable; a verifier gets the new cost when its approver is rotated.
type Params struct {
	// Memory in KiB.
	Memory uint32
	// Time is the number of passes over the memory.
	Time uint32
	// Threads is the parallelism (lanes).
	Threads uint8
}

// DefaultParams cost about 40 to 55 ms on the reference machine (2 cores,
// shared): 64 MiB, one pass, two lanes. That is above the OWASP minimum for
// argon2id (19 MiB with two passes, or 46 MiB with one) and one
// verification per decision or login is cheap for a person, while a guess
// at an offline copy of the register costs the same.
var DefaultParams = Params{Memory: 64 * 1024, Time: 1, Threads: 2}

// The shape of a verifier: a 16-byte salt, per RFC 9106, and a 32-byte hash.
const (
	saltLen = 16
	keyLen  = 32
)

// What parseVerifier accepts. The upper bounds keep a tampered register
// from making one verification allocate gigabytes or run for minutes.
const (
	maxMemory  = 1 << 20 // 1 GiB in KiB
	maxTime    = 16
	maxThreads = 16
	minSalt    = 8
	maxSalt    = 64
	minKey     = 16
	maxKey     = 64
)

// verifier is one decoded "$argon2id$v=19$m=…,t=…,p=…$salt$hash".
type verifier struct {
	params Params
	salt   []byte
	hash   []byte
}

func newVerifier(p Params, salt []byte, derive func(secret, salt []byte, p Params, keyLen uint32) []byte, secret string) verifier {
	return verifier{params: p, salt: salt, hash: derive([]byte(secret), salt, p, keyLen)}
}

// b64 is the PHC string format's base64: standard alphabet, no padding.
var b64 = base64.RawStdEncoding

// String encodes v in the PHC string format that other argon2 tools read.
func (v verifier) String() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, v.params.Memory, v.params.Time, v.params.Threads,
		b64.EncodeToString(v.salt), b64.EncodeToString(v.hash))
}

var errMalformed = errors.New("approver: malformed verifier")

// parseVerifier decodes an encoded verifier, refusing any other algorithm
// or version and parameters outside the bounds above.
func parseVerifier(s string) (verifier, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return verifier{}, errMalformed
	}
	var v verifier
	var m, t, p uint64
	for i, kv := range strings.Split(parts[3], ",") {
		k, val, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(val, 10, 32)
		if !ok || err != nil || i > 2 || k != "mtp"[i:i+1] {
			return verifier{}, errMalformed
		}
		switch k {
		case "m":
			m = n
		case "t":
			t = n
		case "p":
			p = n
		}
	}
	if t < 1 || t > maxTime || p < 1 || p > maxThreads || m < 8*p || m > maxMemory {
		return verifier{}, errMalformed
	}
	v.params = Params{Memory: uint32(m), Time: uint32(t), Threads: uint8(p)}
	var err error
	if v.salt, err = b64.DecodeString(parts[4]); err != nil || len(v.salt) < minSalt || len(v.salt) > maxSalt {
		return verifier{}, errMalformed
	}
	if v.hash, err = b64.DecodeString(parts[5]); err != nil || len(v.hash) < minKey || len(v.hash) > maxKey {
		return verifier{}, errMalformed
	}
	return v, nil
}
