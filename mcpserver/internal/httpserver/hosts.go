package httpserver

import (
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// hostGuard defends against DNS rebinding: it accepts only names this server
// is known by (loopback, the listen host and the allowed host names) in Host
// and Origin, on every interface.
type hostGuard struct {
	allowed map[string]bool
}

func newHostGuard(listenHost string, extra []string) hostGuard {
	g := hostGuard{allowed: map[string]bool{}}
	if listenHost != "" && !IsWildcardHost(listenHost) {
		g.allowed[strings.ToLower(strings.Trim(listenHost, "[]"))] = true
	}
	for _, h := range extra {
		g.allowed[strings.ToLower(h)] = true
	}
	return g
}

// names lists the accepted host names, for the start-up log.
func (g hostGuard) names() []string {
	out := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range slices.Sorted(maps.Keys(g.allowed)) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// ok reports whether host (with or without a port) is one of ours.
func (g hostGuard) ok(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	return IsLoopbackHost(host) || g.allowed[host]
}

func (g hostGuard) wrap(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.ok(r.Host) {
			log.Warn("http.host_refused", "host", r.Host, "remote", r.RemoteAddr)
			// 421: this server does not answer for that name.
			http.Error(w, "Misdirected Request: unknown Host", http.StatusMisdirectedRequest)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host == "" || !g.ok(u.Host) {
				log.Warn("http.origin_refused", "origin", origin, "remote", r.RemoteAddr)
				http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// IsLoopbackHost reports whether host (no port) names this machine only:
// "localhost" or a loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// IsWildcardHost reports whether host (no port) means "every interface":
// empty, 0.0.0.0 or ::.
func IsWildcardHost(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsUnspecified()
}
