package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// DefaultProxyTimeout bounds one forwarded request, answer included.
const DefaultProxyTimeout = 30 * time.Second

// proxyMemory bounds the orders and open POS walks the proxy remembers for
// rules that span requests; the oldest entry is forgotten first.
const proxyMemory = 1024

// maxFindingPath bounds the request path a finding repeats.
const maxFindingPath = 256

// ProxyConfig configures [NewProxy].
type ProxyConfig struct {
	// Upstream is StoreLink's base URL; request paths are appended.
	Upstream string
	// Findings receives one JSON line per finding, and [Proxy.Close] writes
	// the summary line. Required.
	Findings io.Writer
	// Log receives upstream failures; nil discards them.
	Log *slog.Logger
	// HTTPClient sends the forwarded requests; nil is a plain client.
	// Redirects are never followed; they are returned and reported.
	HTTPClient *http.Client
	// Timeout bounds one forwarded request; 0 is DefaultProxyTimeout.
	Timeout time.Duration
	// Now is the rules' clock; nil is the system clock.
	Now func() time.Time
}

// Proxy forwards requests to StoreLink unchanged and validates each
// request and its answer against the contract and its semantic rules, as
// [Check] does. It is an http.Handler.
type Proxy struct {
	cfg      ProxyConfig
	upstream *url.URL
	spec     *spec
	client   *http.Client

	mu     sync.Mutex
	out    *json.Encoder
	sum    ProxySummary
	causes *causeSet
	raised memory[*sl.OrderRequest]
	walks  memory[*rules.Walk]
	// zones are the stores' timezones seen in store answers.
	zones   memory[*time.Location]
	outErr  error
	closing bool
}

