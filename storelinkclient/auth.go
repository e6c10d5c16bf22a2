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
	return func(_ context.Context, req *http.Request) error {
		if key == "" || strings.ContainsFunc(key, isControl) {
			return errBadStoreKey
		}
		req.Header.Set(StoreKeyHeader, key)
		return nil
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
