package storelinkclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// StoreKeyHeader is the request header that carries a store key.
const StoreKeyHeader = "X-Korral-Store-Key"

// errBadStoreKey is deliberately silent about the key itself, so that it can
// be logged or shown to a user without leaking a secret.
var errBadStoreKey = errors.New("storelink: store key is empty or holds a control character")

// WithStoreKey returns a request editor that authenticates one request with
// key. An empty key, or one with a control character, fails the request
// before it is sent.
func WithStoreKey(key string) RequestEditorFn {
	bad := key == "" || strings.ContainsFunc(key, isControl)
	// One value slice for every request the editor authenticates, so a
	// request allocates none. Its capacity is its length: an Add on a
	// request appends to a copy, never to the shared array.
	values := []string{key}
	return func(_ context.Context, req *http.Request) error {
		if bad {
			return errBadStoreKey
		}
		setShared(req.Header, StoreKeyHeader, values)
		return nil
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// setShared is h.Set(key, values[0]) for a canonical key, with values
// shared rather than copied: values must hold one item, with a capacity of
// one, and never be written to.
func setShared(h http.Header, key string, values []string) {
	h[key] = values[:1:1]
}
