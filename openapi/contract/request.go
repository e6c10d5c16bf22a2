package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	sl "github.com/korral/storelink/storelinkclient"
)

// FindingRequestField is a finding where StoreLink's refusal names a
// request property the schema lacks, or refuses a declared one, with no
// rename pair.
const FindingRequestField = "request-field"

// Kinds of a fieldComplaint.
const (
	complaintMissing = "missing" // StoreLink wants the field and did not get it
	complaintExtra   = "extra"   // StoreLink does not take the field
	complaintInvalid = "invalid" // StoreLink took the field and refused its value
)

// fieldComplaint is one request field a refusal names.
type fieldComplaint struct {
	field string // a top-level property of the request body
	kind  string
}

// Wording of validation messages for a missing or refused field.
var (
	missingWords = regexp.MustCompile(`(?i)\b(required|missing|must be (present|provided|given)|can(no|')t be (blank|empty|null)|is blank)\b`)
	extraWords   = regexp.MustCompile(`(?i)\b(extra|not (permitted|allowed|expected|recognized|recognised)|unknown|unexpected|unrecognized|unrecognised|additional propert)`)
)

// complaintKind reads what a validation message says about its field.
func complaintKind(texts ...string) string {
	t := strings.Join(texts, " ")
	switch {
	case extraWords.MatchString(t):
		return complaintExtra
	case missingWords.MatchString(t):
		return complaintMissing
	}
	return complaintInvalid
}

// fieldComplaints reads the request fields a 4xx body names, in the three
// common validation error shapes, and says which shape it was.
func fieldComplaints(body []byte) (string, []fieldComplaint) {
	for _, p := range []struct {
		name  string
		parse func([]byte) []fieldComplaint
	}{
		{"a FastAPI validation error", fastAPIComplaints},
		{"RFC 9457 problem details", problemComplaints},
		{"a JSON:API error", jsonAPIComplaints},
	} {
		if cs := p.parse(body); len(cs) > 0 {
			return p.name, cs
		}
	}
	return "", nil
}

// fastAPIComplaints reads FastAPI's (pydantic's) validation body:
// {"detail":[{"loc":["body","quantity"],"msg":"Field required","type":"missing"}]}.
func fastAPIComplaints(body []byte) []fieldComplaint {
	var v struct {
		Detail []struct {
			Loc  []any  `json:"loc"`
			Msg  string `json:"msg"`
			Type string `json:"type"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []fieldComplaint
	for _, d := range v.Detail {
		if len(d.Loc) < 2 || d.Loc[0] != "body" {
			continue
		}
		field, ok := d.Loc[1].(string)
		if !ok {
			continue
		}
		kind := complaintKind(d.Type, d.Msg)
		if d.Type == "missing" || d.Type == "value_error.missing" {
			kind = complaintMissing
		}
		if len(d.Loc) > 2 && kind != complaintInvalid {
			kind = complaintInvalid // a nested field: the top-level one was taken
		}
		out = append(out, fieldComplaint{field, kind})
	}
	return out
}

// problemComplaints reads RFC 9457 problem details with the
// invalid-params extension of its examples:
// {"type":"...","title":"...","invalid-params":[{"name":"quantity","reason":"is required"}]}.
func problemComplaints(body []byte) []fieldComplaint {
	var v struct {
		InvalidParams []struct {
			Name   string `json:"name"`
			Reason string `json:"reason"`
		} `json:"invalid-params"`
	}
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []fieldComplaint
	for _, p := range v.InvalidParams {
		field := strings.TrimPrefix(p.Name, "/")
		if field == "" || strings.ContainsAny(field, "/.[") {
			continue
		}
		out = append(out, fieldComplaint{field, complaintKind(p.Reason)})
	}
	return out
}

// jsonAPIComplaints reads JSON:API errors that point into the request:
// {"errors":[{"source":{"pointer":"/data/attributes/quantity"},"detail":"..."}]},
// or a pointer straight into the body ("/quantity").
func jsonAPIComplaints(body []byte) []fieldComplaint {
	var v struct {
		Errors []struct {
			Source struct {
				Pointer string `json:"pointer"`
			} `json:"source"`
			Code   string `json:"code"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []fieldComplaint
	for _, e := range v.Errors {
		p := e.Source.Pointer
		for _, prefix := range []string{"/data/attributes/", "/data/"} {
			if rest, ok := strings.CutPrefix(p, prefix); ok {
				p = "/" + rest
				break
			}
		}
		tokens := pointerTokens("#" + p)
		if len(tokens) == 0 || tokens[0] == "" {
			continue
		}
		kind := complaintKind(e.Code, e.Title, e.Detail)
		if len(tokens) > 1 && kind != complaintInvalid {
			kind = complaintInvalid
		}
		out = append(out, fieldComplaint{tokens[0], kind})
	}
	return out
}

// requestSchema is the JSON request body schema of an operation and its
// place in the contract, or nil.
func (s *spec) requestSchema(opID string) (*openapi3.Schema, string) {
	op, ok := s.ops[opID]
	if !ok || op.op.RequestBody == nil || op.op.RequestBody.Value == nil {
		return nil, ""
	}
	mt := op.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, ""
	}
	return mt.Schema.Value, s.schemaAt[mt.Schema.Value]
}

// requestDepartures turns a 4xx answer naming request fields that depart
// from the request schema into findings, pairing renames when one fits.
func (s *spec) requestDepartures(opID string, reqBody []byte, status int, body []byte) []Finding {
	if status < 400 || status > 499 || len(reqBody) == 0 {
		return nil
	}
	schema, loc := s.requestSchema(opID)
	if schema == nil || loc == "" {
		return nil
	}
	format, complaints := fieldComplaints(body)
	if len(complaints) == 0 {
		return nil
	}
	var sent map[string]any
	if json.Unmarshal(reqBody, &sent) != nil {
		return nil
	}
	var wanted, refused []string
	for _, c := range complaints {
		_, declared := schema.Properties[c.field]
		_, wasSent := sent[c.field]
		switch {
		case c.kind == complaintMissing && !declared && !wasSent && !slices.Contains(wanted, c.field):
			wanted = append(wanted, c.field)
		case c.kind == complaintExtra && declared && wasSent && !slices.Contains(refused, c.field):
			refused = append(refused, c.field)
		}
	}
	comp := componentName(loc)
	var out []Finding
	paired := map[string]bool{}
	for _, w := range wanted {
		if !isPropertyName(w) {
			continue
		}
		// The best-scoring sent, declared field.
		best, bestScore := "", 0
		for _, name := range slices.Sorted(maps.Keys(sent)) {
			ref := schema.Properties[name]
			if ref == nil || paired[name] {
				continue
			}
			score := 2 * sharedWords(name, w)
			if slices.Contains(refused, name) {
				score++
			}
			if score > bestScore {
				best, bestScore = name, score
			}
		}
		if best == "" && len(refused) == 1 && !paired[refused[0]] {
			best = refused[0]
		}
		if best == "" {
			out = append(out, Finding{Kind: FindingRequestField, Path: "/" + escapePointer(w), Schema: loc + "/properties",
				Message:  fmt.Sprintf("request body: StoreLink requires %s, which the contract's %s does not declare (%s, %d)", strconv.Quote(w), comp, format, status),
				Evidence: &Evidence{Component: comp, Found: w}})
			continue
		}
		paired[best] = true
		ref := schema.Properties[best]
		typ, fmtName := jsonType(sent[best])
		doubts := renameDoubts(ref, best, w, typ, fmtName)
		msg := fmt.Sprintf("request body: renamed? StoreLink requires %s, the contract sends %s (%s, %d)", strconv.Quote(w), strconv.Quote(best), format, status)
		if len(doubts) > 0 {
			msg += "; against a rename: " + strings.Join(doubts, "; ")
		}
		out = append(out, Finding{Kind: FindingRename, Path: "/" + escapePointer(w), Schema: loc + "/properties/" + escapePointer(best),
			Message:  msg,
			Evidence: &Evidence{Component: comp, Property: best, Found: w, JSONType: typ, Format: fmtName, Against: doubts}})
	}
	for _, r := range refused {
		if paired[r] {
			continue
		}
		out = append(out, Finding{Kind: FindingRequestField, Path: "/" + escapePointer(r), Schema: loc + "/properties/" + escapePointer(r),
			Message:  fmt.Sprintf("request body: StoreLink refuses %s, which the contract's %s declares (%s, %d)", strconv.Quote(r), comp, format, status),
			Evidence: &Evidence{Component: comp, Property: r}})
	}
	return out
}

// requestDeparted reports whether findings hold a departure of the request
// body that StoreLink's refusal named.
func requestDeparted(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool {
		return f.Kind == FindingRequestField || f.Kind == FindingRename && strings.HasPrefix(f.Message, "request body: ")
	})
}

