package console

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/orderlink"
	"github.com/korral/storelink/mcpserver/internal/state"
)

//go:embed templates/*.html static/console.css
var assets embed.FS

// Defaults of Options.
const (
	// DefaultSessionTTL is a working day: an approver logs in once in the
	// morning, and a stolen cookie is worth nothing by the evening.
	DefaultSessionTTL = 8 * time.Hour
	// DefaultIdleTimeout ends a session nobody has used for half an hour,
	// such as one left open on a shared store PC.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultLoginFailures failed logins per name, and per address, within
	// DefaultLoginWindow lock further logins out until the window moves on.
	DefaultLoginFailures = 5
	// DefaultLoginWindow is the window of DefaultLoginFailures.
	DefaultLoginWindow = 15 * time.Minute
)

// Limits on what a request may carry.
const (
	maxFormBytes  = 16 << 10
	maxNameLen    = 128
	maxSecretLen  = 1024
	maxReasonLen  = 1000
	touchInterval = time.Minute
)

// The Content-Security-Policy of every response: nothing but the console's
// own stylesheet loads, no script runs, forms post only back here, and no
// other site may frame the console (clickjacking an Approve button).
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the console. The zero value is usable: memory sessions,
// the real clock, the defaults above, nothing logged.
type Options struct {
	// Sessions keeps the sessions; nil means a new Memory store.
	Sessions SessionStore
	// Now is the clock for sessions, the rate limit and "time left"; nil
	// means time.Now. The backend judges an approval's expiry by its own
	// clock.
	Now func() time.Time
	// Logger receives internal failures (with an incident id the page
	// shows) and security refusals; never a secret or a session id. Nil
	// discards.
	Logger *slog.Logger
	// BehindTLSProxy says that a proxy terminates TLS in front of the
	// console, so cookies are marked Secure even though the request reached
	// the console in plain HTTP. Requests that arrive over TLS always get
	// Secure cookies.
	BehindTLSProxy bool
	// ClientAddr returns the client's address for the login rate limit and
	// the backend's audit; nil means the host of RemoteAddr. Behind a proxy,
	// supply one that reads the proxy's forwarding header, or every client
	// shares the proxy's address and one attacker locks everyone out.
	ClientAddr func(*http.Request) string
	// SessionTTL is a session's absolute lifetime; IdleTimeout ends a
	// session unused for that long. Zero means the defaults.
	SessionTTL, IdleTimeout time.Duration
	// LoginFailures and LoginWindow set the login rate limit; zero means
	// the defaults.
	LoginFailures int
	LoginWindow   time.Duration
	// Logins keeps the login rate limit; nil means a new MemoryLogins.
	// Replicas share one limit only through a shared store (the state
	// database), or each grants its own attempts.
	Logins LoginLimiter
	// Hosts are the host names (a Host header's name, without its port,
	// compared case-insensitively) the console answers to: its listen
	// address and the address people open it at. A request naming any
	// other host is refused with 421 before anything else, so a page on
	// another site whose name resolves to the console (DNS rebinding)
	// reads nothing. Empty means the loopback names only: localhost,
	// 127.0.0.1 and ::1.
	Hosts []string
	// FormKey signs the login form's token. Nil means a random key per
	// process; replicas behind one load balancer without sticky sessions
	// need the same key (at least 32 bytes), or a login form served by one
	// is refused by another.
	FormKey []byte
}

// handler is the console. Its methods are the pages; the Backend does the
// work.
type handler struct {
	b          Backend
	sessions   SessionStore
	now        func() time.Time
	log        *slog.Logger
	tlsProxy   bool
	clientAddr func(*http.Request) string
	ttl, idle  time.Duration
	limit      loginLimit
	logins     LoginLimiter
	gate       *checkGate
	hosts      map[string]bool
	formKey    []byte
	pages      map[string]*template.Template
	mux        *http.ServeMux
	approvals  *approvalGuard
	crossSite  *http.CrossOriginProtection
	css        []byte
}

