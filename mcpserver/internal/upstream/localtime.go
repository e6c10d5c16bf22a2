package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
)

// A contract that declares x-korral-timestamps: store-local (ADR 0032)
// says that StoreLink sends its times in the store's local clock without
// an offset. The adapter then reads the store's timezone (the cached
// store read) before each request under /v1/stores/{store_id}/, and the
// transport rewrites every date-time without an offset of the successful
// answer into RFC 3339 in that zone before the generated client decodes
// it, so the rules, the tools and the salvage of qualifiers see ordinary
// times. Without the declaration sl.StoreLocalTimestamps is a constant
// false: none of this runs, and such a time is refused as before.

// localTimes is sl.StoreLocalTimestamps; a variable only so that this
// package's tests can turn it on (the generated constant follows the
// contract in use). When it is false the cost per request is this test.
var localTimes = sl.StoreLocalTimestamps

// zoneKey carries the *time.Location of the request's store to the
// transport.
type zoneKey struct{}

// RuleStoreLocal is the rule id of a store-scoped answer whose local
// times cannot be read because the store's timezone is unknown.
const RuleStoreLocal = "schema.store_local_time"

// maxLocalized bounds the body the transport rewrites: a larger one is
// passed on as it is, for the client's response limit to refuse.
const maxLocalized = sl.DefaultResponseLimit

// storeLocal reports whether the route's answers carry the store's local
// times: the contract declares it and the route is under a store.
func storeLocal(route string) bool {
	return localTimes && strings.HasPrefix(route, "/v1/stores/{store_id}/")
}

// withStoreZone puts the store's timezone in ctx for the transport. An
// unreadable zone refuses the request before it is sent: its times could
// not be read.
func (c *Client) withStoreZone(ctx context.Context, method, route, storeID string) (context.Context, error) {
	st, err := c.Store(ctx, storeID)
	if err != nil {
		return nil, err
	}
	loc, lerr := domain.Location(st.Timezone)
	if st.Timezone == "" || lerr != nil {
		return nil, c.fail(ctx, method, route, storeID, &fault{field: "store.timezone",
			rule: "unknown, so the store's local times cannot be read", id: RuleStoreLocal, err: sl.ErrMalformedResponse})
	}
	return context.WithValue(ctx, zoneKey{}, loc), nil
}

// localize rewrites the local times of a successful answer in the zone
// ctx carries, if any.
func localize(req *http.Request, resp *http.Response) {
	loc, ok := req.Context().Value(zoneKey{}).(*time.Location)
	if !ok || resp == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 || resp.Body == nil {
		return
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxLocalized+1))
	if err != nil || len(head) > maxLocalized {
		// Passed on as read, then the rest: the client sees the same
		// error or the same too-large body.
		resp.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(head), errReader{err}, resp.Body), Closer: resp.Body}
		return
	}
	out, changed := sl.LocalizeTimestamps(head, loc)
	if changed {
		resp.ContentLength = int64(len(out))
		resp.Header.Del("Content-Length")
	}
	resp.Body = readCloser{Reader: bytes.NewReader(out), Closer: resp.Body}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// errReader returns its error, or io.EOF when it has none.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}