// ProxyFinding is one line of the proxy's findings. It never quotes a
// query, header or body.
type ProxyFinding struct {
	// Type is "finding" (the summary line's is "summary").
	Type string `json:"type"`
	// Time is when the answer was checked, UTC.
	Time time.Time `json:"time"`
	// Operation is the operationId; "" outside the contract.
	Operation string `json:"operation_id"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	// Status is the upstream's status; 0 when not forwarded.
	Status int `json:"status"`
	// Kind is one of the Finding* constants.
	Kind string `json:"kind"`
	// Rule is the semantic rule a FindingRule breaks.
	Rule string `json:"rule,omitempty"`
	// Field is a JSON Pointer into the body, or a header or parameter name.
	Field string `json:"field,omitempty"`
	// Schema locates the broken rule in the contract.
	Schema  string `json:"schema,omitempty"`
	Message string `json:"message"`
	// Count is how many array items had the finding, when more than one.
	Count int `json:"count,omitempty"`
	// Cause is the id of the finding's cause.
	Cause string `json:"cause"`
}

// ProxySummary counts what the proxy saw; it is the findings' last line.
type ProxySummary struct {
	// Requests counts the requests received, forwarded or not.
	Requests int `json:"requests"`
	// Findings counts the findings written.
	Findings int `json:"findings"`
	// Unanswered counts requests StoreLink did not answer; they are no
	// finding.
	Unanswered int `json:"unanswered"`
	// Operations counts requests and findings per operationId.
	Operations map[string]*OperationCount `json:"operations"`
	// ByKind counts findings per kind, ByRule per semantic rule id.
	ByKind map[string]int `json:"by_kind"`
	ByRule map[string]int `json:"by_rule"`
	// Causes group the findings by root cause, as in a check's report.
	Causes []Cause `json:"causes"`
}

// OperationCount is one operation's line of a [ProxySummary].
type OperationCount struct {
	Requests int `json:"requests"`
	Findings int `json:"findings"`
}

// memory is a bounded map that forgets its oldest entry first.
type memory[V any] struct {
	m     map[string]V
	order []string
}

func (m *memory[V]) put(k string, v V) {
	if m.m == nil {
		m.m = map[string]V{}
	}
	if _, ok := m.m[k]; !ok {
		m.order = append(m.order, k)
	}
	m.m[k] = v
	for len(m.order) > proxyMemory {
		delete(m.m, m.order[0])
		m.order = m.order[1:]
	}
}

func (m *memory[V]) get(k string) (V, bool) {
	v, ok := m.m[k]
	return v, ok
}

// NewProxy prepares a proxy to the StoreLink at cfg.Upstream.
func NewProxy(cfg ProxyConfig) (*Proxy, error) {
	if cfg.Findings == nil {
		return nil, errors.New("proxy: no writer for the findings")
	}
	u, err := ParseUpstream(cfg.Upstream)
	if err != nil {
		return nil, err
	}
	sp, err := loadSpec()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultProxyTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	// Otherwise Go's transport would add gzip and unpack the answer.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	client := &http.Client{Transport: tr}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Proxy{cfg: cfg, upstream: u, spec: sp, client: client, out: json.NewEncoder(cfg.Findings),
		sum:    ProxySummary{Operations: map[string]*OperationCount{}, ByKind: map[string]int{}, ByRule: map[string]int{}},
		causes: newCauseSet()}, nil
}

// ParseUpstream checks an upstream base URL: absolute http or https, with
// a host, and no query or fragment, since request paths are appended.
func ParseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--upstream: want StoreLink's base URL, http(s)://host[:port][/prefix]")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("--upstream: the base URL takes no query, fragment or credentials")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// IsLoopback reports whether a listen address binds only the loopback
// interface; an empty host binds every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Summary returns a copy of the counts so far.
func (p *Proxy) Summary() ProxySummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sum
	s.Operations = map[string]*OperationCount{}
	for k, v := range p.sum.Operations {
		c := *v
		s.Operations[k] = &c
	}
	s.ByKind, s.ByRule = maps.Clone(p.sum.ByKind), maps.Clone(p.sum.ByRule)
	s.Causes = p.causes.list()
	return s
}

// Close writes the summary line and returns the summary, with the first
// error writing the findings. Call it once no request is in flight.
func (p *Proxy) Close() (ProxySummary, error) {
	s := p.Summary()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closing = true
	if err := p.out.Encode(struct {
		Type    string       `json:"type"`
		Time    time.Time    `json:"time"`
		Summary ProxySummary `json:"summary"`
	}{"summary", time.Now().UTC(), s}); err != nil && p.outErr == nil {
		p.outErr = err
	}
	return s, p.outErr
}

// exchange is one request as the proxy checks it.
type exchange struct {
	op     string
	method string
	path   string
	req    request
	body   []byte
	// expect is what the contract lets StoreLink answer this request.
	expect []int
	// key is the request's key, so no message repeats it.
	key string
}

// ServeHTTP forwards one request and checks it and its answer.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{method: r.Method, path: r.URL.Path, key: r.Header.Get(p.spec.keyHeader)}
	if len(x.path) > maxFindingPath {
		x.path = x.path[:maxFindingPath] + "..."
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		p.count(x)
		writeProxyError(w, http.StatusBadRequest, "request_unreadable", "the proxy could not read the request body")
		return
	}
	if len(body) > 0 {
		x.body = body
	}
	route := p.judgeRequest(r, x)
	p.count(x)
	if len(body) > maxBody {
		p.emit(x, 0, []Finding{{Kind: FindingRequest, Message: fmt.Sprintf("request body larger than %d MiB; not forwarded", maxBody>>20)}})
		writeProxyError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("the proxy forwards request bodies up to %d MiB", maxBody>>20))
		return
	}

	status, header, respBody, err := p.forward(r, body)
	if err != nil {
		p.mu.Lock()
		p.sum.Unanswered++
		p.mu.Unlock()
		p.cfg.Log.Warn("storelink gave no answer", "operation_id", x.op, "method", x.method, "path", x.path, "error", err.Error())
		writeProxyError(w, http.StatusBadGateway, "upstream_unreachable", "StoreLink gave no answer through the proxy")
		return
	}
	if len(respBody) > maxBody {
		p.emit(x, status, []Finding{{Kind: FindingBody, Message: fmt.Sprintf("response body larger than %d MiB; not forwarded", maxBody>>20)}})
		writeProxyError(w, http.StatusBadGateway, "upstream_too_large",
			fmt.Sprintf("StoreLink's answer is larger than the %d MiB the proxy forwards", maxBody>>20))
		return
	}
	for name, values := range header {
		if !hopByHop(name) {
			w.Header()[name] = values
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(respBody)

	if route {
		p.judgeResponse(r.Context(), x, status, header, respBody)
	}
}

// count records one request of an operation.
func (p *Proxy) count(x *exchange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sum.Requests++
	p.opCount(x.op).Requests++
}

func (p *Proxy) opCount(op string) *OperationCount {
	c := p.sum.Operations[op]
	if c == nil {
		c = &OperationCount{}
		p.sum.Operations[op] = c
	}
	return c
}

// emit writes findings as JSON lines and counts them.
func (p *Proxy) emit(x *exchange, status int, fs []Finding) {
	if len(fs) == 0 {
		return
	}
	now := time.Now().UTC()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.causes.addAll(x.op, x.method+" "+x.path, fs)
	for _, f := range fs {
		line := ProxyFinding{Type: "finding", Time: now, Operation: x.op, Method: x.method, Path: x.path, Status: status,
			Kind: f.Kind, Rule: f.Rule, Field: f.Path, Schema: f.Schema, Message: f.Message, Count: f.Count, Cause: causeID(f)}
		if x.key != "" {
			// Never repeat the key, even if the upstream echoed it.
			line.Message = strings.ReplaceAll(line.Message, x.key, Redacted)
			line.Field = strings.ReplaceAll(line.Field, x.key, Redacted)
		}
		if isMore(f) {
			line.Cause = ""
		}
		p.sum.Findings++
		p.opCount(x.op).Findings++
		p.sum.ByKind[f.Kind]++
		if f.Rule != "" {
			p.sum.ByRule[f.Rule]++
		}
		if p.closing {
			continue
		}
		if err := p.out.Encode(line); err != nil && p.outErr == nil {
			p.outErr = err
		}
	}
}

// OperationIDs lists the summary's operations in name order, for printing.
func (s ProxySummary) OperationIDs() []string { return slices.Sorted(maps.Keys(s.Operations)) }
