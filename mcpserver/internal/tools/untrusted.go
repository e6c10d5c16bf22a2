package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// StoreLink text (product, store and supplier names, categories) reaches the
// model inside markers: ⟦untrusted:TAG⟧text⟦/TAG⟧. One answer uses one tag,
// derived from all its texts, so it is reproducible and no text can carry
// the closing marker; marker brackets inside texts are also defused.
const untrustedOpen = "⟦untrusted:"

// defuseBrackets turns marker brackets and lookalikes into plain square
// brackets.
var defuseBrackets = strings.NewReplacer("⟦", "[", "⟧", "]", "〚", "[", "〛", "]")

// markerBrackets are the brackets defuseBrackets replaces: a text with
// none of them is left as it is, without the copy the replacer makes.
const markerBrackets = "⟦⟧〚〛"

// markUntrusted wraps each non-empty text of one answer in data markers, in
// place, with one tag.
func markUntrusted(texts ...*string) {
	// The hash is over the texts, each followed by a zero byte, gathered
	// in one buffer (on the stack for the usual few short names).
	var room [256]byte
	all := room[:0]
	for _, p := range texts {
		if strings.ContainsAny(*p, markerBrackets) {
			*p = defuseBrackets.Replace(*p)
		}
		all = append(append(all, *p...), 0)
	}
	sum := sha256.Sum256(all)
	tag := hex.EncodeToString(sum[:3])
	for _, p := range texts {
		if *p != "" {
			*p = untrustedOpen + tag + "⟧" + *p + "⟦/" + tag + "⟧"
		}
	}
}

// untrusted wraps the one untrusted text of an answer in data markers.
func untrusted(s string) string {
	markUntrusted(&s)
	return s
}

// UntrustedText returns the text inside a server-made marker, and whether
// s was one.
func UntrustedText(s string) (string, bool) {
	if !strings.HasPrefix(s, untrustedOpen) {
		return s, false
	}
	rest := s[len(untrustedOpen):]
	end := strings.Index(rest, "⟧")
	if end < 0 {
		return s, false
	}
	tag := rest[:end]
	body := rest[end+len("⟧"):]
	closing := "⟦/" + tag + "⟧"
	if tag == "" || !strings.HasSuffix(body, closing) {
		return s, false
	}
	return strings.TrimSuffix(body, closing), true
}

// plain is the text of a marked value, for logs and the audit trail.
func plain(s string) string {
	t, _ := UntrustedText(s)
	return t
}
