package storelinkclient

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxHostBytes bounds the host a RedirectError names: a DNS name has at most
// 253 bytes, and a port and IPv6 brackets fit in the rest.
const maxHostBytes = 262

// RedirectError reports a 3xx answer. The client never follows redirects,
// so the store key and body stay put; a redirected POST raised nothing.
type RedirectError struct {
	// StatusCode is the 3xx status, such as 302 or 307. It is zero when the
	// Location header could not be parsed (net/http gives up on such an
	// answer before its status reaches the client), and when a doer followed
	// the redirect without keeping the status.
	StatusCode int
	// Host is the host (with its port, if any) the redirect pointed at, taken
	// from the Location header; the request's own host for a relative
	// Location; empty when Location is missing or unreadable. It never holds
	// a path, a query or user information, which may carry anything.
	Host string
	// Followed is set when the doer given with [WithHTTPClient] followed the
	// redirect itself (only a doer that is not an *http.Client can): the
	// request then reached Host, store key included, and its answer was
	// discarded.
	Followed bool
}

// Error returns a single line such as
// "storelink: 307 redirect to other.example:8443 not followed".
func (e *RedirectError) Error() string {
	var b strings.Builder
	b.WriteString("storelink: ")
	if e.StatusCode != 0 {
		b.WriteString(strconv.Itoa(e.StatusCode))
		b.WriteString(" ")
	}
	b.WriteString("redirect")
	if e.Host != "" {
		b.WriteString(" to ")
		b.WriteString(e.Host)
	}
	if e.Followed {
		b.WriteString(" was followed by the HTTP client given to storelinkclient; it must not follow redirects")
	} else {
		b.WriteString(" not followed")
	}
	return b.String()
}

// stopAtRedirect is the CheckRedirect of every *http.Client this package
// uses.
func stopAtRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// refuseRedirects returns doer guarded against redirects; an *http.Client
// is copied, not changed. NewClient calls it (client.tmpl).
func refuseRedirects(doer HttpRequestDoer) HttpRequestDoer {
	switch d := doer.(type) {
	case nil:
		return &redirectGuard{next: &http.Client{CheckRedirect: stopAtRedirect}}
	case *redirectGuard:
		return d
	case *limitingDoer:
		// The limit stays outermost, where WithResponseLimit looks for it
		// before wrapping again.
		return &limitingDoer{next: refuseRedirects(d.next), max: d.max}
	case *http.Client:
		c := *d
		c.CheckRedirect = stopAtRedirect
		return &redirectGuard{next: &c}
	default:
		return &redirectGuard{next: d}
	}
}

// redirectGuard turns a 3xx answer into a *RedirectError, detects a doer
// that followed one, and sets the default User-Agent.
type redirectGuard struct {
	next HttpRequestDoer
}

func (g *redirectGuard) Do(req *http.Request) (*http.Response, error) {
	// The guard is the one doer every client of NewClient goes through, so
	// it is also where the default User-Agent is added (see useragent.go).
	setDefaultUserAgent(req)
	resp, err := g.next.Do(req)
	if err != nil && badLocation(err) {
		// The error quotes the Location in full; it says nothing else.
		return nil, &RedirectError{}
	}
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		e := &RedirectError{StatusCode: resp.StatusCode, Host: locationHost(req.URL, resp.Header.Get("Location"))}
		discard(resp)
		return nil, e
	}
	if last := resp.Request; last != nil && last.URL != nil && req.URL != nil && !sameTarget(last.URL, req.URL) {
		e := &RedirectError{Host: boundHost(last.URL.Host), Followed: true}
		if last.Response != nil {
			e.StatusCode = last.Response.StatusCode
		}
		discard(resp)
		return nil, e
	}
	return resp, nil
}

// badLocation reports net/http's error for an unparsable Location, by its
// text (nothing else is exported).
func badLocation(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && strings.HasPrefix(ue.Err.Error(), "failed to parse Location header")
}

// sameTarget reports whether two URLs name the same resource, ignoring the
// query (which a doer may reorder) and the fragment.
func sameTarget(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host) && a.EscapedPath() == b.EscapedPath()
}

// locationHost is the host a Location header points at, resolved against the
// request's URL so that a relative Location names the request's own host.
func locationHost(base *url.URL, location string) string {
	if location == "" || base == nil {
		return ""
	}
	u, err := base.Parse(location)
	if err != nil {
		return ""
	}
	return boundHost(u.Host)
}

// boundHost keeps host only if it looks like a host and is short.
func boundHost(host string) string {
	if host == "" || len(host) > maxHostBytes {
		return ""
	}
	for _, r := range host {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == '-', r == ':', r == '[', r == ']', r == '_':
		default:
			return ""
		}
	}
	return host
}

// discard closes a response the caller will never see, after reading a
// little of it so that the connection can be reused.
func discard(resp *http.Response) {
	if resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}
