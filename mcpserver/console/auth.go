package console

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/orderlink"
)

// Cookies. Under TLS the names carry the __Host- prefix, which the browser
// accepts only with Secure, Path=/ and no Domain: no sibling host can plant
// one.
const (
	sessionCookie = "korral_console"
	loginCookie   = "korral_console_login"
)

func (h *handler) cookieName(r *http.Request, base string) string {
	if h.secure(r) {
		return "__Host-" + base
	}
	return base
}

func (h *handler) setCookie(w http.ResponseWriter, r *http.Request, base, value string, maxAge time.Duration) {
	c := &http.Cookie{
		Name: h.cookieName(r, base), Value: value, Path: "/",
		HttpOnly: true, Secure: h.secure(r), SameSite: http.SameSiteStrictMode,
	}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	} else {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

func (h *handler) cookie(r *http.Request, base string) string {
	c, err := r.Cookie(h.cookieName(r, base))
	if err != nil {
		return ""
	}
	return c.Value
}

// request is one authenticated request: the session and the approver as
// the backend holds it now.
type request struct {
	session  Session
	approver Approver
	// shownName is the approver's name as pages print it.
	shownName string
}

// ended names why a session is over; the login page explains each. Only
// these fixed words travel in the URL, never free text.
var ended = map[string]string{
	"expired": "Your session has ended. Log in again.",
	"revoked": "Your approver access was revoked, so your session has ended.",
	"logout":  "You are logged out.",
}

// authed wraps a page that needs a session. It checks, in this order and
// before the page asks the backend anything: a live session, for a POST its
// CSRF token, then that the backend still knows the approver.
func (h *handler) authed(next func(http.ResponseWriter, *http.Request, *request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		now := h.now()
		id := h.cookie(r, sessionCookie)
		if id == "" {
			h.toLogin(w, r, "")
			return
		}
		key := sessionKey(id)
		s, err := h.sessions.Get(ctx, key)
		switch {
		case errors.Is(err, ErrNoSession):
			h.toLogin(w, r, "expired")
			return
		case errors.Is(err, ErrRevoked):
			h.endSession(w, r, key)
			h.toLogin(w, r, "revoked")
			return
		case err != nil:
			h.internal(w, r, "session store", err)
			return
		}
		s.CSRF = csrfFor(id)
		if !now.Before(s.ExpiresAt) || now.Sub(s.LastSeen) >= h.idle {
			h.endSession(w, r, key)
			h.toLogin(w, r, "expired")
			return
		}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				http.Error(w, "The form could not be read.", http.StatusBadRequest)
				return
			}
			if !tokenEqual(r.PostForm.Get("csrf"), s.CSRF) {
				h.log.Warn("console.csrf_refused", "path", r.URL.Path, "approver", s.Approver)
				h.render(w, r, http.StatusForbidden, "error.html", page{
					Title: "Form expired", Approver: shown(s.Approver), CSRF: s.CSRF,
					Data: errorView{Heading: "This form has expired", Message: "Nothing was done. Reload the page and try again."},
				})
				return
			}
		}
		a, err := h.b.Active(ctx, s.ref())
		switch {
		case errors.Is(err, ErrRevoked):
			h.endSession(w, r, key)
			h.toLogin(w, r, "revoked")
			return
		case err != nil:
			h.internal(w, r, "active approver", err)
			return
		}
		if now.Sub(s.LastSeen) >= touchInterval {
			if err := h.sessions.Touch(ctx, key, now, now.Add(h.idle)); err != nil {
				h.log.Warn("console.session_touch_failed", "err", err)
			}
		}
		next(w, r, &request{session: s, approver: a, shownName: a.clean().Name})
	}
}

func tokenEqual(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func (h *handler) endSession(w http.ResponseWriter, r *http.Request, key string) {
	if err := h.sessions.Delete(r.Context(), key); err != nil {
		h.log.Warn("console.session_delete_failed", "err", err)
	}
	h.setCookie(w, r, sessionCookie, "", 0)
}

func (h *handler) toLogin(w http.ResponseWriter, r *http.Request, why string) {
	q := url.Values{}
	if why != "" {
		q.Set("ended", why)
	}
	// An order page opened without a session comes back to that order
	// after the log-in.
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, orderlink.Prefix) {
		q.Set("next", r.URL.Path)
		if returnTo(&http.Request{Form: q}) == "" {
			q.Del("next")
		}
	}
	to := "/login"
	if len(q) > 0 {
		to += "?" + q.Encode()
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}
