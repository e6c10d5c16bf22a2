package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxBody bounds how much of a response the check reads.
const maxBody = 4 << 20

// userAgent identifies the check in StoreLink's access logs.
const userAgent = "storelink-contract/1"

// Check probes the StoreLink at cfg.BaseURL and validates every response
// against the contract. It returns an error only for an unusable
// configuration, before sending; wire failures are in the report.
func Check(ctx context.Context, cfg Config) (*Report, error) {
	r, rep, start, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	cfg, sp := r.cfg, r.spec
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	queue := plan(cfg, sp)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		report := len(cfg.Operations) == 0 || slices.Contains(cfg.Operations, p.op)
		if !report && !slices.ContainsFunc(p.serves, func(op string) bool { return slices.Contains(cfg.Operations, op) }) {
			continue
		}
		res, next, transport := r.run(ctx, p)
		if report {
			rep.Probes = append(rep.Probes, res)
		}
		queue = append(next, queue...)
		if transport && r.sent == 1 {
			// The first request failed on the wire: stop rather than wait.
			rep.Aborted = "cannot reach StoreLink at " + cfg.BaseURL + ": " + res.Detail
			break
		}
		if ctx.Err() != nil && len(queue) > 0 {
			rep.Aborted = fmt.Sprintf("the check's deadline (%s) passed with %d probes not sent", cfg.Deadline, len(queue))
			if context.Cause(ctx) != context.DeadlineExceeded {
				rep.Aborted = fmt.Sprintf("the check was interrupted with %d probes not sent", len(queue))
			}
			break
		}
	}
	if cfg.Generate {
		rep.Generated = &Generated{Seed: cfg.Seed}
		if rep.Aborted == "" {
			r.generate(ctx, rep)
		}
	}
	rep.Requests = r.sent
	rep.OrdersCreated = append([]CreatedOrder{}, r.orders...)
	rep.DurationMS = millis(time.Since(start))
	rep.Coverage = coverage(sp, cfg, rep.Probes)
	rep.finish()
	rep.Redact(Secrets(cfg)...)
	return rep, nil
}

// minSecretHeader is the shortest header value redacted; shorter values
// would garble the report.
const minSecretHeader = 8

