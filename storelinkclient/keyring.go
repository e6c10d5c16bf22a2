package storelinkclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxReportedStoreIDBytes bounds the store id a MissingKeyError repeats
// (contract ids have at most 6 digits).
const maxReportedStoreIDBytes = 32

// MissingKeyError reports a request that a client built with [WithStoreKeys]
// or [WithKeyring] refused to send because it had no key for it: a store the
// keyring holds no key for, or a chain-wide read without [WithChainKey].
// Nothing was sent. It never holds a key.
type MissingKeyError struct {
	// StoreID is the store in the request path; empty for a chain-wide read
	// or when Malformed is set.
	StoreID string
	// ChainWide is set for a chain-wide read (GET /v1/stores, /v1/skus/{sku},
	// /v1/suppliers/{supplier_id}) when no [WithChainKey] was given.
	ChainWide bool
	// Malformed is set when the request named no usable store: an empty store
	// id, one StoreID does not repeat, or a path outside the client's server.
	Malformed bool
}

// Error returns a single line such as
// "storelink: no store key for store 55; request not sent".
func (e *MissingKeyError) Error() string {
	switch {
	case e.ChainWide:
		return "storelink: no key for a chain-wide read (give one with WithChainKey); request not sent"
	case e.Malformed:
		return "storelink: the request names no usable store, so no store key was chosen; request not sent"
	default:
		return "storelink: no store key for store " + e.StoreID + "; request not sent"
	}
}

// WithStoreKeys authenticates each request with the key of the store in its
// path (/v1/stores/{store_id}/...); lookup returns that key, or ok false. A
// missing, empty or malformed key fails the call with a *[MissingKeyError]
// before anything is sent. Chain-wide reads (listStores, getSKU,
// getSupplier) use only the key given with [WithChainKey]; without it they
// fail with ChainWide set. lookup is called once per request and must be
// safe for concurrent use if the client is. A per-call [WithStoreKey]
// replaces the key chosen here but cannot supply a missing one.
func WithStoreKeys(lookup func(storeID StoreID) (key string, ok bool)) ClientOption {
	return func(c *Client) error {
		if lookup == nil {
			return errors.New("storelink: WithStoreKeys needs a lookup function")
		}
		c.RequestEditors = append(c.RequestEditors, func(_ context.Context, req *http.Request) error {
			storeID, scoped, err := requestStore(c.Server, req.URL)
			if err != nil {
				return err
			}
			if !scoped {
				if len(req.Header.Values(StoreKeyHeader)) == 0 {
					return &MissingKeyError{ChainWide: true}
				}
				return nil // WithChainKey set it.
			}
			key, ok := lookup(storeID)
			if !ok {
				return &MissingKeyError{StoreID: storeID}
			}
			return WithStoreKey(key)(context.Background(), req)
		})
		return nil
	}
}

// WithKeyring is [WithStoreKeys] over a map from store id to key. The map is
// copied, so later changes to it do not reach the client.
func WithKeyring(keys map[StoreID]string) ClientOption {
	own := make(map[StoreID]string, len(keys))
	for id, key := range keys {
		own[id] = key
	}
	return WithStoreKeys(func(storeID StoreID) (string, bool) {
		key, ok := own[storeID]
		return key, ok
	})
}

// WithChainKey authenticates the chain-wide reads (listStores, getSKU,
// getSupplier) with key. An empty key, or one with a control character,
// fails NewClient with an error that does not repeat it.
func WithChainKey(key string) ClientOption {
	return func(c *Client) error {
		if key == "" || strings.ContainsFunc(key, isControl) {
			return errBadStoreKey
		}
		set := WithStoreKey(key)
		// First, so a keyring's editor finds the chain key already set.
		c.RequestEditors = slices.Insert(c.RequestEditors, 0, func(ctx context.Context, req *http.Request) error {
			_, scoped, err := requestStore(c.Server, req.URL)
			if err != nil || scoped {
				return nil
			}
			return set(ctx, req)
		})
		return nil
	}
}

// requestStore reads the store from a request path relative to server.
// scoped is false for a chain-wide path; a path outside server or an odd
// store id is an error.
func requestStore(server string, u *url.URL) (storeID StoreID, scoped bool, err error) {
	base, perr := url.Parse(server)
	if perr != nil || u == nil {
		return "", false, &MissingKeyError{Malformed: true}
	}
	prefix := base.EscapedPath()
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	rest, ok := strings.CutPrefix(u.EscapedPath(), prefix)
	if !ok {
		return "", false, &MissingKeyError{Malformed: true}
	}
	rest, ok = strings.CutPrefix(rest, "v1/stores/")
	if !ok {
		return "", false, nil
	}
	segment, _, _ := strings.Cut(rest, "/")
	id, uerr := url.PathUnescape(segment)
	if uerr != nil || id == "" {
		return "", true, &MissingKeyError{Malformed: true}
	}
	if !reportable(id) {
		return "", true, &MissingKeyError{Malformed: true}
	}
	return id, true, nil
}

// reportable reports whether a store id is short and plain enough to repeat
// in an error.
func reportable(id string) bool {
	if len(id) > maxReportedStoreIDBytes {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}
