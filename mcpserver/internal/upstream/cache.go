package upstream

import (
	"container/list"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/keyring"
)

// DefaultMasterDataTTL is how long master data is reused when neither the
// configuration nor StoreLink says otherwise.
const DefaultMasterDataTTL = 5 * time.Minute

// DefaultMasterDataEntries bounds the reused master data: enough for the
// chain's 180 stores and about 1,950 store-and-SKU pairs, a few MiB at most.
const DefaultMasterDataEntries = 4096

// masterItem names one piece of master data: kind, route (for errors),
// the store whose key reads it, and its id.
type masterItem struct {
	kind    string // "store", "sku" or "supplier"
	route   string
	storeID string
	id      string
}

// masterKey is an item's place in the cache: a struct, so a look-up
// builds no string. It holds the store even for chain-wide records, so an
// answer read with one store's key only serves that store (ADR 0013).
type masterKey struct {
	kind, storeID, id string
}

// cacheKey is the item's masterKey.
func (it masterItem) cacheKey() masterKey {
	return masterKey{kind: it.kind, storeID: it.storeID, id: it.id}
}

// flightKey is the item's key for sharing one request among overlapping
// misses; it is built only on a miss.
func (it masterItem) flightKey() string {
	return it.kind + "\x00" + it.storeID + "\x00" + it.id
}

// masterCache is a bounded LRU map of master data with a lifetime per
// entry. Each entry remembers the key that read it.
type masterCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	max     int
	order   *list.List // front is the most recently used *cacheEntry
	entries map[masterKey]*list.Element
}

type cacheEntry struct {
	key     masterKey
	value   any
	readBy  keyring.Key
	expires time.Time
}

func newMasterCache(max int, ttl time.Duration, now func() time.Time) *masterCache {
	return &masterCache{ttl: ttl, now: now, max: max, order: list.New(), entries: map[masterKey]*list.Element{}}
}

// get returns a live entry read with storeKey. An entry read with another
// key is not served, so after a rotation data is read again with the new key.
func (m *masterCache) get(k masterKey, storeKey keyring.Key) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.entries[k]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !m.now().Before(e.expires) || !e.readBy.Equal(storeKey) {
		m.order.Remove(el)
		delete(m.entries, k)
		return nil, false
	}
	m.order.MoveToFront(el)
	return e.value, true
}

// put keeps v for life, evicting the least recently used beyond the bound.
func (m *masterCache) put(k masterKey, v any, readBy keyring.Key, life time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &cacheEntry{key: k, value: v, readBy: readBy, expires: m.now().Add(life)}
	if el, ok := m.entries[k]; ok {
		el.Value = e
		m.order.MoveToFront(el)
		return
	}
	m.entries[k] = m.order.PushFront(e)
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.entries, last.Value.(*cacheEntry).key)
	}
}

func (m *masterCache) remove(k masterKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.entries[k]; ok {
		m.order.Remove(el)
		delete(m.entries, k)
	}
}

// reuse answers master data from the cache, or reads it. Overlapping misses
// for one item share one request. Only an answer that passed every check is
// kept, for the TTL or less if Cache-Control says so.
func reuse[T any](ctx context.Context, c *Client, it masterItem, fetch func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if c.master == nil {
		return fetch(ctx)
	}
	storeKey, ok := c.keys.Key(it.storeID)
	if !ok {
		// call refuses it before anything is sent; nothing is kept.
		return fetch(ctx)
	}
	k := it.cacheKey()
	if v, ok := cachedAs[T](ctx, c, it, k, storeKey); ok {
		return v, nil
	}
	led := false
	ch := c.flight.DoChan(it.flightKey(), func() (any, error) {
		led = true
		// A request for k may have ended since the look-up; its answer serves.
		if v, ok := c.master.get(k, storeKey); ok {
			return v, nil
		}
		return fill(ctx, c, it, k, fetch)
	})
	select {
	case r := <-ch:
		// The channel send orders led's write before this read.
		if !led {
			c.log.DebugContext(ctx, "upstream.reused", "call_id", callid.From(ctx), "kind", it.kind, "store_id", it.storeID, "id", it.id, "from", "shared_request")
		}
		if r.Err != nil {
			return zero, ownCopy(r.Err)
		}
		return r.Val.(T), nil
	case <-ctx.Done():
		// The shared request goes on for the others; this caller leaves.
		return zero, classify(http.MethodGet, it.route, ctx.Err(), c.cooldown)
	}
}

