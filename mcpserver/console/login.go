package console

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/orderlink"
	"github.com/korral/storelink/mcpserver/internal/state"
)

type loginView struct {
	Token string
	Name  string
	// Next is the order page the log-in returns to (see returnTo).
	Next string
}

// returnTo is the order page a log-in goes on to: the "next" parameter when
// it is exactly an order page, else "", so it cannot redirect elsewhere.
func returnTo(r *http.Request) string {
	v := r.FormValue("next")
	id, ok := strings.CutPrefix(v, orderlink.Prefix)
	if !ok || id == "" || len(v) > 256 || strings.ContainsAny(id, "/\\?#%") {
		return ""
	}
	return v
}

// formToken is the login form's CSRF token: an HMAC of the pre-session
// cookie under the form key.
func (h *handler) formToken(cookie string) string {
	m := hmac.New(sha256.New, h.formKey)
	m.Write([]byte("console login form\x00" + cookie))
	return hex.EncodeToString(m.Sum(nil))
}

// loginPage renders the login form with a fresh pre-session cookie.
func (h *handler) loginPage(w http.ResponseWriter, r *http.Request, status int, name, flash, kind string) {
	c, err := newToken()
	if err != nil {
		h.internal(w, r, "login token", err)
		return
	}
	h.setCookie(w, r, loginCookie, c, time.Hour)
	h.render(w, r, status, "login.html", page{
		Title: "Log in", Flash: flash, FlashKind: kind,
		Data: loginView{Token: h.formToken(c), Name: name, Next: returnTo(r)},
	})
}

func (h *handler) loginForm(w http.ResponseWriter, r *http.Request) {
	if id := h.cookie(r, sessionCookie); id != "" {
		if s, err := h.sessions.Get(r.Context(), sessionKey(id)); err == nil && h.now().Before(s.ExpiresAt) {
			http.Redirect(w, r, cmp.Or(returnTo(r), "/"), http.StatusSeeOther)
			return
		}
	}
	flash, kind := "", ""
	if msg, ok := ended[r.URL.Query().Get("ended")]; ok {
		flash, kind = msg, "warn"
	}
	h.loginPage(w, r, http.StatusOK, "", flash, kind)
}

func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The form could not be read.", http.StatusBadRequest)
		return
	}
	cookie := h.cookie(r, loginCookie)
	if cookie == "" || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(h.formToken(cookie))) {
		h.log.Warn("console.login_token_refused", "client", h.clientAddr(r))
		h.loginPage(w, r, http.StatusForbidden, "", "The login form expired. Nothing was checked; try again.", "error")
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	secret := r.PostForm.Get("secret")
	if name == "" || secret == "" || len(name) > maxNameLen || len(secret) > maxSecretLen {
		h.loginPage(w, r, http.StatusBadRequest, name, "Enter your approver name and secret.", "error")
		return
	}
	addr := h.clientAddr(r)
	a, ok := h.checkLogin(w, r, name, secret, addr)
	if !ok {
		return
	}
	now := h.now()
	// A login from a browser that still holds a session replaces it.
	if old := h.cookie(r, sessionCookie); old != "" {
		if err := h.sessions.Delete(r.Context(), sessionKey(old)); err != nil {
			h.log.Warn("console.session_delete_failed", "err", err)
		}
	}
	id, err := newToken()
	if err != nil {
		h.internal(w, r, "session id", err)
		return
	}
	s := Session{Key: sessionKey(id), Approver: a.Name, Ref: a.Ref, CSRF: csrfFor(id), Created: now, LastSeen: now,
		IdleUntil: now.Add(h.idle), ExpiresAt: now.Add(h.ttl)}
	if err := h.sessions.Create(r.Context(), s); err != nil {
		h.internal(w, r, "session create", err)
		return
	}
	h.setCookie(w, r, sessionCookie, id, h.ttl)
	h.setCookie(w, r, loginCookie, "", 0)
	h.log.Info("console.login", "approver", a.Name, "client", addr)
	http.Redirect(w, r, cmp.Or(returnTo(r), "/"), http.StatusSeeOther)
}

// loginLimit is the login rate limit's setting.
type loginLimit struct {
	failures int
	window   time.Duration
}

// checkLogin checks a name and secret under the rate limit and returns the
// approver, or false when it has answered the request. Order: per-address
// gate, limiter admission, backend check, settlement.
func (h *handler) checkLogin(w http.ResponseWriter, r *http.Request, name, secret, addr string) (Approver, bool) {
	if !h.gate.enter(addr) {
		w.Header().Set("Retry-After", "1")
		h.log.Warn("console.login_busy", "client", addr)
		h.loginPage(w, r, http.StatusTooManyRequests, name, "Too many log-ins from this address at once. Nothing was checked; try again in a moment.", "error")
		return Approver{}, false
	}
	defer h.gate.leave(addr)
	now := h.now()
	adm, err := h.logins.AdmitLogin(r.Context(), state.LoginRequest{Name: name, Addr: addr, Now: now, Limit: h.limit.failures, Window: h.limit.window, Hold: loginHold})
	if err != nil {
		h.internal(w, r, "login limit", err)
		return Approver{}, false
	}
	if !adm.Admitted {
		until := adm.RetryAt
		wait := until.Sub(now)
		w.Header().Set("Retry-After", fmt.Sprint(max(int64((wait+time.Second-1)/time.Second), 1)))
		h.log.Warn("console.login_rate_limited", "client", addr)
		h.loginPage(w, r, http.StatusTooManyRequests, name,
			fmt.Sprintf("Too many failed log-ins for this name or from this address. Try again after %s (in %s).",
				until.UTC().Format("15:04 UTC"), waitText(wait)), "error")
		return Approver{}, false
	}
	a, err := h.b.Login(r.Context(), name, secret, addr)
	outcome := state.LoginSucceeded
	switch {
	case errors.Is(err, ErrBadCredentials):
		outcome = state.LoginFailed
	case err != nil:
		outcome = state.LoginAborted
	}
	// Settled even when the client has gone: a failure must count.
	if serr := h.logins.SettleLogin(context.WithoutCancel(r.Context()), adm.Slot, outcome, h.now()); serr != nil {
		h.log.Warn("console.login_settle_failed", "err", serr)
	}
	switch outcome {
	case state.LoginFailed:
		// The typed name is not logged: it may be a secret.
		h.log.Warn("console.login_failed", "client", addr)
		h.loginPage(w, r, http.StatusUnauthorized, name, "That approver name or secret is wrong.", "error")
		return Approver{}, false
	case state.LoginAborted:
		h.internal(w, r, "login", err)
		return Approver{}, false
	}
	return a, true
}

func waitText(d time.Duration) string {
	m := int64((d + time.Minute - 1) / time.Minute)
	if m <= 1 {
		return "a minute"
	}
	return fmt.Sprintf("%d minutes", m)
}

func (h *handler) logout(w http.ResponseWriter, r *http.Request, q *request) {
	h.endSession(w, r, q.session.Key)
	h.toLogin(w, r, "logout")
}
