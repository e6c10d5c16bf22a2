package upstream

import (
	"sync"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	sl "github.com/korral/storelink/storelinkclient"
)

// maxKeyEditors bounds the editors kept; past it they are all made again
// as keys are used (a deployment has one key per store, a few hundred).
const maxKeyEditors = 1024

// keyEditors holds the request editor (sl.WithStoreKey) of each key in
// use, made once per key rather than once per request; a rotated key is
// another entry. The map is keyed by the secret itself, which the client
// holds anyway, so that any Keys (even one that makes a new Key per call)
// finds its editor.
type keyEditors struct {
	mu sync.RWMutex
	of map[string]sl.RequestEditorFn
}

// editor is the request editor that authenticates a request with key.
func (e *keyEditors) editor(key keyring.Key) sl.RequestEditorFn {
	secret := key.Reveal()
	e.mu.RLock()
	fn, ok := e.of[secret]
	e.mu.RUnlock()
	if ok {
		return fn
	}
	fn = sl.WithStoreKey(secret)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.of == nil || len(e.of) >= maxKeyEditors {
		e.of = map[string]sl.RequestEditorFn{}
	}
	e.of[secret] = fn
	return fn
}
