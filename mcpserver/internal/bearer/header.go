package bearer

import (
	"errors"
	"strings"
)

// Reading the Authorization header. Every reader of bearer tokens (and the
// console, which refuses them) goes through this file, so they agree. Per
// RFC 9110 §11.4 and RFC 6750 §2.1: more than one Authorization value means
// no token; the scheme is the first word, case-insensitive; the token is the
// rest, trimmed, and must be one word.

// Errors of Token. Each means the request carries no usable token.
var (
	// ErrNoBearer: no Authorization value, or one of another scheme.
	ErrNoBearer = errors.New("no bearer token")
	// ErrSeveral: more than one Authorization value.
	ErrSeveral = errors.New("more than one Authorization header")
	// ErrMalformed: the Bearer scheme without a token, or with more than
	// one word after it.
	ErrMalformed = errors.New("malformed bearer credentials")
)

// isSpace is whitespace after an auth-scheme. A tab is accepted too, as
// the MCP SDK accepts it.
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// scheme splits a credential into its scheme and the rest.
func scheme(v string) (name, rest string) {
	v = strings.TrimLeftFunc(v, isSpace)
	if i := strings.IndexFunc(v, isSpace); i >= 0 {
		return v[:i], strings.TrimFunc(v[i:], isSpace)
	}
	return v, ""
}

// Token returns the bearer token of a request whose Authorization header
// has values (http.Header.Values("Authorization")): exactly one value, of
// the Bearer scheme in any case, with one word after it.
func Token(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", ErrNoBearer
	case 1:
	default:
		return "", ErrSeveral
	}
	name, rest := scheme(values[0])
	if !strings.EqualFold(name, "Bearer") {
		return "", ErrNoBearer
	}
	if rest == "" || strings.IndexFunc(rest, isSpace) >= 0 {
		return "", ErrMalformed
	}
	return rest, nil
}

// Presented reports whether any Authorization value offers a bearer
// credential, including an element of a folded value ("Basic x, Bearer y").
// It errs towards yes, for callers that must refuse bearer tokens.
func Presented(values []string) bool {
	for _, v := range values {
		for _, el := range strings.Split(v, ",") {
			if name, _ := scheme(el); strings.EqualFold(name, "Bearer") {
				return true
			}
		}
	}
	return false
}
