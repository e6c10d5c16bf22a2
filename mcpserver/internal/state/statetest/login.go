package statetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// The login limit of the console's defaults: five per name and address in
// fifteen minutes; an unsettled attempt holds its slot for two minutes.
const (
	loginLimit  = 5
	loginWindow = 15 * time.Minute
	loginHold   = 2 * time.Minute
)

func loginReq(name, addr string, now time.Time) state.LoginRequest {
	return state.LoginRequest{Name: name, Addr: addr, Now: now, Limit: loginLimit, Window: loginWindow, Hold: loginHold}
}

// loginLimitShared: attempts in flight count as soon as they are admitted,
// through any handle; failures keep counting for the window; NFC and NFD
// spellings and another case of one name share one set of attempts; the
// limit per address is its own.
func loginLimitShared(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen()}
	var slots []state.LoginSlot
	for i := range loginLimit {
		// Zoë in NFC, in NFD, and in capitals: one name.
		name := []string{"Zoë", "Zoe\u0308", "ZOË"}[i%3]
		a, err := handles[i%2].AdmitLogin(ctx, loginReq(name, fmt.Sprintf("10.0.0.%d", i), base))
		if err != nil || !a.Admitted || a.Slot.ID == 0 {
			t.Fatalf("attempt %d (%q): %+v, %v; want admitted", i+1, name, a, err)
		}
		slots = append(slots, a.Slot)
	}
	// Five in flight: the sixth is refused before any of them is settled,
	// until the first one's hold runs out.
	a, err := handles[1].AdmitLogin(ctx, loginReq("zoe\u0308", "10.9.9.9", base))
	if err != nil || a.Admitted || !a.RetryAt.Equal(base.Add(loginHold)) {
		t.Fatalf("sixth attempt in flight: %+v, %v; want refused until %v", a, err, base.Add(loginHold))
	}
	failedAt := base.Add(time.Second)
	for i, sl := range slots {
		if err := handles[(i+1)%2].SettleLogin(ctx, sl, state.LoginFailed, failedAt); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []time.Time{base.Add(loginHold), failedAt.Add(loginWindow - time.Microsecond)} {
		a, err := s.AdmitLogin(ctx, loginReq("Zoë", "10.9.9.9", at))
		if err != nil || a.Admitted || !a.RetryAt.Equal(failedAt.Add(loginWindow)) {
			t.Errorf("at %v after five failures: %+v, %v; want refused until %v", at, a, err, failedAt.Add(loginWindow))
		}
	}
	// Another name from a fresh address is not limited.
	if a, err := s.AdmitLogin(ctx, loginReq("Petr", "10.9.9.9", failedAt)); err != nil || !a.Admitted {
		t.Errorf("another name: %+v, %v; want admitted", a, err)
	}
	// Once the window has moved on, the name is admitted again.
	if a, err := handles[1].AdmitLogin(ctx, loginReq("Zoë", "10.9.9.8", failedAt.Add(loginWindow))); err != nil || !a.Admitted {
		t.Errorf("after the window: %+v, %v; want admitted", a, err)
	}
	// Many names from one address: the address's own limit.
	for i := range loginLimit {
		a, err := s.AdmitLogin(ctx, loginReq(fmt.Sprintf("n%d", i), "192.0.2.7", base))
		if err != nil || !a.Admitted {
			t.Fatalf("name %d from one address: %+v, %v", i, a, err)
		}
	}
	if a, err := s.AdmitLogin(ctx, loginReq("Eva", "192.0.2.7", base)); err != nil || a.Admitted {
		t.Errorf("sixth name from one address: %+v, %v; want refused", a, err)
	}
	if _, err := s.AdmitLogin(ctx, state.LoginRequest{Name: "x", Addr: "y", Now: base}); !errors.Is(err, state.ErrBadLoginRequest) {
		t.Errorf("a request without limits: %v, want ErrBadLoginRequest", err)
	}
}

// loginSettle: success releases its slot and forgets the name's failures;
// an aborted check releases its slot only; a slot never settled (its
// process crashed) lapses after its hold; a failure whose slot lapsed
// meanwhile still counts.
func loginSettle(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	other := reopen()
	admit := func(h state.Store, name, addr string, at time.Time) state.LoginSlot {
		t.Helper()
		a, err := h.AdmitLogin(ctx, loginReq(name, addr, at))
		if err != nil || !a.Admitted {
			t.Fatalf("admit %s from %s at %v: %+v, %v", name, addr, at, a, err)
		}
		return a.Slot
	}
	refused := func(h state.Store, name, addr string, at time.Time) bool {
		t.Helper()
		a, err := h.AdmitLogin(ctx, loginReq(name, addr, at))
		if err != nil {
			t.Fatal(err)
		}
		return !a.Admitted
	}
	// Four failures and a success: the name starts afresh.
	for i := range loginLimit - 1 {
		if err := other.SettleLogin(ctx, admit(s, "jana", fmt.Sprint("a", i), base), state.LoginFailed, base); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SettleLogin(ctx, admit(other, "Jana", "b", base), state.LoginSucceeded, base); err != nil {
		t.Fatal(err)
	}
	for i := range loginLimit {
		if err := s.SettleLogin(ctx, admit(s, "JANA", fmt.Sprint("c", i), base), state.LoginAborted, base); err != nil {
			t.Fatal(err)
		}
	}
	var held []state.LoginSlot
	for i := range loginLimit {
		held = append(held, admit(other, "jana", fmt.Sprint("d", i), base))
	}
	if !refused(s, "jana", "e", base.Add(loginHold-time.Microsecond)) {
		t.Error("five slots in flight did not refuse a sixth")
	}
	// The process holding them crashed: the slots lapse after their hold.
	at := base.Add(loginHold)
	slot := admit(s, "jana", "f", at)
	// A failure settled after its slot lapsed and was swept still counts.
	late := at.Add(loginHold + time.Second)
	admit(other, "petr", "g", late) // sweeps the lapsed slot
	if err := s.SettleLogin(ctx, slot, state.LoginFailed, late); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleLogin(ctx, held[0], state.LoginFailed, late); err != nil {
		t.Fatal(err)
	}
	for i := range loginLimit - 2 {
		if err := s.SettleLogin(ctx, admit(s, "jana", fmt.Sprint("h", i), late), state.LoginFailed, late); err != nil {
			t.Fatal(err)
		}
	}
	if !refused(other, "Jana", "i", late) {
		t.Error("five failures (two of them settled after their slot lapsed) did not refuse the name")
	}
}

// loginRace: a burst of concurrent attempts for one name, from many
// addresses and through three handles (three replicas), is admitted
// exactly up to the limit.
func loginRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen(), reopen()}
	const tries = 50
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			a, err := handles[i%len(handles)].AdmitLogin(ctx, loginReq([]string{"Zoë", "Zoe\u0308"}[i%2], fmt.Sprintf("10.1.%d.%d", i/200, i%200), base))
			if err != nil {
				t.Errorf("try %d: %v", i, err)
				return
			}
			if a.Admitted {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	if admitted != loginLimit {
		t.Errorf("%d of %d concurrent attempts admitted, want exactly %d", admitted, tries, loginLimit)
	}
}
