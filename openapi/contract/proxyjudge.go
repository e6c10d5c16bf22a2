package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// judgeRequest validates the request against the contract, writes its
// findings, and reports whether it names a contract operation.
func (p *Proxy) judgeRequest(r *http.Request, x *exchange) bool {
	var rd io.Reader
	if x.body != nil {
		rd = bytes.NewReader(x.body)
	}
	// A stand-in of the request, like a probe's: a dummy key, so no key is
	// copied anywhere but the forwarded request.
	hr, err := http.NewRequest(r.Method, "http://storelink.invalid"+r.URL.RequestURI(), rd)
	if err != nil {
		p.emit(x, 0, []Finding{{Kind: FindingRequest, Message: "the request cannot be read as HTTP"}})
		return false
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		hr.Header.Set("Content-Type", ct)
	}
	if x.key != "" {
		hr.Header.Set(p.spec.keyHeader, "redacted")
	}
	route, params, err := p.spec.router.FindRoute(hr)
	if err != nil {
		p.emit(x, 0, []Finding{{Kind: FindingRequest, Message: fmt.Sprintf("no operation of the contract is %s on this path", r.Method)}})
		return false
	}
	op := p.spec.ops[route.Operation.OperationID]
	x.op = op.id
	x.req = request{method: r.Method, path: r.URL.Path, query: r.URL.Query(), key: keyNone}
	if x.key != "" {
		x.req.key = keyOwn
	}
	p.remember(x, params)

	err = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request: hr, PathParams: params, Route: route, Options: requestOptions})
	var declared []int
	for _, code := range op.declaredStatuses() {
		if n, err := strconv.Atoi(code); err == nil {
			declared = append(declared, n)
		}
	}
	var sec *openapi3filter.SecurityRequirementsError
	switch {
	case err == nil:
		// Any declared status may answer a valid request; an undeclared
		// one is its own finding.
		x.expect = declared
	case errors.As(err, &sec):
		x.expect = []int{http.StatusUnauthorized}
		p.emit(x, 0, []Finding{{Kind: FindingRequest, Path: p.spec.keyHeader, Message: "the request carries no key"}})
	default:
		for _, n := range declared {
			if n >= 400 && n < 500 {
				x.expect = append(x.expect, n)
			}
		}
		p.emit(x, 0, requestFindings(err, op))
	}
	if len(x.expect) == 0 {
		x.expect = declared
	}
	return true
}

// remember ties a read to the order or POS walk the proxy saw before.
func (p *Proxy) remember(x *exchange, params map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch x.op {
	case opGetOrder:
		if o, ok := p.raised.get(params["store_id"] + "/" + params["order_id"]); ok {
			x.req.raised = o
		}
	case opListPOS:
		if c := x.req.query.Get("cursor"); c != "" {
			if w, ok := p.walks.get(params["store_id"] + "/" + c); ok {
				x.req.walk = w
				return
			}
		}
		x.req.walk = &rules.Walk{}
	}
}

// judgeResponse checks the answer with judge and learns what
// later reads need.
func (p *Proxy) judgeResponse(ctx context.Context, x *exchange, status int, header http.Header, body []byte) {
	if enc := header.Get("Content-Encoding"); strings.EqualFold(enc, "gzip") {
		plain, err := gunzip(body)
		if err != nil {
			p.emit(x, status, []Finding{{Kind: FindingBody, Path: "Content-Encoding", Message: "the gzip body does not decompress"}})
			return
		}
		body = plain
	}
	if p.spec.storeLocal && status >= 200 && status < 300 {
		body = p.localize(x, body)
	}
	pr := &probe{op: x.op, expect: x.expect}
	_, _, fs := p.spec.judge(ctx, pr, x.req, x.body, p.cfg.Now(), status, header, body)
	p.emit(x, status, fs)
	if status < 200 || status >= 300 || len(fs) > 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch x.op {
	case opCreateOrder:
		var raised sl.OrderRequest
		var o sl.Order
		if json.Unmarshal(x.body, &raised) == nil && json.Unmarshal(body, &o) == nil && o.OrderID != "" {
			p.raised.put(o.StoreID+"/"+o.OrderID, &raised)
		}
	case opListPOS:
		var page sl.POSPage
		if json.Unmarshal(body, &page) == nil && page.NextCursor != nil && x.req.walk != nil {
			p.walks.put(page.StoreID+"/"+*page.NextCursor, x.req.walk)
		}
	}
}

// requestFindings turns kin-openapi's verdict on a request into findings
// that name the parameter or the body field, never the value sent.
func requestFindings(err error, op operation) []Finding {
	var fs []Finding
	for _, e := range requestErrors(err) {
		re, ok := e.(*openapi3filter.RequestError)
		if !ok {
			fs = append(fs, Finding{Kind: FindingRequest, Schema: op.responseLocation(0), Message: "the request breaks the contract"})
			continue
		}
		f := Finding{Kind: FindingRequest, Message: "the request breaks the contract"}
		switch {
		case re.Parameter != nil:
			f.Path = re.Parameter.Name
			f.Message = fmt.Sprintf("parameter %s in %s is invalid", re.Parameter.Name, re.Parameter.In)
		case re.RequestBody != nil:
			f.Message = "the request body breaks its schema"
		}
		for _, inner := range flatten(re.Err) {
			var se *openapi3.SchemaError
			if errors.As(inner, &se) {
				if re.Parameter == nil {
					f.Path = pointer(se.JSONPointer())
				}
				f.Message += ": " + se.Reason
				break
			}
		}
		fs = append(fs, f)
	}
	return fs
}

// requestErrors unpacks the multi-error of a request's validation down to
// its request errors, which flatten would unwrap past.
func requestErrors(err error) []error {
	if me, ok := err.(openapi3.MultiError); ok {
		var out []error
		for _, e := range me {
			out = append(out, requestErrors(e)...)
		}
		return out
	}
	return []error{err}
}
