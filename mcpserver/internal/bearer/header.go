package bearer

import (
	"errors"
	"strings"
)

// Reading the Authorization header.
//
// Every place that reads a bearer token (the MCP endpoint, /metrics) and
// the one place that must refuse one (the approvals console) reads the
// header through this file, so they cannot disagree about what a bearer
// credential is. The rules, after RFC 9110 §11.4 and RFC 6750 §2.1:
//
//   - Every value counts, not just the first: a request that carries more
//     than one Authorization value (two header lines, whatever their
//     schemes) has no token, because proxies, logs and servers may each
//     pick a different one.
//   - The scheme is the value's first word, ended by any whitespace (a
//     space or a tab), and compared without regard to case.
//   - The token is the rest of the value, without the surrounding
//     whitespace, and must be one word.

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

// isSpace is whitespace between an auth-scheme and its credentials: the
// RFC asks for spaces; a tab is taken too, since some clients send one and
// any server that splits on whitespace (as the MCP SDK does) reads it so.
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
// credential, however it is spelled: a value whose scheme is Bearer, or, in
// a value a proxy folded from several lines ("Basic x, Bearer y"), any
// comma-separated element that starts with the word Bearer. It is for the
// places that must refuse bearer tokens outright, so it errs towards yes.
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
