package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// maxFindings bounds the findings kept for one probe.
const maxFindings = 20

var (
	requestOptions = &openapi3filter.Options{
		AuthenticationFunc: keyPresent,
		MultiError:         true,
	}
	responseOptions = &openapi3filter.Options{
		// Otherwise undeclared statuses pass; judge reports them itself.
		IncludeResponseStatus: true,
		// Report every broken field, not only the first.
		MultiError: true,
	}
	unsupportedProperty = regexp.MustCompile(`^property "(.*)" is unsupported$`)
	quotedName          = regexp.MustCompile(`"([^"]+)"`)
	errorCodePattern    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// inconclusive are the declared statuses that mean StoreLink could not
// answer; an unexpected one leaves the probe unchecked.
var inconclusive = []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable}

// keyPresent satisfies the contract's security requirement when the
// request carries the key header, whatever its value.
func keyPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme := in.SecurityScheme
	if scheme != nil && scheme.Type == "apiKey" && scheme.In == "header" &&
		in.RequestValidationInput.Request.Header.Get(scheme.Name) != "" {
		return nil
	}
	return fmt.Errorf("security requirement %q not met", in.SecuritySchemeName)
}

// input routes a stand-in of a probe's request through the contract, with
// a dummy key so the real key is not copied.
func (s *spec) input(op string, req request, body []byte) (*openapi3filter.RequestValidationInput, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequest(req.method, "http://storelink.invalid"+req.target(), rd)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", op, err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.key != keyNone {
		hr.Header.Set(s.keyHeader, "redacted")
	}
	route, params, err := s.router.FindRoute(hr)
	if err != nil {
		return nil, fmt.Errorf("route %s %s: %w", req.method, req.path, err)
	}
	if route.Operation.OperationID != op {
		return nil, fmt.Errorf("%s %s routes to %s, not %s", req.method, req.path, route.Operation.OperationID, op)
	}
	return &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route, Options: requestOptions}, nil
}

// validateRequest checks a positive probe's own request against the
// contract, key header included.
func (s *spec) validateRequest(ctx context.Context, op string, req request, body []byte) []Finding {
	in, err := s.input(op, req, body)
	if err != nil {
		return []Finding{{Kind: FindingRequest, Message: err.Error()}}
	}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		return []Finding{{Kind: FindingRequest, Message: firstLine(err.Error())}}
	}
	return nil
}

// judge decides a probe's verdict from the answer: expected and declared
// statuses, schema validation, and the operation's semantic rules at now.
func (s *spec) judge(ctx context.Context, p *probe, req request, reqBody []byte, now time.Time, status int, header http.Header, whole []byte) (Verdict, string, []Finding) {
	op := s.ops[p.op]
	// A wide body is read through its bounded view (bound.go).
	b := s.bound(whole)
	body := b.view
	var fs []Finding
	errCode, errBody := errorEnvelope(body)
	quirk := errBody && status >= 200 && status < 300
	if quirk {
		fs = append(fs, Finding{Kind: FindingErrorIn200, Path: "/error",
			Message: fmt.Sprintf("%d with error body%s: a successful status never carries an error", status, codeNote(errCode))})
	}
	if !slices.Contains(p.expect, status) {
		fs = append(fs, Finding{Kind: FindingStatus, Schema: op.responseLocation(p.expect[0]),
			Message: fmt.Sprintf("expected %s, got %d", statusList(p.expect), status)})
	}
	if !op.declares(status) {
		fs = append(fs, Finding{Kind: FindingUndeclaredStatus, Schema: op.responseLocation(0),
			Message: fmt.Sprintf("status %d is not declared for %s (declared: %s)", status, op.id, strings.Join(op.declaredStatuses(), ", "))})
	} else {
		in, err := s.input(p.op, req, reqBody)
		if err != nil {
			return Error, "cannot route the probe through the contract (a bug in the checker): " + err.Error(), nil
		}
		fs = append(fs, s.judgeBody(ctx, in, op, status, header, b, whole)...)
		if !quirk && status >= 200 && status < 300 {
			fs = append(fs, semantic(op, in, req, reqBody, now, body)...)
		}
	}
	if dep := s.requestDepartures(p.op, reqBody, status, body); len(dep) > 0 {
		// A refusal naming request fields is one finding; the status adds
		// nothing.
		fs = append(dep, slices.DeleteFunc(fs, func(f Finding) bool { return f.Kind == FindingStatus })...)
	}
	if p.assume != "" {
		for i := range fs {
			fs[i].Assumption = fs[i].Kind == FindingStatus || (fs[i].Kind == FindingRule && slices.Contains(p.assumes, fs[i].Rule))
		}
	}
	if quirk {
		// Everything else follows from the error body: one finding.
		head := fs[0]
		for _, f := range fs[1:] {
			head.Details = append(head.Details, describe(f))
		}
		if len(head.Details) > maxFindings {
			head.Details = append(head.Details[:maxFindings-1], fmt.Sprintf("and %d more", len(head.Details)-maxFindings+1))
		}
		fs = []Finding{head}
	}
	fs = capFindings(fs)
	unchecked := len(fs) == 1 && fs[0].Kind == FindingStatus && slices.Contains(inconclusive, status)
	if b.cut && len(fs) > 0 && !unchecked {
		// The note takes the last place: a wide body has at most
		// maxFindings findings too.
		fs = append(fs[:min(len(fs), maxFindings-1)], b.note())
	}
	switch {
	case len(fs) == 0:
		return Pass, "", nil
	case unchecked:
		return Error, fmt.Sprintf("StoreLink answered %d%s, so this probe could not be checked", status, codeNote(errCode)), nil
	case quirk && !slices.Contains(p.expect, status):
		return Drift, fmt.Sprintf("%d with error body%s where %s is due", status, codeNote(errCode), statusList(p.expect)), fs
	case quirk:
		return Drift, fmt.Sprintf("%d with error body%s", status, codeNote(errCode)), fs
	}
	return Drift, fs[0].Message, fs
}