// cached answers it from the cache alone: a live entry read with the
// store's current key, or false. It never sends a request.
func cached[T any](ctx context.Context, c *Client, it masterItem) (T, bool) {
	if c.master == nil {
		var zero T
		return zero, false
	}
	storeKey, ok := c.keys.Key(it.storeID)
	if !ok {
		var zero T
		return zero, false
	}
	return cachedAs[T](ctx, c, it, it.cacheKey(), storeKey)
}

// cachedAs is cached's look-up of k, kept for storeKey.
func cachedAs[T any](ctx context.Context, c *Client, it masterItem, k masterKey, storeKey keyring.Key) (T, bool) {
	v, ok := c.master.get(k, storeKey)
	if !ok {
		var zero T
		return zero, false
	}
	// Checked first: building the line's arguments costs even when debug
	// is off.
	if c.log.Enabled(ctx, slog.LevelDebug) {
		c.log.DebugContext(ctx, "upstream.reused", "call_id", callid.From(ctx), "kind", it.kind, "store_id", it.storeID, "id", it.id, "from", "cache")
	}
	return v.(T), true
}

// fill reads one item for all its waiters and keeps the answer if allowed.
// The read ignores the first caller's cancellation; the request timeout
// still bounds it.
func fill[T any](ctx context.Context, c *Client, it masterItem, k masterKey, fetch func(ctx context.Context) (T, error)) (any, error) {
	var fresh freshnessHeaders
	fctx := context.WithValue(context.WithoutCancel(ctx), freshnessSinkKey{}, &fresh)
	v, err := fetch(fctx)
	if err != nil {
		// Gone, or now outside the contract: drop what was kept.
		if code := apperr.CodeOf(err); code == apperr.NotFound || code == apperr.UpstreamContractError {
			c.master.remove(k)
		}
		return nil, err
	}
	life, reason := lifetime(fresh, c.master.ttl)
	// After a 401 the retry used the refreshed key, now in force.
	storeKey, ok := c.keys.Key(it.storeID)
	if !ok {
		reason = "the store's key is gone"
	}
	if life <= 0 || !ok {
		c.master.remove(k)
		c.log.DebugContext(ctx, "upstream.not_cached", "call_id", callid.From(ctx), "kind", it.kind, "store_id", it.storeID, "id", it.id, "reason", reason)
		return v, nil
	}
	c.master.put(k, v, storeKey, life)
	return v, nil
}

// ownCopy gives each waiter its own copy of a shared error.
func ownCopy(err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		cp := *ae
		return &cp
	}
	return err
}

// freshnessSinkKey carries a *freshnessHeaders to the transport, which
// records what the answer says about its own reuse.
type freshnessSinkKey struct{}

// freshnessHeaders are the headers of an answer that bear on keeping it.
type freshnessHeaders struct {
	cacheControl string
	age          string
}

func (f *freshnessHeaders) record(h http.Header) {
	f.cacheControl = strings.Join(h.Values("Cache-Control"), ",")
	f.age = h.Get("Age")
}

// lifetime is how long an answer may be kept: the TTL, shortened by
// max-age (or s-maxage) and Age. no-store, no-cache and a non-integer
// max-age keep nothing (RFC 9111); private is fine, since entries serve only
// the key that read them. reason says why when the lifetime is zero.
func lifetime(f freshnessHeaders, ttl time.Duration) (time.Duration, string) {
	life := ttl
	for _, d := range strings.Split(f.cacheControl, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "no-store":
			return 0, "no-store"
		case "no-cache":
			return 0, "no-cache"
		case "max-age", "s-maxage":
			secs, ok := deltaSeconds(value)
			if !ok {
				return 0, "invalid max-age"
			}
			life = min(life, secs)
		}
	}
	if age, ok := deltaSeconds(f.age); ok {
		life -= age
	}
	if life <= 0 {
		return 0, "stale on arrival"
	}
	return life, ""
}

// deltaSeconds reads RFC 9111's delta-seconds, quoted or not; overflow
// means forever.
func deltaSeconds(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > int64(time.Duration(1<<62)/time.Second) {
		return time.Duration(1 << 62), true
	}
	return time.Duration(n) * time.Second, true
}
