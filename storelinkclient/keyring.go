package storelinkclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxReportedStoreIDBytes bounds the store id a MissingKeyError repeats: the
// contract's ids have at most 6 digits, and anything much longer is not an id
// worth echoing into a log.
const maxReportedStoreIDBytes = 32

// MissingKeyError reports a request that a client built with [WithStoreKeys]
// or [WithKeyring] refused to send because it had no key for it: a store the
// keyring holds no key for, or a chain-wide read without [WithChainKey].
// Nothing reached the network. Retrieve it with errors.As.
//
// It never holds a key, so it can be logged and shown as it is.
type MissingKeyError struct {
	// StoreID is the store the request was for, as it appeared in the request
	// path; empty for a chain-wide read, and for a store id too long or too
	// odd to repeat (then Malformed is set).
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

// WithStoreKeys authenticates every request of the client with the key of
// the store the request is for. The store comes from the request path
// (/v1/stores/{store_id}/...), and lookup returns its key, or ok false when
// the caller holds none. A client can then serve every store its caller holds
// a key for, without a [WithStoreKey] on each call, and a call for one store
// can never carry another store's key.
//
// A store lookup knows no key for fails the call with a *[MissingKeyError]
// before anything is sent; so does a key that is empty or holds a control
// character (with an error that does not repeat it).
//
// Chain-wide reads (listStores, getSKU, getSupplier) name no store. Any store
// key opens them, but which one to send is the caller's choice, made once
// with [WithChainKey]; without it they fail with a *MissingKeyError whose
// ChainWide is set, and nothing is sent. The keyring never picks a store's
// key for them on its own, so that the key that travels is always the one
// the caller named.
//
// lookup is called once per request, from the goroutine making the call; it
// must be safe for concurrent use if the client is. A [WithStoreKey] given to
// one call runs after the keyring and replaces the key it chose; it cannot
// stand in for a key the keyring lacks, since the keyring refuses first.
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

// WithChainKey authenticates the client's chain-wide reads (listStores,
// getSKU, getSupplier), which name no store, with key: any store key opens
// them, and this option says which one travels. Requests for a store are left
// to [WithStoreKeys], [WithKeyring] or a per-call [WithStoreKey].
//
// An empty key, or one with a control character, fails NewClient with an
// error that does not repeat it. The option may come before or after
// WithStoreKeys.
func WithChainKey(key string) ClientOption {
	return func(c *Client) error {
		if key == "" || strings.ContainsFunc(key, isControl) {
			return errBadStoreKey
		}
		set := WithStoreKey(key)
		// First in line, so that a keyring's editor, whichever option came
		// first, finds the chain key already set and does not refuse.
		c.RequestEditors = slices.Insert(c.RequestEditors, 0, func(ctx context.Context, req *http.Request) error {
			_, scoped, err := requestStore(c.Server, req.URL)
			if err != nil || scoped {
				// A store's request is not ours to key; a path we cannot read
				// is refused by the keyring, if there is one.
				return nil
			}
			return set(ctx, req)
		})
		return nil
	}
}

// requestStore reads the store a request is for from its path, relative to
// the client's server (which may carry a path prefix of its own). scoped is
// false for a chain-wide path. A path outside server, or an empty or odd
// store id, is an error: with no store to go by, no key is chosen.
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
		// /v1/stores itself, /v1/skus/..., /v1/suppliers/...: every path of
		// the contract outside one store is a chain-wide read.
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
// in an error. An id that is not is also not one StoreLink knows, so nothing
// is lost by refusing it.
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
