package contract

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// against the contract, key present: valid or invalid. It reports false
// for a case that does not reach its operation, which is not sent.
func (g *generator) classify(ctx context.Context, c *Case) bool {
	valid, ok := g.sp.validCase(ctx, c)
	if !ok {
		return false
	}
	c.Expect = expectInvalid
	if valid {
		c.Expect = expectValid
		if c.Method != http.MethodGet {
			// A valid write raises an order: the only one a run raises
			// on purpose is the chain's.
			return false
		}
	}
	return true
}

// validCase validates a case's request against the contract, with a key
// present. ok is false when the request does not route to its operation.
func (s *spec) validCase(ctx context.Context, c *Case) (valid, ok bool) {
	var rd io.Reader = http.NoBody
	if c.Body != nil {
		rd = bytes.NewReader(c.body())
	}
	hr, err := http.NewRequest(c.Method, "http://storelink.invalid"+c.target(), rd)
	if err != nil {
		return false, false
	}
	if c.ContentType != "" {
		hr.Header.Set("Content-Type", c.ContentType)
	}
	hr.Header.Set(s.keyHeader, "redacted")
	route, params, err := s.router.FindRoute(hr)
	if err != nil || route.Operation.OperationID != c.Operation {
		return false, false
	}
	in := &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route, Options: requestOptions}
	return openapi3filter.ValidateRequest(ctx, in) == nil, true
}

// expected renders what a case expects, for reports.
func expected(c *Case) ([]int, string) {
	switch c.Expect {
	case expectInvalid:
		return []int{400}, ""
	case expectUnauthenticated:
		return []int{401}, ""
	case expectForbidden:
		return []int{403}, ""
	case expectMethod:
		return []int{405}, "4xx"
	case expectContentType:
		return []int{400}, "4xx"
	case expectLinked:
		return []int{200}, ""
	}
	return []int{}, "any declared status but 400 and 5xx"
}

// judgeCase checks a case's status class (gen.*), then the response schema
// and, for a success, the semantic rules.
func (s *spec) judgeCase(ctx context.Context, c *Case, now time.Time, raised *sl.OrderRequest, status int, header http.Header, body []byte) []Finding {
	var fs []Finding
	gen := func(rule, msg string) {
		fs = append(fs, Finding{Kind: FindingGenerated, Rule: rule, Message: msg})
	}
	ok2xx := status >= 200 && status < 300
	is4xx := status >= 400 && status < 500
	if status >= 500 {
		gen(RuleServerError, fmt.Sprintf("%d for a generated %s request", status, c.Expect))
	}
	switch c.Expect {
	case expectValid:
		if status == http.StatusBadRequest {
			gen(RuleValidRefused, "400 for a request that keeps the contract's schema")
		}
	case expectInvalid:
		switch {
		case ok2xx:
			gen(RuleNegativeAccepted, fmt.Sprintf("%d for a request that breaks the contract's schema", status))
		case status < 500 && status != http.StatusBadRequest && !(status == http.StatusForbidden && c.Varies == "path.store_id"):
			// A malformed store id is also not the key's store: the
			// contract does not order the two refusals, so 403 is
			// allowed there too.
			gen(RuleNegativeStatus, fmt.Sprintf("%d for a request that breaks the contract's schema, where 400 is due", status))
		}
	case expectUnauthenticated, expectForbidden:
		want := http.StatusUnauthorized
		if c.Expect == expectForbidden {
			want = http.StatusForbidden
		}
		switch {
		case ok2xx:
			gen(RuleAuthIgnored, fmt.Sprintf("%d with %s key", status, keyWords(c.Key)))
		case status < 500 && status != want:
			gen(RuleAuthStatus, fmt.Sprintf("%d with %s key, where %d is due", status, keyWords(c.Key), want))
		}
	case expectMethod:
		if !is4xx && status < 500 {
			gen(RuleMethodAccepted, fmt.Sprintf("%d for %s, which the contract does not have for this path", status, c.Method))
		}
	case expectContentType:
		if !is4xx && status < 500 {
			gen(RuleContentTypeAccepted, fmt.Sprintf("%d for a body sent as %q", status, cmp.Or(c.ContentType, "no Content-Type")))
		}
	case expectLinked:
		if status != http.StatusOK {
			gen(RuleLinkStatus, fmt.Sprintf("%d for the %s the previous response named, where 200 is due", status, c.Operation))
		}
	}
	if op, known := s.ops[c.Operation]; known {
		fs = append(fs, s.validateAnswer(ctx, op, c, now, raised, status, header, body)...)
	}
	if c.Assumption != "" {
		for i := range fs {
			f := &fs[i]
			f.Assumption = f.Kind == FindingGenerated || (f.Kind == FindingRule && f.Rule == rules.OrderReadBack)
		}
	}
	fs = capFindings(fs)
	return fs
}

// validateAnswer holds an answer to the operation's declared responses
// and, for a success, its semantic rules.
func (s *spec) validateAnswer(ctx context.Context, op operation, c *Case, now time.Time, raised *sl.OrderRequest, status int, header http.Header, body []byte) []Finding {
	if !op.declares(status) {
		return []Finding{{Kind: FindingUndeclaredStatus, Schema: op.responseLocation(0),
			Message: fmt.Sprintf("status %d is not declared for %s (declared: %s)", status, op.id, strings.Join(op.declaredStatuses(), ", "))}}
	}
	req := caseRequest(c)
	req.raised = raised
	// The stand-in is routed as a valid request would be: what the case
	// varies does not change which response the contract declares.
	in, err := s.input(op.id, req, nil)
	if err != nil {
		return nil
	}
	b := s.bound(body)
	fs := s.judgeBody(ctx, in, op, status, header, b, body)
	if body = b.view; b.cut && len(fs) > 0 {
		fs = append(fs, b.note())
	}
	if _, isErr := errorEnvelope(body); isErr && status >= 200 && status < 300 {
		fs = append([]Finding{{Kind: FindingErrorIn200, Path: "/error", Message: fmt.Sprintf("%d with error body: a successful status never carries an error", status)}}, fs...)
	} else if status >= 200 && status < 300 && (c.Expect == expectValid || c.Expect == expectLinked) {
		fs = append(fs, semantic(op, in, req, c.body(), now, body)...)
	}
	return fs
}

// caseRequest is the request struct of a case, for judge's helpers.
func caseRequest(c *Case) request {
	q := url.Values{}
	for k, v := range c.Query {
		q.Set(k, v)
	}
	return request{method: c.Method, path: c.Path, query: q, key: keyRole(c.Key), store: c.Store}
}

func keyWords(role string) string {
	switch role {
	case roleNone:
		return "no"
	case roleUnknown:
		return "an unknown"
	case roleOther:
		return "another store's"
	}
	return "its own"
}

// signature names a failure for the shrinker: the rule or kind of its
// first finding.
func signature(fs []Finding) string {
	if len(fs) == 0 {
		return ""
	}
	return cmp.Or(fs[0].Rule, fs[0].Kind)
}

func failedRules(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if id := cmp.Or(f.Rule, f.Kind); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