// Secrets lists the values a report and every message must never show:
// the store keys and the values of the extra headers.
func Secrets(cfg Config) []string {
	var out []string
	for _, k := range cfg.Keyring {
		out = append(out, k)
	}
	for _, vs := range cfg.Headers {
		for _, v := range vs {
			if len(v) >= minSecretHeader {
				out = append(out, v)
			}
		}
	}
	return out
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// runner sends probes one at a time, within the rate and request budget.
type runner struct {
	cfg    Config
	spec   *spec
	client *http.Client
	st     *state
	pace   pacer
	sent   int
	// orders are the orders the run left at StoreLink (noteWrite).
	orders []CreatedOrder
}

// run sends one probe and checks the answer. transport reports a failure on
// the wire.
func (r *runner) run(ctx context.Context, p *probe) (res Result, next []*probe, transport bool) {
	op := r.spec.ops[p.op]
	res = Result{Operation: p.op, Endpoint: op.endpoint(), Probe: p.name, Expected: p.expect, Assumption: p.assume}
	p, req, ok := r.prepare(ctx, p, &res)
	if !ok {
		return res, nil, false
	}
	body, ok := r.encode(ctx, p, req, &res)
	if !ok {
		return res, nil, false
	}
	if err := r.pace.wait(ctx); err != nil {
		res.Verdict, res.Detail = Error, "not sent: "+describeTransport(err, r.cfg.RequestTimeout)
		return res, nil, false
	}
	start := time.Now()
	defer func() { res.DurationMS = millis(time.Since(start)) }()
	status, header, respBody, err := r.sendRetrying(ctx, p, req, body, &res)
	if err != nil {
		res.Verdict, res.Detail = Error, describeTransport(err, r.cfg.RequestTimeout)
		if ctx.Err() != nil {
			res.Detail = "no answer before the check's deadline"
		}
		if o := r.noteWrite(req.method, req.target(), req.store, p.name, 0, nil, wantsSuccess(p.expect)); o != nil {
			res.Detail += "; the write's outcome is unknown: " + o.String()
		}
		return res, nil, true
	}
	res.Got = status
	if len(respBody) > maxBody {
		res.Verdict, res.Detail = Error, fmt.Sprintf("response body larger than %d MiB; not validated", maxBody>>20)
		return res, nil, false
	}
	respBody = r.localize(ctx, req, status, respBody)
	findings := r.judgeAnswer(ctx, p, req, body, status, header, respBody, &res)
	if p.learn != nil && slices.Contains(p.expect, status) && status < 300 {
		// A wide body teaches what its bounded view holds (bound.go).
		next = p.learn(r.st, r.spec.bound(respBody).view)
	}
	if retry := retryWithStoreLinksNames(p, req, body, findings); retry != nil && status >= 400 {
		next = append(next, retry)
	}
	return res, next, false
}

// prepare builds the probe's request and decides whether it may be sent;
// when not, res says why.
func (r *runner) prepare(ctx context.Context, p *probe, res *Result) (*probe, request, bool) {
	if p.skip != "" {
		res.Verdict, res.Detail = Skipped, p.skip
		return p, request{}, false
	}
	req, why := p.build(r.st)
	if why != "" {
		res.Verdict, res.Detail = Skipped, why
		return p, req, false
	}
	if req.expect != nil {
		q := *p
		q.expect = req.expect
		p = &q
		res.Expected = req.expect
	}
	if req.assume != "" {
		q := *p
		q.assume = req.assume
		p = &q
		res.Assumption = req.assume
	}
	res.Request = req.method + " " + req.target()
	res.Key = r.describeKey(req)
	if req.key == keyOther && otherStore(r.cfg.Keyring, req.store) == "" {
		res.Verdict, res.Detail = Skipped, "no other store in the keyring"
		return p, req, false
	}
	if r.sent >= r.cfg.MaxRequests {
		res.Verdict, res.Detail = Error, fmt.Sprintf("not sent: the request budget (%d) is spent", r.cfg.MaxRequests)
		return p, req, false
	}
	if why := r.writeHeld(req.method, req.path); why != "" {
		res.Verdict, res.Detail = Skipped, why
		return p, req, false
	}
	if r.spec.storeLocal {
		req = r.localQuery(ctx, req)
		res.Request = req.method + " " + req.target()
	}
	return p, req, true
}

// encode marshals the request body and, for a positive probe, checks the
// request against the contract: a probe that breaks it is the checker's bug.
func (r *runner) encode(ctx context.Context, p *probe, req request, res *Result) ([]byte, bool) {
	var body []byte
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			res.Verdict, res.Detail = Error, "encode request body: "+err.Error()
			return nil, false
		}
	}
	if p.positive && !req.asGiven {
		if fs := r.spec.validateRequest(ctx, p.op, req, body); len(fs) > 0 {
			res.Verdict, res.Detail, res.Findings = Error, "the probe's own request breaks the contract (a bug in the checker)", fs
			return nil, false
		}
	}
	return body, true
}

// sendRetrying sends the request, and sends it again after a 429 the probe
// does not expect, honouring Retry-After, up to maxRetries.
func (r *runner) sendRetrying(ctx context.Context, p *probe, req request, body []byte, res *Result) (int, http.Header, []byte, error) {
	status, header, respBody, err := r.send(ctx, req, body)
	for err == nil && status == http.StatusTooManyRequests && !slices.Contains(p.expect, status) && res.Retries < maxRetries {
		wait, ok := retryWait(ctx, header, time.Now())
		if !ok || r.sent >= r.cfg.MaxRequests || sleep(ctx, wait) != nil || r.pace.wait(ctx) != nil {
			break
		}
		res.Retries++
		status, header, respBody, err = r.send(ctx, req, body)
	}
	return status, header, respBody, err
}

// judgeAnswer records the check of StoreLink's answer in res and returns the findings.
func (r *runner) judgeAnswer(ctx context.Context, p *probe, req request, body []byte, status int, header http.Header, respBody []byte, res *Result) []Finding {
	verdict, detail, findings := r.spec.judge(ctx, p, req, body, r.cfg.Now(), status, header, respBody)
	if verdict == Error && res.Retries > 0 {
		detail += fmt.Sprintf(" (after %d retries honouring Retry-After)", res.Retries)
	}
	res.Verdict, res.Detail, res.Findings = verdict, detail, findings
	if o := r.noteWrite(req.method, req.target(), req.store, p.name, status, respBody, wantsSuccess(p.expect)); o != nil && !o.Intended {
		res.Verdict = Drift
		res.Findings = append(res.Findings, orderRaised(o, statusList(p.expect)))
	}
	if req.unknowable != "" && status >= 400 && slices.Contains(p.expect, status) && !requestDeparted(findings) {
		// Only the refusal's shape was checked, not its reason.
		res.Detail = strings.TrimSpace(fmt.Sprintf("StoreLink refused the order (%d) for a reason the probe could not know: %s. %s", status, req.unknowable, res.Detail))
	}
	return findings
}

