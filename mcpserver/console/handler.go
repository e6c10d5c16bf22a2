package console

import (
	"bytes"
	"crypto/rand"
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
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/orderlink"
)

//go:embed templates/*.html static/console.css
var assets embed.FS

// Defaults of Options.
const (
	// DefaultSessionTTL is a working day.
	DefaultSessionTTL = 8 * time.Hour
	// DefaultIdleTimeout ends a session unused for half an hour.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultLoginFailures failed logins per name, and per address, within
	// DefaultLoginWindow lock further logins out.
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

// The Content-Security-Policy of every response: only the console's own
// stylesheet, no script, forms post back here, no framing.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the console. The zero value is usable.
type Options struct {
	// Sessions keeps the sessions; nil means a new Memory store.
	Sessions SessionStore
	// Now is the clock for sessions, the rate limit and "time left"; nil
	// means time.Now. The backend checks expiry with its own clock.
	Now func() time.Time
	// Logger receives internal failures (with an incident id) and security
	// refusals, never a secret or session id. Nil discards.
	Logger *slog.Logger
	// BehindTLSProxy marks cookies Secure although requests arrive in plain
	// HTTP. Requests over TLS always get Secure cookies.
	BehindTLSProxy bool
	// ClientAddr returns the client's address for the rate limit and the
	// audit; nil means RemoteAddr's host. Behind a proxy, read its
	// forwarding header, or all clients share one limit.
	ClientAddr func(*http.Request) string
	// SessionTTL is a session's absolute lifetime; IdleTimeout ends a
	// session unused for that long. Zero means the defaults.
	SessionTTL, IdleTimeout time.Duration
	// LoginFailures and LoginWindow set the rate limit; zero means defaults.
	LoginFailures int
	LoginWindow   time.Duration
	// Logins keeps the login rate limit; nil means a new MemoryLogins.
	// Replicas share a limit only through a shared store.
	Logins LoginLimiter
	// Hosts are the host names (without port, case-insensitive) the
	// console answers to; others get 421, against DNS rebinding. Empty
	// means localhost, 127.0.0.1 and ::1.
	Hosts []string
	// FormKey signs the login form's token. Nil means a random key per
	// process; replicas without sticky sessions need a shared key of at
	// least 32 bytes.
	FormKey []byte
}

// handler is the console; its methods are the pages.
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

// New returns the approvals console over b. Serve it on its own listener,
// never beside the MCP endpoint.
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
	// Cross-origin POSTs are refused by Sec-Fetch-Site and Origin; the CSRF
	// token does not depend on the browser.
	h.crossSite.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.log.Warn("console.cross_origin_refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		http.Error(w, "Cross-origin requests are refused.", http.StatusForbidden)
	}))

	m := http.NewServeMux()
	m.HandleFunc("GET /login", h.loginForm)
	m.HandleFunc("POST /login", h.login)
	m.HandleFunc("POST /logout", h.authed(h.logout))
	m.HandleFunc("GET /{$}", h.authed(h.inbox))
	// The order page's route is the one package orderlink links to; its id
	// is the approval id.
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

	// A request with a bearer token (the agent's credential) is refused.
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

// hostName normalises a host: no port or brackets, lower case, no
// trailing dot.
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

// A backend error the page cannot explain gets an incident id, logged with
// the error.
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

// page is what every template gets.
type page struct {
	Title string
	// Approver is the logged-in approver's name; empty on the login page.
	Approver string
	CSRF     string
	// Flash is a one-line notice; FlashKind is ok, warn or error.
	Flash, FlashKind string
	// NotSending says why this console sends no order at all; every page
	// shows it.
	NotSending string
	Data       any
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
	p.NotSending = h.b.NotSending()
	// Render to a buffer, so a failure never sends half a page.
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
		"shelf":    func(s Stockout) shelfView { return shelf(now(), s) },
		"words":    forPeople,
		"lapsed":   func(t time.Time) bool { return !t.IsZero() && !now().Before(t) },
		"days":     days,
		"px":       func(f float64) string { return fmt.Sprintf("%.1f", f) },
		"add":      func(a, b float64) float64 { return a + b },
		"sub":      func(a, b float64) float64 { return a - b },
		"mid":      func(a, b float64) float64 { return (a + b) / 2 },
		"join":     func(ss []string) string { return strings.Join(ss, ", ") },
		"lines":    func(ss []string) string { return strings.Join(ss, " ") },
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

// base is the layout part of a logged-in page.
func (q *request) base(title string) page {
	return page{Title: title, Approver: q.shownName, CSRF: q.session.CSRF}
}

// backendError renders the page for a backend error; false when err is nil.
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
