package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Text that people typed into StoreLink (product, store and supplier names,
// categories) reaches the model inside markers, so the model can tell data
// from instructions. The marker's tag is derived from the text itself: the
// answer stays byte-for-byte reproducible, and a text cannot contain its own
// closing marker, since the tag depends on the whole text including any
// marker it tries to embed. Marker lookalikes inside the text are defused
// besides.
const (
	untrustedOpen  = "⟦untrusted:"
	untrustedClose = "⟦/untrusted:"
)

var markerLookalike = regexp.MustCompile(`(?i)⟦\s*/?\s*untrusted`)

// untrusted wraps upstream human text in data markers.
func untrusted(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	tag := hex.EncodeToString(sum[:4])
	clean := markerLookalike.ReplaceAllStringFunc(s, func(m string) string {
		return strings.ReplaceAll(m, "⟦", "[")
	})
	return untrustedOpen + tag + "⟧" + clean + untrustedClose + tag + "⟧"
}

// UntrustedText returns the text inside a marker made by untrusted, and
// whether s was such a marker. Clients and tests use it to show plain text.
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
	closing := untrustedClose + tag + "⟧"
	if !strings.HasSuffix(body, closing) {
		return s, false
	}
	return strings.TrimSuffix(body, closing), true
}

// plain is the text of a marked value, for logs and the audit trail, which
// people read and the model never sees.
func plain(s string) string {
	t, _ := UntrustedText(s)
	return t
}
