package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Text that people typed into StoreLink (product, store and supplier names,
// categories) reaches the model inside markers, so the model can tell data
// from instructions: ⟦untrusted:TAG⟧text⟦/TAG⟧. One answer uses one tag for
// all its texts, derived from all of them: the answer stays byte-for-byte
// reproducible, and no text can carry the closing marker, since the tag
// depends on every text including any marker it tries to embed. Besides,
// every marker bracket inside a text is defused, so a text cannot hold a
// marker of any tag at all.
const untrustedOpen = "⟦untrusted:"

// defuseBrackets turns marker brackets, and the lookalikes a model would read
// as them, into plain square brackets.
var defuseBrackets = strings.NewReplacer("⟦", "[", "⟧", "]", "〚", "[", "〛", "]")

// markUntrusted wraps each non-empty text of one answer in data markers, in
// place, all with the same tag.
func markUntrusted(texts ...*string) {
	h := sha256.New()
	for _, p := range texts {
		*p = defuseBrackets.Replace(*p)
		h.Write([]byte(*p))
		h.Write([]byte{0})
	}
	tag := hex.EncodeToString(h.Sum(nil)[:3])
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

// UntrustedText returns the text inside a marker made by the server, and
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
	closing := "⟦/" + tag + "⟧"
	if tag == "" || !strings.HasSuffix(body, closing) {
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
