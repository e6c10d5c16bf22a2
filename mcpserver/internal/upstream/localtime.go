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

// A contract declaring x-korral-timestamps: store-local (ADR 0032) sends
// store-local times without an offset. The client then reads the store's
// timezone before each request under /v1/stores/{store_id}/, and the
// transport rewrites those times into RFC 3339 before decoding. Otherwise
// sl.StoreLocalTimestamps is false and such a time is refused.

// localTimes is sl.StoreLocalTimestamps, a variable so tests can turn it on.
var localTimes = sl.StoreLocalTimestamps

// zoneKey carries the request store's *time.Location to the transport.
type zoneKey struct{}

// RuleStoreLocal is the rule id of a store-scoped answer whose local
// times cannot be read because the store's timezone is unknown.
const RuleStoreLocal = "schema.store_local_time"

// maxLocalized bounds the body the transport rewrites; a larger one passes
// unchanged, for the response limit to refuse.
const maxLocalized = sl.DefaultResponseLimit

// storeLocal reports whether the route's answers carry store-local times.
func storeLocal(route string) bool {
	return localTimes && strings.HasPrefix(route, "/v1/stores/{store_id}/")
}

// withStoreZone puts the store's timezone in ctx for the transport. An
// unreadable zone refuses the request before it is sent.
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
		// Pass on what was read, then the rest, so the client sees the same
		// error or too-large body.
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
