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
// configuration nor StoreLink says otherwise. Opening hours, product names
// and lead times change on the scale of days; five minutes keeps a buyer's
// session of repeated checks cheap while a correction in StoreLink shows
// within minutes.
const DefaultMasterDataTTL = 5 * time.Minute

// DefaultMasterDataEntries bounds the reused master data. Entries are
// scoped to a store (ADR 0013), so the working set is the chain's 180 store
// records plus, for each store a buyer works on, the SKUs checked there and
// their suppliers: 4,096 holds every store and about 1,950 store-and-SKU
// pairs with their supplier, while an entry is a few hundred bytes, so the
// bound costs at most a couple of MiB.
const DefaultMasterDataEntries = 4096

// masterItem names one piece of master data: what it is, the route that
// reads it (for errors), the store whose key reads it, and its id.
type masterItem struct {
	kind    string // "store", "sku" or "supplier"
	route   string
	storeID string
	id      string
}

// cacheKey is the entry's key. It holds the store even for the chain-wide
// SKU and supplier records, so that an answer read with one store's key is
// only ever given to calls for that same store (ADR 0013).
func (it masterItem) cacheKey() string {
	return it.kind + "\x00" + it.storeID + "\x00" + it.id
}

// masterCache is a bounded, least-recently-used map of master data with a
// lifetime per entry. Every entry remembers the key that read it.
type masterCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	max     int
	order   *list.List // front is the most recently used *cacheEntry
	entries map[string]*list.Element
}

type cacheEntry struct {
	key     string
	value   any
	readBy  keyring.Key
	expires time.Time
}

func newMasterCache(max int, ttl time.Duration, now func() time.Time) *masterCache {
	return &masterCache{ttl: ttl, now: now, max: max, order: list.New(), entries: map[string]*list.Element{}}
}

// get returns a live entry read with storeKey. An entry read with another
// key is not served: after a rotation or a revocation the data must be read
// again with the key in force, so that the cache never answers for a key
// what that key could not read itself.
func (m *masterCache) get(k string, storeKey keyring.Key) (any, bool) {
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

// put keeps v for life, evicting the least recently used entries beyond
// the bound.
func (m *masterCache) put(k string, v any, readBy keyring.Key, life time.Duration) {
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

func (m *masterCache) remove(k string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.entries[k]; ok {
		m.order.Remove(el)
		delete(m.entries, k)
	}
}

// reuse answers a piece of master data from the cache, or reads it. Misses
// for one item that overlap share one request: a risk check over many
// stores, or many buyers checking one store, would otherwise send the same
// read once per caller, and it is that burst that meets StoreLink's rate
// limit first. Only an answer that passed every check of fetch is kept, for
// the configured TTL or less when StoreLink's Cache-Control says so.
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
	if v, ok := c.master.get(k, storeKey); ok {
		// Checked first: a hit is on every call's path, and building the
		// line's arguments costs even when debug lines are off.
		if c.log.Enabled(ctx, slog.LevelDebug) {
			c.log.DebugContext(ctx, "upstream.reused", "call_id", callid.From(ctx), "kind", it.kind, "store_id", it.storeID, "id", it.id, "from", "cache")
		}
		return v.(T), nil
	}
	led := false
	ch := c.flight.DoChan(k, func() (any, error) {
		led = true
		// A request for k may have ended between the look-up above and
		// this flight; its answer is kept, and serves here too.
		if v, ok := c.master.get(k, storeKey); ok {
			return v, nil
		}
		return fill(ctx, c, it, k, fetch)
	})
	select {
	case r := <-ch:
		// The channel's send orders led's write before this read.
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

// fill reads one item for every caller waiting on it and keeps the answer
// when it may be kept. The read is detached from the first caller's
// cancellation, since others wait on it; the per-request timeout still
// bounds it.
func fill[T any](ctx context.Context, c *Client, it masterItem, k string, fetch func(ctx context.Context) (T, error)) (any, error) {
	var fresh freshnessHeaders
	fctx := context.WithValue(context.WithoutCancel(ctx), freshnessSinkKey{}, &fresh)
	v, err := fetch(fctx)
	if err != nil {
		// The record is gone, or StoreLink now answers it outside the
		// contract: what was kept for it is no longer to be trusted.
		if code := apperr.CodeOf(err); code == apperr.NotFound || code == apperr.UpstreamContractError {
			c.master.remove(k)
		}
		return nil, err
	}
	life, reason := lifetime(fresh, c.master.ttl)
	// The key in force now is the one that read it: after a 401 the retry
	// used the refreshed key, which the source now holds.
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

// ownCopy gives each waiter its own copy of a shared error, so that a
// caller adjusting its error cannot change another's.
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

// lifetime is how long an answer may be kept: the TTL, shortened by the
// answer's max-age (or s-maxage) and by the Age an intermediary reports.
// no-store and no-cache keep nothing: no-cache allows keeping only with
// revalidation on every use, which would save StoreLink no request. private
// is honoured as it stands: an entry is only ever served to calls made with
// the very key that read it, which is the private use RFC 9111 allows.
// A max-age that is not a whole number of seconds makes the answer stale
// (RFC 9111, 4.2.1), so it is not kept either. reason says why when the
// lifetime is zero.
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

// deltaSeconds reads RFC 9111's delta-seconds, quoted or not. Values too
// large for a duration are as good as forever.
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
