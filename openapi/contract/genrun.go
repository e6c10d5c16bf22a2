package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

// Generated sums up the generated cases of a check.
type Generated struct {
	// Seed reproduces the run: the same seed, contract and configuration
	// send the same requests in the same order.
	Seed uint64 `json:"seed"`
	// Planned is how many cases the contract gave; Sent how many were
	// sent before the request budget or the deadline ran out (the rest
	// are not sent, and not a failure: --max-requests and --deadline bound
	// the exploration on purpose).
	Planned int `json:"planned"`
	Sent    int `json:"sent"`
	NotSent int `json:"not_sent"`
	// Failed counts the cases that drifted; Shrunk those of them made
	// smaller before they were reported.
	Failed int `json:"failed"`
	Shrunk int `json:"shrunk"`
	// Held counts the write cases not sent because the orders the check
	// left reached Config.MaxOrders (--max-orders).
	Held int `json:"held,omitempty"`
}

// seedStream is the second word of the PCG state; fixed so that a seed
// alone decides the run.
const seedStream = 0x6b6f7272616c // "korral"

// generate sends the generated cases after the fixed probes, in an order
// the seed decides, within the same budget, rate and deadline.
func (r *runner) generate(ctx context.Context, rep *Report) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, seedStream))
	g := &generator{cfg: r.cfg, sp: r.spec, st: r.st, rng: rng}
	cases := g.plan(ctx)
	rng.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })
	sum := &Generated{Seed: r.cfg.Seed, Planned: len(cases)}
	rep.Generated = sum
	for i, c := range cases {
		if r.sent >= r.cfg.MaxRequests || ctx.Err() != nil {
			sum.NotSent = len(cases) - i
			break
		}
		if r.writeHeld(c.Method, c.Path) != "" {
			sum.Held++
			continue
		}
		c.ID = fmt.Sprintf("case-%03d", i+1)
		results := r.runCase(ctx, c)
		sum.Sent++
		if anyDrift(results) {
			sum.Failed++
			if small, rs := r.shrink(ctx, g, c, results); small != nil {
				sum.Shrunk++
				c, results = small, rs
			}
			keepCase(c, results)
		}
		rep.Probes = append(rep.Probes, results...)
	}
}

// keepCase puts the failing case, with every rule it failed, on its
// first result, for the replay file.
func keepCase(c *Case, rs []Result) {
	cc := c.clone()
	cc.Rules = nil
	for _, r := range rs {
		for _, id := range failedRules(r.Findings) {
			if !slices.Contains(cc.Rules, id) {
				cc.Rules = append(cc.Rules, id)
			}
		}
	}
	rs[0].Case = cc
}

func anyDrift(rs []Result) bool {
	return slices.ContainsFunc(rs, func(r Result) bool { return r.Verdict == Drift })
}

// runCase sends a case (and, for a chain, its linked request) and checks
// the answers: one result per request.
func (r *runner) runCase(ctx context.Context, c *Case) []Result {
	res, status, body := r.sendCase(ctx, c, c.Operation, c.Method, c.target(), nil)
	out := []Result{res}
	if c.Then == nil || res.Verdict == Error || res.Verdict == Skipped {
		return out
	}
	lc := c.Then
	if status != lc.Status {
		out[0].Detail = strings.TrimSpace(out[0].Detail + fmt.Sprintf(" (the chain stops: link %s follows a %d)", lc.Link, lc.Status))
		return out
	}
	path, why := resolveLink(r.spec, lc, c, body)
	if why != "" {
		out = append(out, Result{Operation: lc.Operation, Endpoint: lc.Method + " " + lc.PathTemplate, Probe: c.Name,
			Phase: c.Phase, CaseID: c.ID, Verdict: Drift, Assumption: lc.Assumption,
			Findings: []Finding{{Kind: FindingGenerated, Rule: RuleLinkStatus, Message: why}}, Detail: why})
		return out
	}
	var raised *sl.OrderRequest
	var o sl.OrderRequest
	if json.Unmarshal(c.body(), &o) == nil {
		raised = &o
	}
	linked := &Case{ID: c.ID, Phase: c.Phase, Operation: lc.Operation, Name: c.Name + ": read back", Method: lc.Method, Path: path,
		Key: roleOwn, Store: c.Store, Expect: expectLinked, Assumption: lc.Assumption}
	res2, _, _ := r.sendCase(ctx, linked, lc.Operation, lc.Method, linked.target(), raised)
	res2.Endpoint = lc.Method + " " + lc.PathTemplate
	return append(out, res2)
}

// resolveLink fills the linked operation's path from the link's runtime
// expressions.
func resolveLink(sp *spec, lc *LinkedCase, c *Case, body []byte) (string, string) {
	values := map[string]string{}
	first := map[string]string{}
	// The first request's path parameters, by matching its template.
	if op, ok := sp.ops[c.Operation]; ok {
		first = matchPath(op.path, c.Path)
	}
	var doc any
	_ = json.Unmarshal(body, &doc)
	for name, expr := range lc.Parameters {
		switch {
		case strings.HasPrefix(expr, "$request.path."):
			v, ok := first[strings.TrimPrefix(expr, "$request.path.")]
			if !ok {
				return "", fmt.Sprintf("link %s: the request has no %s", lc.Link, expr)
			}
			values[name] = v
		case strings.HasPrefix(expr, "$response.body#"):
			v, found := lookupPointer(doc, strings.TrimPrefix(expr, "$response.body#"))
			s, isString := v.(string)
			if !found || !isString || !usableID(s) {
				return "", fmt.Sprintf("link %s: the response has no usable %s for parameter %s", lc.Link, expr, name)
			}
			values[name] = s
		default:
			return "", fmt.Sprintf("link %s: the check does not resolve %s", lc.Link, expr)
		}
	}
	return fillPath(lc.PathTemplate, values), ""
}