// semantic checks a successful answer by its operation's semantic rules
// against what the request asked for. Absent fields are left to the
// schema's findings.
func semantic(op operation, in *openapi3filter.RequestValidationInput, req request, reqBody []byte, now time.Time, body []byte) []Finding {
	if len(op.rules) == 0 {
		return nil
	}
	q := rules.Query{StoreID: in.PathParams["store_id"], SKU: in.PathParams["sku"], SupplierID: in.PathParams["supplier_id"],
		OrderID: in.PathParams["order_id"], Cursor: req.query.Get("cursor"), Now: now, Raised: req.raised, Walk: req.walk}
	if q.SKU == "" {
		q.SKU = req.query.Get("sku")
	}
	if since, err := time.Parse(time.RFC3339, req.query.Get("since")); err == nil {
		q.Since = since
	}
	if limit, err := strconv.Atoi(req.query.Get("limit")); err == nil && limit > 0 {
		q.Limit = limit
	}
	if req.method == http.MethodPost && reqBody != nil && req.raised == nil {
		var raised sl.OrderRequest
		if json.Unmarshal(reqBody, &raised) == nil {
			q.Raised = &raised
		}
	}
	found, err := rules.Check(op.id, body, q)
	if err != nil {
		return nil // a body the rules cannot read breaks the schema, which says so
	}
	var fs []Finding
	for _, f := range found {
		if !slices.Contains(op.rules, f.Rule) || !op.declaresField(f.Field) {
			continue
		}
		r, _ := rules.Lookup(f.Rule)
		fs = append(fs, Finding{Kind: FindingRule, Rule: f.Rule, Path: f.Field, Schema: op.rulesLocation(),
			Message: f.Problem + ": " + r.Text})
	}
	return fs
}

// findings turns kin-openapi's verdict on a response into findings, one per
// failed rule.
func (s *spec) findings(err error, op operation, status int, body []byte) []Finding {
	if err == nil {
		return nil
	}
	var re *openapi3filter.ResponseError
	if !errors.As(err, &re) {
		return []Finding{{Kind: FindingBody, Schema: op.responseLocation(status), Message: firstLine(err.Error())}}
	}
	kind, path := FindingSchema, ""
	switch {
	case strings.Contains(re.Reason, "Content-Type"):
		kind, path = FindingHeader, "Content-Type"
	case strings.HasPrefix(re.Reason, "response header"):
		kind = FindingHeader
		if m := quotedName.FindStringSubmatch(re.Reason); m != nil {
			path = m[1]
		}
	case strings.HasPrefix(re.Reason, "failed to"):
		kind = FindingBody
	}
	if re.Err == nil || kind == FindingBody {
		msg := re.Reason
		if re.Err != nil {
			msg += ": " + firstLine(re.Err.Error())
		}
		return []Finding{{Kind: kind, Path: path, Schema: op.responseLocation(status), Message: msg}}
	}
	var fs []Finding
	var objects []objectProblem
	for _, e := range flatten(re.Err) {
		var se *openapi3.SchemaError
		if !errors.As(e, &se) {
			fs = append(fs, Finding{Kind: kind, Path: path, Schema: op.responseLocation(status), Message: firstLine(e.Error())})
			continue
		}
		if kind == FindingSchema && !s.storeLocal {
			if lf, ok := localTimeFinding(se, pointer(se.JSONPointer())); ok {
				fs = append(fs, lf)
				continue
			}
		}
		f := Finding{Kind: kind, Path: path, Message: se.Reason}
		field := se.SchemaField
		if kind == FindingSchema {
			tokens := se.JSONPointer()
			// Point at the unexpected property, not its parent object.
			if m := unsupportedProperty.FindStringSubmatch(se.Reason); m != nil {
				tokens = append(tokens, m[1])
				// kin-openapi files additionalProperties under properties.
				field = "additionalProperties"
				objects = append(objects, objectProblem{parent: pointer(se.JSONPointer()), schema: se.Schema, value: se.Value, found: m[1]})
			}
			f.Path = pointer(tokens)
			f.Evidence = s.evidence(se, field, tokens)
		}
		if loc, ok := s.schemaAt[se.Schema]; ok {
			f.Schema = loc
			if field != "" {
				f.Schema += "/" + field
			}
		} else {
			f.Schema = op.responseLocation(status)
		}
		fs = append(fs, f)
	}
	fs = s.pairRenames(fs, objects)
	fs = envelope(fs, status, body)
	return fold(fs)
}

