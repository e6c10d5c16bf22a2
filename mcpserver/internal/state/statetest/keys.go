package statetest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// consoleFormKey: the key is made on first use, holds ConsoleKeySize
// bytes, and every later call, through this handle or another (another
// replica, or after a restart), returns the same key.
func consoleFormKey(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	first, err := s.ConsoleFormKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != state.ConsoleKeySize || bytes.Equal(first, make([]byte, state.ConsoleKeySize)) {
		t.Fatalf("form key %x: want %d random bytes", first, state.ConsoleKeySize)
	}
	for i, h := range []state.Store{s, reopen()} {
		again, err := h.ConsoleFormKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, first) {
			t.Errorf("handle %d: form key %x, want the first one %x", i, again, first)
		}
	}
}

// consoleFormKeyRace: handles racing on an empty store's first use all
// get one key.
func consoleFormKeyRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen(), reopen(), reopen()}
	const tries = 16
	keys := make([][]byte, tries)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			k, err := handles[i%len(handles)].ConsoleFormKey(ctx)
			if err != nil {
				t.Errorf("try %d: %v", i, err)
			}
			keys[i] = k
		}()
	}
	close(start)
	wg.Wait()
	for i, k := range keys {
		if len(k) != state.ConsoleKeySize || !bytes.Equal(k, keys[0]) {
			t.Errorf("try %d: form key %x, want the one every try got, %x", i, k, keys[0])
		}
	}
}
