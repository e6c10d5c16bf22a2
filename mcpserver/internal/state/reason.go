package state

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The one normalisation of an order's reason. NormalizeReason validates and
// gives the text that is stored and sent; FoldReason gives the form that the
// request fingerprint (RequestHash) and the derived idempotency key compare.
// Both go through the same steps, so what validation accepts, the key and the
// fingerprint see alike.

// ErrReasonInvalid reports a reason that cannot be an order's justification.
var ErrReasonInvalid = errors.New("invalid reason")

// NormalizeReason returns reason in Unicode NFC with every run of Unicode
// white space (including no-break and ideographic spaces, tabs and line
// breaks) turned into one ASCII space and the ends trimmed. It refuses a
// reason holding any other control or format character (zero-width spaces
// and joiners, bidirectional controls, soft hyphens among them), because
// such characters make two reasons that look the same compare different,
// and a reason with no letter or digit, because it justifies nothing.
func NormalizeReason(reason string) (string, error) {
	s := spaced(reason)
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			return "", fmt.Errorf("%w: it contains the invisible or control character %U; write it as plain text", ErrReasonInvalid, r)
		}
	}
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return "", fmt.Errorf("%w: it must contain at least one letter or digit", ErrReasonInvalid)
	}
	return s, nil
}

// FoldReason is the form two reasons are compared in: NFC, white space
// collapsed as in NormalizeReason, and lower case.
func FoldReason(reason string) string {
	return strings.ToLower(spaced(reason))
}

func spaced(s string) string {
	return strings.Join(strings.Fields(norm.NFC.String(s)), " ")
}