// lookupPointer follows a JSON Pointer (RFC 6901) into decoded JSON.
func lookupPointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			doc = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			doc = v[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// matchPath reads a path's parameters by its template.
func matchPath(template, path string) map[string]string {
	out := map[string]string{}
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return out
	}
	for i, t := range ts {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			out[t[1:len(t)-1]] = ps[i]
		}
	}
	return out
}

// sendCase sends one request of a case and checks it.
func (r *runner) sendCase(ctx context.Context, c *Case, opID, method, target string, raised *sl.OrderRequest) (Result, int, []byte) {
	endpoint := method + " " + c.Path
	if op, ok := r.spec.ops[opID]; ok {
		endpoint = op.endpoint()
	}
	exp, class := expected(c)
	res := Result{Operation: opID, Endpoint: endpoint, Probe: c.Name, Phase: c.Phase, CaseID: c.ID,
		Expected: exp, ExpectedClass: class, Assumption: c.Assumption, Request: method + " " + target}
	req := caseRequest(c)
	res.Key = r.describeKey(req)
	if req.key == keyOther && otherStore(r.cfg.Keyring, c.Store) == "" {
		res.Verdict, res.Detail = Skipped, "no other store in the keyring"
		return res, 0, nil
	}
	if req.key == keyOwn || req.key == keyOther {
		if _, ok := r.cfg.Keyring[c.Store]; !ok {
			res.Verdict, res.Detail = Error, "store "+c.Store+" has no key in the keyring"
			return res, 0, nil
		}
	}
	if r.sent >= r.cfg.MaxRequests {
		res.Verdict, res.Detail = Error, fmt.Sprintf("not sent: the request budget (%d) is spent", r.cfg.MaxRequests)
		return res, 0, nil
	}
	if why := r.writeHeld(method, target); why != "" {
		res.Verdict, res.Detail = Skipped, why
		return res, 0, nil
	}
	if err := r.pace.wait(ctx); err != nil {
		res.Verdict, res.Detail = Error, "not sent: "+describeTransport(err, r.cfg.RequestTimeout)
		return res, 0, nil
	}
	start := time.Now()
	defer func() { res.DurationMS = millis(time.Since(start)) }()
	status, header, body, err := r.sendRaw(ctx, method, target, c, req)
	for err == nil && status == http.StatusTooManyRequests && res.Retries < maxRetries {
		wait, ok := retryWait(ctx, header, time.Now())
		if !ok || r.sent >= r.cfg.MaxRequests || sleep(ctx, wait) != nil || r.pace.wait(ctx) != nil {
			break
		}
		res.Retries++
		status, header, body, err = r.sendRaw(ctx, method, target, c, req)
	}
	if err != nil {
		res.Verdict, res.Detail = Error, describeTransport(err, r.cfg.RequestTimeout)
		if o := r.noteWrite(method, target, c.Store, caseLabel(c), 0, nil, c.Expect == expectValid); o != nil {
			res.Detail += "; the write's outcome is unknown: " + o.String()
		}
		return res, 0, nil
	}
	res.Got = status
	if len(body) > maxBody {
		res.Verdict, res.Detail = Error, fmt.Sprintf("response body larger than %d MiB; not validated", maxBody>>20)
		return res, status, nil
	}
	if status == http.StatusTooManyRequests {
		res.Verdict, res.Detail = Error, "StoreLink answered 429, so this case could not be checked"
		return res, status, body
	}
	res.Findings = r.spec.judgeCase(ctx, c, r.cfg.Now(), raised, status, header, r.localize(ctx, caseRequest(c), status, body))
	if o := r.noteWrite(method, target, c.Store, caseLabel(c), status, body, c.Expect == expectValid); o != nil && c.Expect != expectValid {
		res.Findings = append(res.Findings, orderRaised(o, dueOf(c)))
	}
	res.Verdict = Pass
	if len(res.Findings) > 0 {
		res.Verdict, res.Detail = Drift, res.Findings[0].Message
	}
	return res, status, body
}

// sendRaw sends a case's request exactly: its body as is, its
// Content-Type or none.
func (r *runner) sendRaw(ctx context.Context, method, target string, c *Case, req request) (int, http.Header, []byte, error) {
	var rd io.Reader
	if c.Body != nil {
		rd = bytes.NewReader(c.body())
	}
	return r.exchange(ctx, method, target, rd, c.ContentType, req)
}

// caseLabel names a generated case in the list of orders left.
func caseLabel(c *Case) string {
	if c.ID == "" {
		return c.Name
	}
	return c.ID + " " + c.Name
}

func ioNop(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