// New returns the approvals console as an http.Handler over b. Serve it on
// a listener of its own, never beside the MCP endpoint: the agent's bearer
// token opens nothing here, and the console's cookies should not reach the
// agent's endpoint either.
func New(b Backend, o Options) (http.Handler, error) {
	if b == nil {
		return nil, errors.New("console: no backend")
	}
	h := &handler{
		b: b, sessions: o.Sessions, now: o.Now, log: o.Logger, tlsProxy: o.BehindTLSProxy,
		clientAddr: o.ClientAddr, ttl: o.SessionTTL, idle: o.IdleTimeout,
		formKey: o.FormKey, approvals: newApprovalGuard(), crossSite: http.NewCrossOriginProtection(),
	}
	if h.sessions == nil {
		h.sessions = NewMemory()
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.clientAddr == nil {
		h.clientAddr = remoteHost
	}
	if h.ttl <= 0 {
		h.ttl = DefaultSessionTTL
	}
	if h.idle <= 0 {
		h.idle = DefaultIdleTimeout
	}
	failures, window := o.LoginFailures, o.LoginWindow
	if failures <= 0 {
		failures = DefaultLoginFailures
	}
	if window <= 0 {
		window = DefaultLoginWindow
	}
	h.limit = loginLimit{failures: failures, window: window}
	h.logins = o.Logins
	if h.logins == nil {
		h.logins = NewMemoryLogins()
	}
	h.gate = newCheckGate()
	h.hosts = map[string]bool{}
	for _, host := range o.Hosts {
		if n := hostName(host); n != "" {
			h.hosts[n] = true
		}
	}
	if len(h.hosts) == 0 {
		h.hosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	}
	switch {
	case h.formKey == nil:
		h.formKey = make([]byte, 32)
		if _, err := rand.Read(h.formKey); err != nil {
			return nil, fmt.Errorf("console: form key: %w", err)
		}
	case len(h.formKey) < 32:
		return nil, errors.New("console: FormKey must hold at least 32 bytes")
	}
	var err error
	if h.pages, err = parsePages(h.now); err != nil {
		return nil, err
	}
	if h.css, err = assets.ReadFile("static/console.css"); err != nil {
		return nil, err
	}
	// A cross-origin POST is refused before it reaches a page, by the
	// browser's own Sec-Fetch-Site and Origin headers; the CSRF token is
	// the check that does not depend on the browser.
	h.crossSite.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.log.Warn("console.cross_origin_refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		http.Error(w, "Cross-origin requests are refused.", http.StatusForbidden)
	}))

	m := http.NewServeMux()
	m.HandleFunc("GET /login", h.loginForm)
	m.HandleFunc("POST /login", h.login)
	m.HandleFunc("POST /logout", h.authed(h.logout))
	m.HandleFunc("GET /{$}", h.authed(h.inbox))
	// The order page's route is the one every link to an order names
	// (package orderlink): the webhook notice, the URL elicitation, the
	// tool's answer. Its id is the approval id.
	m.HandleFunc("GET "+orderlink.Prefix+"{id}", h.authed(h.order))
	m.HandleFunc("POST "+orderlink.Prefix+"{id}/approve", h.authed(h.approve))
	m.HandleFunc("POST "+orderlink.Prefix+"{id}/reject", h.authed(h.reject))
	m.HandleFunc("GET /history", h.authed(h.history))
	m.HandleFunc("GET /audit", h.authed(h.audit))
	m.HandleFunc("GET /static/console.css", h.stylesheet)
	h.mux = m
	return h, nil
}

// ServeHTTP applies the rules every request meets, then routes it.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hosts[hostName(r.Host)] {
		h.log.Warn("console.host_refused", "client", h.clientAddr(r))
		http.Error(w, "This console does not answer to that host name.", http.StatusMisdirectedRequest)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Frame-Options", "DENY")
	if h.secure(r) {
		hd.Set("Strict-Transport-Security", "max-age=31536000")
	}

	// The agent's MCP bearer token must never open a console page, even if
	// it happens to equal something the console knows: a request that
	// carries one is refused before routing.
	if bearer.Presented(r.Header.Values("Authorization")) {
		h.log.Warn("console.bearer_refused", "path", r.URL.Path, "client", h.clientAddr(r))
		http.Error(w, "The approvals console does not accept bearer tokens: log in with your approver name and secret.", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/x-www-form-urlencoded" {
			http.Error(w, "Forms are posted as application/x-www-form-urlencoded.", http.StatusUnsupportedMediaType)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	default:
		hd.Set("Allow", "GET, HEAD, POST")
		http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
		return
	}
	h.crossSite.Handler(h.mux).ServeHTTP(w, r)
}

// hostName is the name of a Host header or a configured host: without
// its port and brackets, in lower case, without a trailing dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	return strings.ToLower(host)
}

// secure reports whether the browser reached the console over TLS.
func (h *handler) secure(r *http.Request) bool { return r.TLS != nil || h.tlsProxy }

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (h *handler) stylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Write(h.css)
}

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