// newRun loads the contract, completes and checks cfg, and returns the
// runner, the empty report and the start time.
func newRun(cfg Config) (*runner, *Report, time.Time, error) {
	sp, err := cfg.spec()
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	cfg = cfg.withDefaults(sp.exampleSKU)
	if err := cfg.validate(); err != nil {
		return nil, nil, time.Time{}, err
	}
	if err := cfg.validateSelection(sp); err != nil {
		return nil, nil, time.Time{}, err
	}
	client := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r := &runner{cfg: cfg, spec: sp, client: client, st: &state{},
		pace: pacer{interval: time.Duration(float64(time.Second) / cfg.Rate)}}
	start := time.Now()
	rep := &Report{BaseURL: cfg.BaseURL, ContractVersion: sp.doc.Info.Version, ContractSpec: specName(cfg), Store: cfg.Store, SKU: cfg.SKU,
		WriteStore: cfg.WriteStore, StartedAt: start.UTC().Truncate(time.Millisecond)}
	return r, rep, start, nil
}

// send makes one request with its own timeout and reads at most maxBody+1
// bytes of the answer.
func (r *runner) send(ctx context.Context, req request, body []byte) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	return r.exchange(ctx, req.method, req.target(), rd, "application/json", req)
}

// exchange sends one request with its headers and key under its own
// timeout, and reads at most maxBody+1 bytes of the answer.
func (r *runner) exchange(ctx context.Context, method, target string, rd io.Reader, contentType string, req request) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, method, r.cfg.BaseURL+target, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", userAgent)
	if rd != nil && contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	for name, values := range r.cfg.Headers {
		hr.Header[name] = values
	}
	if key := r.keyFor(req); key != "" {
		hr.Header.Set(r.spec.keyHeader, key)
	}
	r.sent++
	resp, err := r.client.Do(hr)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read the response body: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// keyFor returns the key a request sends; the only key lookup.
func (r *runner) keyFor(req request) string {
	switch req.key {
	case keyOwn:
		return r.cfg.Keyring[req.store]
	case keyOther:
		return r.cfg.Keyring[otherStore(r.cfg.Keyring, req.store)]
	case keyUnknown:
		return unknownKey
	}
	return ""
}

// describeKey says in a report which key a request sent, by store.
func (r *runner) describeKey(req request) string {
	switch req.key {
	case keyOwn:
		return "key of store " + req.store
	case keyOther:
		return "key of store " + otherStore(r.cfg.Keyring, req.store)
	case keyUnknown:
		return "unknown key"
	}
	return "no key"
}

// describeTransport turns a failure on the wire into a short message a
// person can act on.
func describeTransport(err error, timeout time.Duration) string {
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()):
		return fmt.Sprintf("no answer within %s (the request timeout)", timeout)
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is StoreLink running at this address?)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before a complete answer"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Sprintf("no answer within %s (the request timeout)", timeout)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "cannot resolve host " + dns.Name
	}
	return err.Error()
}

// maxRetries bounds how often one probe is resent after a 429.
const maxRetries = 3

// defaultRetryWait is the wait after a 429 without a usable Retry-After.
const defaultRetryWait = time.Second

// retryWait reads a 429's Retry-After and reports whether the wait ends
// before the check's deadline.
func retryWait(ctx context.Context, h http.Header, now time.Time) (time.Duration, bool) {
	wait := defaultRetryWait
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			wait = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			wait = max(t.Sub(now), 0)
		}
	}
	if d, ok := ctx.Deadline(); ok && !now.Add(wait).Before(d) {
		return wait, false
	}
	return wait, true
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pacer spaces requests at least interval apart.
type pacer struct {
	interval time.Duration
	next     time.Time
}

func (p *pacer) wait(ctx context.Context) error {
	now := time.Now()
	if d := p.next.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		now = p.next
	}
	p.next = now.Add(p.interval)
	return nil
}
