package statetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// consentNonceSingleUse: a nonce is honoured once, also through another
// handle (another replica); nonces of questions still open survive the
// forgetting of lapsed ones; a malformed nonce is refused.
func consentNonceSingleUse(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	other := reopen()
	const n1, n2 = "nonce-0000000000000001", "nonce-0000000000000002"
	expires := base.Add(5 * time.Minute)
	if fresh, err := s.UseConsentNonce(ctx, n1, expires, base); err != nil || !fresh {
		t.Fatalf("first use: fresh=%v err=%v", fresh, err)
	}
	for i, h := range []state.Store{s, other} {
		if fresh, err := h.UseConsentNonce(ctx, n1, expires, base.Add(time.Minute)); err != nil || fresh {
			t.Errorf("replay through handle %d: fresh=%v err=%v, want a refusal", i, fresh, err)
		}
	}
	// A later question's nonce forgets n1 only once n1 has lapsed.
	if fresh, err := other.UseConsentNonce(ctx, n2, expires.Add(time.Hour), expires.Add(-time.Second)); err != nil || !fresh {
		t.Fatalf("second nonce: fresh=%v err=%v", fresh, err)
	}
	if fresh, _ := s.UseConsentNonce(ctx, n1, expires, expires.Add(-time.Second)); fresh {
		t.Error("a nonce whose question is still open was forgotten")
	}
	for _, bad := range []string{"", "short", fmt.Sprintf("%065d", 1)} {
		if _, err := s.UseConsentNonce(ctx, bad, expires, base); !errors.Is(err, state.ErrBadNonce) {
			t.Errorf("nonce %q: err=%v, want ErrBadNonce", bad, err)
		}
	}
}

// consentNonceRace: the same nonce presented at once through three
// handles, many times over, has exactly one winner.
func consentNonceRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen(), reopen()}
	const tries = 12
	var mu sync.Mutex
	wins := 0
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fresh, err := handles[i%len(handles)].UseConsentNonce(ctx, "nonce-race-00000000001", base.Add(time.Hour), base)
			if err != nil {
				t.Errorf("try %d: %v", i, err)
			}
			if fresh {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d winners of one nonce, want exactly 1", wins)
	}
}