// retrySuffix ends the name of a resent write probe.
const retrySuffix = ", again with StoreLink's request names"

// retryWithStoreLinksNames resends the refused write with the properties
// StoreLink asked for, so the order and read-back are still checked. It is
// nil for a retry or when any rename is doubtful.
func retryWithStoreLinksNames(p *probe, req request, reqBody []byte, findings []Finding) *probe {
	if p.learn == nil || req.method != http.MethodPost || req.key != keyOwn || strings.HasSuffix(p.name, retrySuffix) || len(reqBody) == 0 {
		return nil
	}
	renames := map[string]string{}
	for _, f := range findings {
		if f.Kind == FindingRename && strings.HasPrefix(f.Message, "request body: ") && f.Evidence != nil && len(f.Evidence.Against) == 0 {
			renames[f.Evidence.Property] = f.Evidence.Found
		}
	}
	if len(renames) == 0 {
		return nil
	}
	var body map[string]any
	if json.Unmarshal(reqBody, &body) != nil {
		return nil
	}
	for old, name := range renames {
		v, ok := body[old]
		if !ok {
			return nil
		}
		delete(body, old)
		body[name] = v
	}
	retry := req
	retry.body, retry.asGiven = body, true
	if retry.raised == nil {
		var raised sl.OrderRequest
		if json.Unmarshal(reqBody, &raised) == nil {
			retry.raised = &raised
		}
	}
	q := *p
	q.name = p.name + retrySuffix
	q.build = func(*state) (request, string) { return retry, "" }
	return &q
}

// wireBody renames a request body's properties to the names the contract
// in use gives them (via x-go-name after a suggested rename).
func (s *spec) wireBody(opID string, body map[string]any) map[string]any {
	schema, _ := s.requestSchema(opID)
	if schema == nil {
		return body
	}
	out := make(map[string]any, len(body))
	for k, v := range body {
		out[s.wireName(schema, k)] = v
	}
	return out
}

// wireName is the property that holds what the contract first called
// name: name itself, or the one whose x-go-name is name's Go field.
func (s *spec) wireName(schema *openapi3.Schema, name string) string {
	if _, ok := schema.Properties[name]; ok {
		return name
	}
	goName := keepGoName(name)
	for _, p := range slices.Sorted(maps.Keys(schema.Properties)) {
		ref := schema.Properties[p]
		if ref.Extensions[extGoName] == goName || ref.Value != nil && ref.Value.Extensions[extGoName] == goName {
			return p
		}
	}
	return name
}
