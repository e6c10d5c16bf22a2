package storelinkclient

import (
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/oapi-codegen/runtime"
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

// styleParam is runtime.StyleParamWithOptions, with the parameters
// StoreLink's spec declares (a string, an integer or a date-time, in the
// simple or form style, without allowReserved) written out without
// reflection; every other value, style or option goes to the runtime. The
// generated request builders call it (client.tmpl). TestStyleParam and
// FuzzStyleParam hold it to the runtime, byte for byte.
func styleParam[T any](style string, explode bool, name string, value T, opts runtime.StyleParamOptions) (string, error) {
	if opts.AllowReserved || style != "simple" && style != "form" {
		return runtime.StyleParamWithOptions(style, explode, name, value, opts)
	}
	var s string
	switch v := any(value).(type) {
	case string:
		s = v
	case int:
		s = strconv.Itoa(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case int32:
		s = strconv.FormatInt(int64(v), 10)
	case time.Time:
		s = v.Format(time.RFC3339Nano)
	default:
		return runtime.StyleParamWithOptions(style, explode, name, value, opts)
	}
	// The simple style is the value alone; the form style is name=value.
	switch opts.ParamLocation {
	case runtime.ParamLocationQuery:
		s = runtime.DefaultQueryEncoder.EscapeQueryValue(s, false)
		name = runtime.DefaultQueryEncoder.EscapeQueryValue(name, false)
	case runtime.ParamLocationPath:
		s, name = url.PathEscape(s), url.PathEscape(name)
	}
	if style == "form" {
		return name + "=" + s, nil
	}
	return s, nil
}
