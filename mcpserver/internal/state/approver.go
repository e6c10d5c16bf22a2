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

// Approver is a person who may decide staged orders, as the state database
// records them. The database holds only a slow, salted verifier of the
// approver's secret (package approver makes and checks it), never the
// secret, so that every replica sharing the database agrees on who may
// approve without any of them holding a credential.
type Approver struct {
	// ID is the record's number in this database. A name revoked and added
	// again is a new record with a new ID, so a login bound to the old one
	// can tell that it no longer holds.
	ID int64
	// Name is how the approver logs in and how decisions name them: NFC,
	// as NormalizeApproverName gives it.
	Name string
	// Stores limits the approver to these store ids, in ascending numeric
	// order. Empty means every store of the deployment's keyring.
	Stores []string
	// Verifier is the encoded verifier of the approver's secret, a PHC
	// string such as "$argon2id$v=19$m=65536,t=1,p=2$salt$hash".
	Verifier  string
	CreatedAt time.Time
	// RevokedAt is when the approver was revoked; zero while active.
	RevokedAt time.Time
}

// Revoked reports whether the approver has been revoked.
func (a Approver) Revoked() bool { return !a.RevokedAt.IsZero() }

// Covers reports whether the approver may decide orders of store storeID:
// always for an approver without a store list, else only for a listed
// store. An empty storeID is covered by no list.
func (a Approver) Covers(storeID string) bool {
	if len(a.Stores) == 0 {
		return true
	}
	return storeID != "" && slices.Contains(a.Stores, storeID)
}

// Approvers is the register of named approvers. Names are unique among
// active approvers, compared case-insensitively (ApproverNameKey); a revoked
// record stays for the record, and its name may be given to a new one
// (rotation is revoke, then add). Every method is atomic, also between
// processes sharing the store.
type Approvers interface {
	// AddApprover records a as a new, active approver and returns it with
	// its ID and CreatedAt set (a zero CreatedAt becomes the current time;
	// ID and RevokedAt are ignored). It refuses with ErrApproverInvalid an
	// invalid name, store list or verifier, and with ErrApproverExists a
	// name an active approver holds, even when two processes race to add
	// it. A refusal changes nothing.
	AddApprover(ctx context.Context, a Approver) (Approver, error)
	// GetApprover returns the active approver named name (compared
	// case-insensitively), else the most recently revoked one of that name,
	// and false when there has never been one.
	GetApprover(ctx context.Context, name string) (Approver, bool, error)
	// ListApprovers returns every record, active and revoked, by name and
	// then oldest first.
	ListApprovers(ctx context.Context) ([]Approver, error)
	// RevokeApprover sets RevokedAt of the active approver named name to now
	// and returns the record. ErrApproverNotFound when no active approver
	// has that name.
	RevokeApprover(ctx context.Context, name string, now time.Time) (Approver, error)
}

// ErrApproverInvalid reports an approver record the register must not hold.
var ErrApproverInvalid = errors.New("state: invalid approver")

// ErrApproverExists reports that an active approver already has the name.
var ErrApproverExists = errors.New("state: an active approver has that name")

// ErrApproverNotFound reports that no active approver has the name.
var ErrApproverNotFound = errors.New("state: no active approver has that name")

// The bounds of an approver record. A name is typed at a login prompt and
// written into every decision of the audit trail, so it is short; a store
// list is bounded by the largest keyring a deployment holds, with room.
const (
	MaxApproverNameLen = 64
	MaxApproverStores  = 1000
	maxVerifierLen     = 512
)

// NormalizeApproverName returns name in Unicode NFC, or an error wrapping
// ErrApproverInvalid that says what is wrong. A name is 1 to
// MaxApproverNameLen characters: letters and digits of any script (with
// their combining marks), single spaces between words, and . - _ ' @; it
// starts with a letter or digit. Nothing invisible, no control characters,
// no other punctuation, so that two names that look the same are the same
// name and a name printed in a table or log line cannot forge another.
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

// ApproverNameKey is the form in which two approver names are compared: the
// normalised name in lower case. Two names with one key are one name; so
// are an approver's name and a requester's that share it.
func ApproverNameKey(name string) string {
	return strings.ToLower(norm.NFC.String(name))
}

// NormalizeStoreScope checks a store list and returns it deduplicated in
// ascending numeric order. Each id has StoreLink's form (1 to 6 digits);
// nil or empty means every store. Whether the deployment's keyring holds
// the stores is the caller's check: the register cannot know the keyring.
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

// CheckNewApprover validates a for AddApprover and returns it normalised
// (name in NFC, store list sorted), so both backends store alike. The
// verifier must be a PHC string ("$" followed by printable ASCII), which a
// secret pasted by mistake in its place is not: the secrets package
// approver makes never hold a "$".
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
