package config

import (
	"net/netip"
	"net/url"
	"strings"
)

func (l *loader) baseURL(name string) string {
	return l.httpBase(name, httpBaseRules{
		example:     "https://storelink.example.internal",
		credentials: "; store keys go in STORELINK_KEYRING",
	})
}

// httpBaseRules are what one base-URL setting says when it is refused.
type httpBaseRules struct {
	// example is a URL of the right shape; credentials and query end the
	// messages about user info and about a query or fragment.
	example, credentials, query string
	// maxLen bounds the value when not zero; tooLong ends its message.
	maxLen  int
	tooLong string
}

// httpBase reads an absolute http(s) base URL with no credentials, query
// or fragment, without a trailing slash; "" when unset or refused.
func (l *loader) httpBase(name string, r httpBaseRules) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		// url.Parse's error repeats the value, which might hold credentials.
		l.fail("%s: is not a URL: want an absolute http or https URL like %s", name, r.example)
	case u.User != nil:
		l.fail("%s: must not contain credentials%s", name, r.credentials)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		l.fail("%s=%s: must be an absolute http or https URL like %s", name, shown(v), r.example)
	case u.RawQuery != "" || u.Fragment != "":
		l.fail("%s=%s: must not have a query or fragment%s", name, shown(v), r.query)
	case r.maxLen > 0 && len(v) > r.maxLen:
		l.fail("%s: is %d characters long; at most %d %s", name, len(v), r.maxLen, r.tooLong)
	default:
		return strings.TrimSuffix(v, "/")
	}
	return ""
}

// webhookURL reads the webhook's URL, which may carry a token, so no
// message quotes it. Plain http is refused except to a loopback host.
func (l *loader) webhookURL(name string) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		l.fail("%s: is not a URL: want an absolute https URL like https://hooks.example.com/services/…", name)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
		l.fail("%s: must be an absolute https URL like https://hooks.example.com/services/…", name)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		l.fail("%s: must use https; plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost), not to %s", name, shown(u.Hostname()))
	case u.Fragment != "":
		l.fail("%s: must not have a fragment (#…): it is never sent", name)
	default:
		return v
	}
	return ""
}

// maxConsoleURLLen bounds CONSOLE_PUBLIC_URL, repeated in every notice.
const maxConsoleURLLen = 256

// consoleURL reads the console's public base URL, a plain http(s) address
// that people click.
func (l *loader) consoleURL(name string) string {
	return l.httpBase(name, httpBaseRules{
		example:     "https://approvals.korral.example",
		credentials: ": approvers sign in on the console itself",
		query:       ": it is the base that order links are appended to",
		maxLen:      maxConsoleURLLen,
		tooLong:     "fit the notices' text",
	})
}

// oauthURL reads an https URL, or an http one to a loopback host, with no
// credentials, query or fragment; "" when unset or refused.
func (l *loader) oauthURL(name, example string) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		l.fail("%s=%s: must be an absolute https URL like %s", name, shown(v), example)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		l.fail("%s=%s: must use https; plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost)", name, shown(v))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		l.fail("%s=%s: must have no user info, query or fragment, like %s", name, shown(v), example)
	default:
		return v
	}
	return ""
}

// loopback reports whether host is this machine: localhost or a loopback
// address. Names are not resolved: start-up must not depend on DNS.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
