package storelinkclient

import (
	"net/url"
	"sync/atomic"
)

// lastServer is the parse of the server URL the last request was built
// for: a client sends every request to one server, so the generated
// request builders parse it once rather than per request.
var lastServer atomic.Pointer[parsedServer]

type parsedServer struct {
	raw string
	// u is shared by every request built for raw and never changed: the
	// builders only resolve paths against it, which makes new URLs.
	u *url.URL
}

// parseServer is url.Parse(server), reusing the last parse when server is
// the same string.
func parseServer(server string) (*url.URL, error) {
	if p := lastServer.Load(); p != nil && p.raw == server {
		return p.u, nil
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	lastServer.Store(&parsedServer{raw: server, u: u})
	return u, nil
}