// errorSchema is where the contract's error envelope lives.
const errorSchema = "#/components/schemas/Error"

// envelope folds the findings of a failure body that is a JSON object
// without the "error" envelope into one finding.
func envelope(fs []Finding, status int, body []byte) []Finding {
	if status < 400 {
		return fs
	}
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return fs
	}
	if _, has := obj["error"]; has {
		return fs
	}
	top := func(f Finding) bool {
		return f.Kind == FindingSchema && strings.Count(f.Path, "/") == 1 &&
			(f.Schema == errorSchema+"/required" || f.Schema == errorSchema+"/additionalProperties")
	}
	if !slices.ContainsFunc(fs, top) {
		return fs
	}
	names := slices.Sorted(maps.Keys(obj))
	shown := names[:min(len(names), 3)]
	quoted := make([]string, len(shown))
	for i, n := range shown {
		quoted[i] = strconv.Quote(n)
	}
	has := strings.Join(quoted, ", ")
	if len(names) > len(shown) {
		has += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	if has == "" {
		has = "no property"
	}
	ev := &Evidence{Component: "Error", Property: "error"}
	if len(names) == 1 {
		ev.Found = names[0]
		ev.JSONType, _ = jsonType(obj[names[0]])
	}
	out := []Finding{{Kind: FindingSchema, Path: "", Schema: errorSchema,
		Message:  fmt.Sprintf(`the error body is not the contract's envelope: "error" is missing, the body has %s`, has),
		Evidence: ev}}
	for _, f := range fs {
		if !top(f) {
			out = append(out, f)
		}
	}
	return out
}

// flatten unpacks kin-openapi's nested multi-errors.
func flatten(err error) []error {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []error
		for _, e := range me {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// errorEnvelope reports whether a body is the contract's error envelope
// ({"error": {...}}), and its code when the code looks like one.
func errorEnvelope(body []byte) (code string, ok bool) {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		return "", false
	}
	raw, has := env["error"]
	if !has {
		return "", false
	}
	var detail map[string]json.RawMessage
	if json.Unmarshal(raw, &detail) != nil || detail == nil {
		return "", false
	}
	_ = json.Unmarshal(detail["code"], &code)
	if !errorCodePattern.MatchString(code) {
		code = ""
	}
	return code, true
}

func codeNote(code string) string {
	if code == "" {
		return ""
	}
	return " (code " + strconv.Quote(code) + ")"
}

// pointer renders JSON Pointer tokens (RFC 6901); the whole body is "".
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/")
		if strings.ContainsAny(t, "~/") {
			t = escapePointer(t)
		}
		b.WriteString(t)
	}
	return b.String()
}

func statusList(codes []int) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, " or ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// declaresField reports whether the operation's success schema has the
// field at a JSON Pointer, so rules skip fields a patched contract renamed.
func (o operation) declaresField(ptr string) bool {
	var ref *openapi3.SchemaRef
	for _, code := range []int{200, 201} {
		if r := o.op.Responses.Status(code); r != nil && r.Value != nil {
			if mt := r.Value.Content.Get("application/json"); mt != nil {
				ref = mt.Schema
			}
		}
	}
	if ptr == "" || ref == nil {
		return true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if ref == nil || ref.Value == nil {
			return true
		}
		sc := ref.Value
		switch {
		case sc.Items != nil && (tok == "*" || isIndex(tok)):
			ref = sc.Items
		case sc.Properties != nil:
			next, ok := sc.Properties[unescapePointer(tok)]
			if !ok {
				return false
			}
			ref = next
		default:
			return true
		}
	}
	return true
}

func isIndex(tok string) bool {
	_, err := strconv.Atoi(tok)
	return err == nil
}

func unescapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