// A request that ends on a backend error the page cannot explain gets an
// incident id, which the log line carries with the error.
func (h *handler) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	b := make([]byte, 6)
	rand.Read(b)
	incident := hex.EncodeToString(b)
	h.log.Error("console.backend_failed", "action", what, "incident", incident, "path", r.URL.Path, "err", err)
	h.render(w, r, http.StatusInternalServerError, "error.html", page{
		Title: "Something failed",
		Data: errorView{Heading: "Something failed on the server",
			Message: "Nothing was decided. Try again in a moment; if it keeps failing, give your administrator incident " + incident + "."},
	})
}

// page is what every template gets: the layout's fields and the page's own
// Data.
type page struct {
	Title string
	// Approver is the logged-in approver's shown name; empty on the login
	// page, which then shows no navigation.
	Approver string
	CSRF     string
	// Flash is a one-line notice above the content; FlashKind styles it:
	// ok, warn or error.
	Flash, FlashKind string
	Data             any
}

type errorView struct {
	Heading, Message string
	Back             string
}

func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t, ok := h.pages[name]
	if !ok {
		panic("console: no template " + name)
	}
	// Rendered to a buffer first, so a template failure never sends half a
	// page with a success status.
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		h.log.Error("console.template_failed", "template", name, "err", err)
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.Copy(w, &buf)
	}
}

func parsePages(now func() time.Time) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"when":     when,
		"quantity": quantity,
		"left":     func(t time.Time) string { return remaining(now(), t) },
		"lapsed":   func(t time.Time) bool { return !t.IsZero() && !now().Before(t) },
		"days":     days,
		"px":       func(f float64) string { return fmt.Sprintf("%.1f", f) },
		"add":      func(a, b float64) float64 { return a + b },
		"sub":      func(a, b float64) float64 { return a - b },
		"mid":      func(a, b float64) float64 { return (a + b) / 2 },
		"join":     func(ss []string) string { return strings.Join(ss, ", ") },
	}
	pages := map[string]*template.Template{}
	for _, name := range []string{"login.html", "inbox.html", "order.html", "outcome.html", "history.html", "audit.html", "error.html"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// Login.

type loginView struct {
	Token string
	Name  string
	// Next is the order page the log-in returns to (see returnTo).
	Next string
}

// returnTo is the order page a log-in goes on to: the "next" parameter of
// the request when it names an order page (orderlink.Prefix and an id,
// nothing more), else "". A link to an order (from the webhook notice or
// the host's URL elicitation) thus lands on that order after the log-in,
// and no parameter can send the browser anywhere else.
func returnTo(r *http.Request) string {
	v := r.FormValue("next")
	id, ok := strings.CutPrefix(v, orderlink.Prefix)
	if !ok || id == "" || len(v) > 256 || strings.ContainsAny(id, "/\\?#%") {
		return ""
	}
	return v
}

// formToken is the login form's CSRF token: an HMAC of the pre-session
// cookie under the form key. A site that plants a cookie of its own cannot
// make the matching token without the key.
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

// checkLogin checks a name and secret within the login rate limit, and
// reports the approver, or false when it has answered the request. In
// order: this address may not have more than a few checks running or
// waiting here; the limiter admits the attempt, reserving its slot under
// the name and the address in one step; the backend checks the secret
// (bounded by the verifier's own concurrency); the attempt is settled as
// a failure, a success, or aborted when nothing could be checked.
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
		// The typed name is not logged: people type their secret into
		// the name field often enough.
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

// base is the layout part of a logged-in page.
func (q *request) base(title string) page {
	return page{Title: title, Approver: q.shownName, CSRF: q.session.CSRF}
}

// backendError renders the page for an error a backend method returned; it
// reports false when the error was nil.
func (h *handler) backendError(w http.ResponseWriter, r *http.Request, q *request, what string, err error) bool {
	if err == nil {
		return false
	}
	p := q.base("Not available")
	switch {
	case errors.Is(err, ErrRevoked):
		h.endSession(w, r, q.session.Key)
		h.toLogin(w, r, "revoked")
	case errors.Is(err, ErrNotFound):
		p.Data = errorView{Heading: "No such order", Message: "No staged order has this approval id.", Back: "/"}
		h.render(w, r, http.StatusNotFound, "error.html", p)
	case errors.Is(err, ErrOutOfScope):
		p.Data = errorView{Heading: "Outside your stores", Message: "This order is for a store you are not an approver of. Nothing was done.", Back: "/"}
		h.render(w, r, http.StatusForbidden, "error.html", p)
	default:
		h.internal(w, r, what, err)
	}
	return true
}
