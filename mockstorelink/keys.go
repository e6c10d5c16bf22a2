package mockstorelink

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sync"
)

// StoreKeyHeader is the request header that carries a store key.
const StoreKeyHeader = "X-Korral-Store-Key"

// keyring maps each store to its current key, derived from the seed, the
// store and a rotation counter.
type keyring struct {
	seed uint64

	mu       sync.RWMutex
	byStore  map[string]string
	byKey    map[string]string
	rotation map[string]int
}

func newKeyring(seed uint64, storeIDs []string) *keyring {
	k := &keyring{
		seed:     seed,
		byStore:  make(map[string]string, len(storeIDs)),
		byKey:    make(map[string]string, len(storeIDs)),
		rotation: make(map[string]int, len(storeIDs)),
	}
	for _, id := range storeIDs {
		k.setLocked(id, k.derive(id, 0))
	}
	return k
}

// derive builds a key in the `slk_<store>_<16 hex>` shape.
func (k *keyring) derive(storeID string, rotation int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "storelink-key/%d/%s/%d", k.seed, storeID, rotation))
	return "slk_" + storeID + "_" + hex.EncodeToString(sum[:8])
}

func (k *keyring) setLocked(storeID, key string) {
	if old, ok := k.byStore[storeID]; ok {
		delete(k.byKey, old)
	}
	// A key opens exactly one store: taking it over revokes it elsewhere.
	if other, ok := k.byKey[key]; ok && other != storeID {
		delete(k.byStore, other)
	}
	k.byStore[storeID] = key
	k.byKey[key] = storeID
}

func (k *keyring) set(storeID, key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.setLocked(storeID, key)
}

func (k *keyring) rotate(storeID string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rotation[storeID]++
	key := k.derive(storeID, k.rotation[storeID])
	k.setLocked(storeID, key)
	return key
}

// storeOf returns the store a key opens.
func (k *keyring) storeOf(key string) (string, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	id, ok := k.byKey[key]
	return id, ok
}

func (k *keyring) all() map[string]string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return maps.Clone(k.byStore)
}
