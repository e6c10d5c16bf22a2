package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Approver is a person who may decide staged orders. The database holds
// only a slow salted verifier of the secret (package approver), never the
// secret.
type Approver struct {
	// ID is the record's number; a name re-added gets a new ID.
	ID int64
	// Name is the login name, in NFC (NormalizeApproverName).
	Name string
	// Stores limits the approver to these store ids, ascending; empty
	// means every store.
	Stores []string
	// Verifier is the secret's PHC string, e.g. "$argon2id$v=19$...".
	Verifier  string
	CreatedAt time.Time
	// RevokedAt is when the approver was revoked; zero while active.
	RevokedAt time.Time
}

// Revoked reports whether the approver has been revoked.
func (a Approver) Revoked() bool { return !a.RevokedAt.IsZero() }

// Covers reports whether the approver may decide orders of storeID. An
// empty storeID is covered by no list.
func (a Approver) Covers(storeID string) bool {
	if len(a.Stores) == 0 {
		return true
	}
	return storeID != "" && slices.Contains(a.Stores, storeID)
}

// Approvers is the register of named approvers. Active names are unique
// (ApproverNameKey); revoked records stay, and their names may be reused.
// Every method is atomic across processes.
type Approvers interface {
	// AddApprover records a new active approver and returns it with ID
	// and CreatedAt set (zero CreatedAt means now). It refuses with
	// ErrApproverInvalid or ErrApproverExists and then changes nothing.
	AddApprover(ctx context.Context, a Approver) (Approver, error)
	// GetApprover returns the active approver named name, else the latest
	// revoked one, and false if there was never one.
	GetApprover(ctx context.Context, name string) (Approver, bool, error)
	// ListApprovers returns every record by name, then oldest first.
	ListApprovers(ctx context.Context) ([]Approver, error)
	// RevokeApprover revokes the active approver named name at now;
	// ErrApproverNotFound if there is none.
	RevokeApprover(ctx context.Context, name string, now time.Time) (Approver, error)
}

// ErrApproverInvalid reports an approver record the register must not hold.
var ErrApproverInvalid = errors.New("state: invalid approver")

// ErrApproverExists reports that an active approver already has the name.
var ErrApproverExists = errors.New("state: an active approver has that name")

// ErrApproverNotFound reports that no active approver has the name.
var ErrApproverNotFound = errors.New("state: no active approver has that name")

// The bounds of an approver record.
const (
	MaxApproverNameLen = 64
	MaxApproverStores  = 1000
	maxVerifierLen     = 512
)

// NormalizeApproverName returns name in NFC, or an error wrapping
// ErrApproverInvalid. A name is 1 to MaxApproverNameLen letters and digits
// of any script, single spaces, and . - _ ' @, starting with a letter or
// digit, so look-alike names are the same name and none can forge another.
func NormalizeApproverName(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("%w: the name is not valid UTF-8", ErrApproverInvalid)
	}
	s := norm.NFC.String(name)
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return "", fmt.Errorf("%w: the name is empty", ErrApproverInvalid)
	}
	if n > MaxApproverNameLen {
		return "", fmt.Errorf("%w: the name has %d characters, at most %d are allowed", ErrApproverInvalid, n, MaxApproverNameLen)
	}
	first, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsLetter(first) && !unicode.IsDigit(first) {
		return "", fmt.Errorf("%w: the name must start with a letter or digit", ErrApproverInvalid)
	}
	if strings.HasSuffix(s, " ") || strings.Contains(s, "  ") {
		return "", fmt.Errorf("%w: the name may hold single spaces between words only", ErrApproverInvalid)
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Mc, r):
		case strings.ContainsRune(" .-_'@", r):
		default:
			return "", fmt.Errorf("%w: the name may hold letters, digits, spaces and . - _ ' @ only, not %q", ErrApproverInvalid, r)
		}
	}
	return s, nil
}

// ApproverNameKey is the form in which approver and requester names are
// compared: normalised and lower case.
func ApproverNameKey(name string) string {
	return strings.ToLower(norm.NFC.String(name))
}

// NormalizeStoreScope returns a store list deduplicated and ascending. Ids
// are 1 to 6 digits; empty means every store. The keyring is not checked.
func NormalizeStoreScope(stores []string) ([]string, error) {
	if len(stores) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(stores))
	for _, id := range stores {
		if !validStoreID(id) {
			return nil, fmt.Errorf("%w: store id %q is not 1 to 6 digits", ErrApproverInvalid, id)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) > MaxApproverStores {
		return nil, fmt.Errorf("%w: %d stores, at most %d are allowed; leave the list empty for every store", ErrApproverInvalid, len(out), MaxApproverStores)
	}
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return out, nil
}

func validStoreID(id string) bool {
	if id == "" || len(id) > 6 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CheckNewApprover validates a for AddApprover and returns it normalised.
// The verifier must be a PHC string, which a pasted secret is not.
func CheckNewApprover(a Approver) (Approver, error) {
	name, err := NormalizeApproverName(a.Name)
	if err != nil {
		return Approver{}, err
	}
	stores, err := NormalizeStoreScope(a.Stores)
	if err != nil {
		return Approver{}, err
	}
	v := a.Verifier
	if !strings.HasPrefix(v, "$") || len(v) > maxVerifierLen || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return Approver{}, fmt.Errorf("%w: the verifier is not an encoded verifier ($algorithm$…)", ErrApproverInvalid)
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	return Approver{Name: name, Stores: stores, Verifier: v, CreatedAt: a.CreatedAt}, nil
}
