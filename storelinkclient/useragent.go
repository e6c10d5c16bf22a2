package storelinkclient

import (
	"context"
	"errors"
	"net/http"
	"runtime/debug"
	"strings"
)

// modulePath is the import path of this module; the default User-Agent
// names it so that StoreLink's operators can tell which client called.
const modulePath = "github.com/korral/storelink/storelinkclient"

// userAgentHeader is the header WithUserAgent and the default set.
const userAgentHeader = "User-Agent"

// defaultUserAgent is read from the build information once: it cannot change
// while the program runs.
var defaultUserAgent = "storelinkclient/" + moduleVersion(debug.ReadBuildInfo) + " (+" + modulePath + ")"

// defaultUserAgentValues is the default User-Agent as a header's values,
// shared by every request that sends it (setShared).
var defaultUserAgentValues = []string{defaultUserAgent}

// DefaultUserAgent returns the default User-Agent,
// "storelinkclient/VERSION (+github.com/korral/storelink/storelinkclient)",
// with the module version from the build information or "devel".
func DefaultUserAgent() string { return defaultUserAgent }

// moduleVersion finds this module's version in the build information, as a
// dependency of the program or as the program itself (its own tests).
func moduleVersion(read func() (*debug.BuildInfo, bool)) string {
	info, ok := read()
	if !ok || info == nil {
		return "devel"
	}
	version := ""
	if info.Main.Path == modulePath {
		version = info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			version = dep.Version
		}
	}
	// "(devel)", or a version with anything a product token may not hold.
	if version == "" || strings.ContainsFunc(version, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r)
	}) {
		return "devel"
	}
	return version
}

// WithUserAgent sends ua instead of [DefaultUserAgent]; a per-call editor
// still wins. An empty ua, or one with a control character, fails
// NewClient.
func WithUserAgent(ua string) ClientOption {
	return func(c *Client) error {
		if strings.TrimSpace(ua) == "" || strings.ContainsFunc(ua, isControl) {
			return errors.New("storelink: a User-Agent must be non-empty and hold no control character")
		}
		values := []string{ua}
		c.RequestEditors = append(c.RequestEditors, func(_ context.Context, req *http.Request) error {
			setShared(req.Header, userAgentHeader, values)
			return nil
		})
		return nil
	}
}

// setDefaultUserAgent gives req the default User-Agent unless one is set;
// the redirect guard calls it.
func setDefaultUserAgent(req *http.Request) {
	if len(req.Header[userAgentHeader]) == 0 {
		setShared(req.Header, userAgentHeader, defaultUserAgentValues)
	}
}
