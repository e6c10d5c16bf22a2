// Package bearer holds the bearer tokens that admit HTTP clients: it parses
// the token file, checks a token against it in constant time, and re-reads
// the file when it changes. The file has one "label token" per line; the
// label is the caller in the audit trail. Blank lines and '#' lines are
// ignored. It imports neither net/http nor the MCP SDK.
package bearer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
)

// MinTokenLen is the shortest token accepted: 32 base64 characters carry
// 192 bits.
const MinTokenLen = 32

// MaxLabelLen bounds a label, which ends up in every audit line.
const MaxLabelLen = 64

// Set is a parsed token file. The zero Set admits nobody.
type Set struct {
	entries []entry
}

type entry struct {
	label string
	// sum is the token's SHA-256; comparing digests keeps the comparison's
	// length fixed.
	sum [sha256.Size]byte
}

// Parse reads a token file. Errors name the line and never quote a token.
// A file with no tokens parses to an empty Set.
func Parse(data []byte) (*Set, error) {
	s := &Set{}
	labels := map[string]int{}
	sums := map[[sha256.Size]byte]int{}
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			errs = append(errs, fmt.Errorf("line %d: want \"label token\" (two fields separated by spaces), got %d field(s)", n, len(fields)))
			continue
		}
		label, token := fields[0], fields[1]
		if err := checkLabel(label); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
			continue
		}
		if err := checkToken(token); err != nil {
			errs = append(errs, fmt.Errorf("line %d (label %s): %w", n, label, err))
			continue
		}
		if first, dup := labels[label]; dup {
			errs = append(errs, fmt.Errorf("line %d: label %s is already used on line %d; each holder needs its own label", n, label, first))
			continue
		}
		sum := sha256.Sum256([]byte(token))
		if first, dup := sums[sum]; dup {
			errs = append(errs, fmt.Errorf("line %d (label %s): the same token is already on line %d; give every holder its own token", n, label, first))
			continue
		}
		labels[label], sums[sum] = n, n
		s.entries = append(s.entries, entry{label: label, sum: sum})
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("line %d: %w", n+1, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func checkLabel(l string) error {
	if len(l) > MaxLabelLen {
		return fmt.Errorf("label is longer than %d characters", MaxLabelLen)
	}
	for _, r := range l {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '@':
		default:
			return fmt.Errorf("label %q: use only letters, digits and - _ . @", l)
		}
	}
	return nil
}

func checkToken(t string) error {
	if len(t) < MinTokenLen {
		return fmt.Errorf("token is shorter than %d characters; generate one with: openssl rand -base64 32", MinTokenLen)
	}
	for i := 0; i < len(t); i++ {
		if t[i] < 0x21 || t[i] > 0x7e {
			return errors.New("token must be printable ASCII without spaces")
		}
	}
	return nil
}

// Len returns how many tokens the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.entries)
}

// Labels returns the labels in file order, for start-up and reload logs.
func (s *Set) Labels() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.label
	}
	return out
}

// Lookup returns the label of token. Every entry is compared, so the time
// taken does not depend on which token matched.
func (s *Set) Lookup(token string) (label string, ok bool) {
	if s == nil {
		return "", false
	}
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range s.entries {
		eq := subtle.ConstantTimeCompare(sum[:], s.entries[i].sum[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return "", false
	}
	return s.entries[found].label, true
}
