package contract

import (
	"regexp"
	"strings"
	"unicode"
)

// goInitialisms are the words oapi-codegen capitalises in Go field names,
// including our additional-initialisms (TestGoFieldNameMatchesGenerated).
var goInitialisms = func() map[string]string {
	m := map[string]string{}
	for _, w := range []string{"ACL", "API", "ASCII", "CPU", "CSS", "DNS", "EOF", "GUID", "HTML", "HTTP", "HTTPS",
		"ID", "IP", "JSON", "QPS", "RAM", "RPC", "SLA", "SMTP", "SQL", "SSH", "TCP", "TLS", "TTL", "UDP", "UI",
		"GID", "UID", "UUID", "URI", "URL", "UTF8", "VM", "XML", "XMPP", "XSRF", "XSS", "SIP", "RTP", "AMQP",
		"DB", "TS", "SKU", "POS"} {
		m[strings.ToLower(w)] = w
	}
	return m
}()

// goNamePart is a word of a camel-cased name, as oapi-codegen splits it.
var goNamePart = regexp.MustCompile(`[\p{Lu}\d]+([\p{Ll}\d]+|$)`)

// goFieldName is the Go field name oapi-codegen (name-normalizer
// ToCamelCaseWithInitialisms) gives a property named name: "on_hand_units"
// is OnHandUnits, "sku" is SKU, "order_id" is OrderID.
func goFieldName(name string) string {
	var b strings.Builder
	capNext := true
	for _, r := range name {
		switch {
		case unicode.IsUpper(r):
			b.WriteRune(r)
			capNext = false
		case unicode.IsDigit(r):
			b.WriteRune(r)
			capNext = true
		case unicode.IsLower(r):
			if capNext {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			capNext = false
		default:
			capNext = true
		}
	}
	parts := goNamePart.FindAllString(b.String(), -1)
	for i, p := range parts {
		if w, ok := goInitialisms[strings.ToLower(p)]; ok {
			parts[i] = w
		}
	}
	return goNamePrefix(name) + strings.Join(parts, "")
}

// goNamePrefix is the word oapi-codegen puts before a name that cannot
// start a Go name, such as "N" for a digit.
func goNamePrefix(name string) string {
	prefix := ""
	for _, r := range name {
		switch r {
		case '-':
			prefix += "Minus"
		case '.':
			prefix += "Dot"
		case '_':
			prefix += "Underscore"
		default:
			if prefix == "" && unicode.IsDigit(r) {
				return "N"
			}
			return prefix
		}
	}
	return prefix
}

// keepGoName is the x-go-name that keeps a renamed property's old Go field
// name.
func keepGoName(old string) string {
	if g := goFieldName(old); g != "" && goFieldName(g) == g {
		return g
	}
	return old
}
