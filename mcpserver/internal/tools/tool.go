package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
	"github.com/korral/storelink/mcpserver/internal/workers"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ErrorBody is a failure the model can act on: a code from a closed set, a
// message, and what to do next.
type ErrorBody struct {
	Code              string `json:"code"`
	Message           string `json:"message"`
	Remediation       string `json:"remediation"`
	RetryAfterSeconds int    `json:"retry_after_seconds,omitempty"`
	IncidentID        string `json:"incident_id,omitempty"`
}

// errorBody turns an error into what the model reads; a code without its
// own remediation gets the code's default.
func errorBody(e *apperr.Error) ErrorBody {
	b := ErrorBody{Code: string(e.Code), Message: e.Message, Remediation: e.Remediation, RetryAfterSeconds: e.RetryAfterSeconds, IncidentID: e.IncidentID}
	if b.Remediation == "" {
		b.Remediation = apperr.DefaultRemediation(e.Code)
	}
	return b
}

// storeError is one store's error in an answer about several; the call
// goes on, so an internal fault is logged here.
func (s *server) storeError(ctx context.Context, c *call, storeID string, err error) *ErrorBody {
	e := apperr.From(err)
	if e.Code == apperr.InternalError {
		s.log.ErrorContext(ctx, "tool.internal", "call_id", c.id, "tool", c.tool, "store_id", storeID, "incident_id", e.IncidentID, "cause", causeText(e))
	}
	b := errorBody(e)
	return &b
}

// failure is the envelope of a tool error, sent as text only (ADR 0012).
// It carries the demo notice, as a failure has no data.
type failure struct {
	OK         bool      `json:"ok"`
	Error      ErrorBody `json:"error"`
	DemoNotice string    `json:"demo_notice,omitempty"`
}

// call is what a handler knows about the tool call it serves.
type call struct {
	id      string
	tool    string
	client  string
	session string
	// storeID and sku are filled by the handler for the audit trail.
	storeID string
	sku     string
	// summary is the buyer-readable sentence for the audit trail.
	summary string
	// req is the call as it came, for host consent.
	req *mcp.CallToolRequest
}

// toolSpec is one tool: its definition, the schema details inference
// cannot express, and its handler.
type toolSpec[In, Out any] struct {
	tool  *mcp.Tool
	shape func(props map[string]*jsonschema.Schema)
	// outShape adds closed sets and bounds to the output schema.
	outShape func(out *jsonschema.Schema)
	handle   func(ctx context.Context, c *call, in In) (*Out, error)
}

// register adds a tool behind the common wrapper: it validates arguments
// (a bad one is an INVALID_ARGUMENT envelope, not a protocol error), gives
// the call an id for its log lines, maps errors to the taxonomy, and writes
// the log and audit lines. The schemas the tool list shows come from
// schemas.gen.go when it holds this configuration's (schemas.go); the
// input schema the arguments are checked against is built on the first
// call.
func register[In, Out any](ms *mcp.Server, s *server, spec toolSpec[In, Out]) {
	t := *spec.tool
	in, out := s.schemas(t.Name, func() (in, out *jsonschema.Schema) { return buildSchemas(s, spec) })
	s.tools[t.Name] = true
	checker := sync.OnceValue(func() *argChecker[In] { return newArgChecker(spec) })

	serve := func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		start := time.Now()
		c := s.newCall(req, t.Name)
		ctx = callid.With(ctx, c.id)
		noteCall(ctx, c.id, "")
		// At debug only: the line that ends the call carries the same
		// fields (ADR 0046).
		s.log.LogAttrs(ctx, slog.LevelDebug, "tool.start", slog.String("call_id", c.id), slog.String("tool", t.Name),
			slog.String("client", c.client), slog.String("session", c.session))

		var data *Out
		input, aerr := checker().decode(req.Params.Arguments)
		if aerr == nil {
			var herr error
			data, herr = runHandler(ctx, spec.handle, c, input)
			var ask *inputRequired
			if errors.As(herr, &ask) {
				return s.askHost(ctx, c, ask, time.Since(start))
			}
			if herr != nil {
				aerr = apperr.From(stateUnavailable(herr))
			}
		}
		elapsed := time.Since(start)
		if aerr != nil {
			return s.fail(ctx, c, aerr, elapsed)
		}
		return s.succeed(ctx, c, data, elapsed)
	}
	addTool(ms, &t, in, out, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var res *mcp.CallToolResult
		callRunners.Do(func() { res = serve(ctx, req) })
		return res, nil
	})
}

// callRunners run the tool calls: the SDK starts a goroutine per request,
// and a call's work (the StoreLink reads and decodes, the answer's
// encoding, the audit row) would grow that goroutine's stack several times
// over, on every call; a worker keeps its grown stack.
var callRunners = workers.New()

// newCall identifies a tool call: call id, session and caller.
func (s *server) newCall(req *mcp.CallToolRequest, tool string) *call {
	c := &call{id: callid.New(), tool: tool, req: req}
	if req.Session != nil {
		c.session = req.Session.ID()
		if c.session == "" {
			// stdio sessions have no protocol id; one process is one session.
			c.session = s.opts.SessionName
		}
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			c.client = audit.ClientName(p.ClientInfo.Name)
		}
	}
	// Over HTTP the bearer token's label or "oauth:SUB" names the caller;
	// the client's own name is unverified and kept only beside it.
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		who := req.Extra.TokenInfo.UserID
		if !strings.HasPrefix(who, "oauth:") {
			who = "token:" + who
		}
		if c.client != "" {
			who += " (" + c.client + ")"
		}
		c.client = who
	}
	return c
}

// auditRejected records tool calls the SDK refuses before any handler runs
// (an unknown tool name, say). Registered tools never return an error, so
// an error here comes from before the handlers.
func (s *server) auditRejected(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		start := time.Now()
		res, err := next(ctx, method, req)
		ctr, ok := req.(*mcp.CallToolRequest)
		if err == nil || !ok || ctr.Params == nil {
			return res, err
		}
		// The name is the caller's, unchecked: keep it escaped and bounded.
		c := s.newCall(ctr, audit.ClientName(ctr.Params.Name))
		reason := textsafe.Bound(err.Error(), audit.MaxReason)
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			reason = fmt.Sprintf("%s (JSON-RPC %d)", reason, rpcErr.Code)
		}
		s.recordRejected(ctx, c, reason, rejectionReason(err), time.Since(start))
		return res, err
	}
}

// recordRejected logs and audits a tool call refused before any handler ran.
func (s *server) recordRejected(ctx context.Context, c *call, reason, code string, elapsed time.Duration) {
	ctx = callid.With(ctx, c.id)
	noteCall(ctx, c.id, "")
	if s.metrics.rejected != nil {
		s.metrics.rejected.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(attribute.String(attrReason, code)))
	}
	s.log.WarnContext(ctx, "tool.rejected", "call_id", c.id, "tool", c.tool, "client", c.client, "session", c.session, "reason", reason)
	s.audit(ctx, c, "error", string(apperr.InvalidArgument), fmt.Sprintf("Call refused before any tool ran: %s.", reason), elapsed)
}

// Rejections records tools/call requests the SDK cannot decode (a name that
// is not a string, params that are not an object); the transports hand
// them here.
type Rejections struct{ s *server }

// NewRejections returns the recorder for the server built from opts.
func NewRejections(opts Options) *Rejections { return &Rejections{s: newServer(opts)} }

// Record logs `tool.rejected` and audits a refused call of tool. client and
// session are unverified and are escaped and bounded here.
func (r *Rejections) Record(ctx context.Context, tool, reason, client, session string) {
	c := &call{id: callid.New(), tool: tool, client: audit.ClientName(client), session: audit.ClientName(session)}
	r.s.recordRejected(ctx, c, reason, rejectUndecodable, 0)
}

// runHandler turns a handler panic into an internal error.
func runHandler[In, Out any](ctx context.Context, h func(context.Context, *call, In) (*Out, error), c *call, in In) (out *Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in %s: %v", c.tool, r)
		}
	}()
	out, err = h(ctx, c, in)
	if err == nil && out == nil {
		err = fmt.Errorf("%s returned no data", c.tool)
	}
	return out, err
}

// decodeArgs validates the raw arguments against the tool's schema, applies
// defaults and decodes strictly; nothing is repaired.
func decodeArgs[In any](raw json.RawMessage, resolved *jsonschema.Resolved, allowed []string) (In, *apperr.Error) {
	var zero In
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return zero, apperr.New(apperr.InvalidArgument, "arguments must be a JSON object", "Send the arguments as an object with the documented fields.")
		}
	}
	var unknown []string
	for name := range args {
		if !slices.Contains(allowed, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		accepted := "none"
		if len(allowed) > 0 {
			accepted = strings.Join(allowed, ", ")
		}
		return zero, apperr.New(apperr.InvalidArgument,
			fmt.Sprintf("unknown argument(s): %s", strings.Join(unknown, ", ")),
			fmt.Sprintf("Remove them; this tool accepts only: %s.", accepted))
	}
	var v any = args
	if err := resolved.ApplyDefaults(&v); err != nil {
		return zero, apperr.New(apperr.InvalidArgument, "arguments could not be completed with defaults: "+err.Error(), "Send the arguments as documented.")
	}
	if err := resolved.Validate(&v); err != nil {
		return zero, invalidArgs(resolved.Schema(), args, err)
	}
	b, _ := json.Marshal(v)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&zero); err != nil {
		return zero, apperr.New(apperr.InvalidArgument, "invalid arguments: "+err.Error(), "Correct the value as the tool's input schema describes and call again.")
	}
	return zero, nil
}

// tidyValidation keeps the validator's explanation but drops schema internals
// the model cannot use.
func tidyValidation(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "validating root: ", "")
	msg = strings.ReplaceAll(msg, "validating /properties/", "")
	if len(msg) > 400 {
		msg = msg[:400] + "..."
	}
	return msg
}

func (s *server) succeed(ctx context.Context, c *call, data any, elapsed time.Duration) *mcp.CallToolResult {
	b, err := successEnvelope(data, s.opts.EmbeddedDemo)
	if err != nil {
		return s.fail(ctx, c, apperr.From(fmt.Errorf("encode %s result: %w", c.tool, err)), elapsed)
	}
	s.end(ctx, c, slog.LevelInfo, "tool.ok", "ok", "", c.summary, elapsed)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// askHost answers input_required: the client asks its user and retries.
// Nothing was sent.
func (s *server) askHost(ctx context.Context, c *call, ask *inputRequired, elapsed time.Duration) *mcp.CallToolResult {
	s.end(ctx, c, slog.LevelInfo, "tool.input_required", "ok", "", c.summary, elapsed)
	return &mcp.CallToolResult{InputRequests: ask.requests, RequestState: ask.state}
}

// successPrefix opens every success envelope: success[T]{OK: true}
// marshals to it, then the data, then "}" (TestSuccessEnvelopeIsWhatSuccessMarshalsTo).
const successPrefix = `{"ok":true,"data":`

// successEnvelope is the JSON of success{OK: true, Data: data}, with the demo
// notice last when demo is set. The data is encoded once and copied behind
// the prefix, to avoid re-compacting it (docs/benchmarks.md).
func successEnvelope(data any, demo bool) ([]byte, error) {
	d, err := marshalData(data)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(successPrefix)+len(d)+len(DemoNotice)+len(`,"demo_notice":""}`)+1)
	b = append(b, successPrefix...)
	if demo {
		if b, err = appendDemoNotice(b, d); err != nil {
			return nil, err
		}
	} else {
		b = append(b, d...)
	}
	return append(b, '}'), nil
}

func (s *server) fail(ctx context.Context, c *call, e *apperr.Error, elapsed time.Duration) *mcp.CallToolResult {
	if e.Code == apperr.InternalError {
		// The cause may hold anything; it goes to the log only.
		s.log.ErrorContext(ctx, "tool.internal", "call_id", c.id, "tool", c.tool, "incident_id", e.IncidentID, "cause", causeText(e))
	}
	if e.Code == apperr.StateUnavailable {
		s.log.ErrorContext(ctx, "tool.state_unavailable", "call_id", c.id, "tool", c.tool, "cause", causeText(e))
	}
	body := errorBody(e)
	noteCall(ctx, "", body.Code)
	b, _ := json.Marshal(failure{Error: body, DemoNotice: s.demoNotice()})
	summary := fmt.Sprintf("%s failed: %s.", c.tool, body.Message)
	s.end(ctx, c, slog.LevelWarn, "tool.err", "error", body.Code, summary, elapsed,
		slog.String("error_code", body.Code), slog.String("error_message", body.Message))
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}
}

// end writes the one line that ends a tool call (tool.ok, tool.err,
// tool.input_required) and records the call's audit row. The line carries
// the row's fields and the call's StoreLink requests, so a call writes one
// line at info, not two (ADR 0046); extra goes before duration_ms.
func (s *server) end(ctx context.Context, c *call, level slog.Level, msg, outcome, code, summary string, elapsed time.Duration, extra ...slog.Attr) {
	n, slowest := callid.Requests(ctx)
	var buf [12]slog.Attr
	attrs := append(buf[:0], slog.String("call_id", c.id), slog.String("tool", c.tool), slog.String("client", c.client),
		slog.String("session", c.session), slog.String("store_id", c.storeID), slog.String("sku", c.sku))
	attrs = append(attrs, extra...)
	attrs = append(attrs, slog.Float64("duration_ms", ms(elapsed)), slog.Int("upstream_requests", n),
		slog.Float64("upstream_slowest_ms", ms(slowest)), slog.String("summary", summary))
	logLine(ctx, s.log, level, msg, attrs)
	s.recordAudit(ctx, c, outcome, code, summary, elapsed)
}

// logLine writes one line as Logger.LogAttrs does, but without looking up
// the caller's program counter, which only a handler with AddSource prints:
// none of ours does (cli's logger), and runtime.Callers cost about 2% of a
// trivial call's CPU (docs/benchmarks.md, run H).
func logLine(ctx context.Context, l *slog.Logger, level slog.Level, msg string, attrs []slog.Attr) {
	h := l.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}

// audit writes the "audit" log line and records the audit row, for what
// is audited without a tool call's own end line: a call refused before any
// tool ran, and prompts/get.
func (s *server) audit(ctx context.Context, c *call, outcome, code, summary string, elapsed time.Duration) {
	logLine(ctx, s.log, slog.LevelInfo, "audit", []slog.Attr{slog.String("call_id", c.id), slog.String("client", c.client),
		slog.String("session", c.session), slog.String("tool", c.tool), slog.String("store_id", c.storeID),
		slog.String("sku", c.sku), slog.String("outcome", outcome), slog.String("error_code", code),
		slog.String("summary", summary)})
	s.recordAudit(ctx, c, outcome, code, summary, elapsed)
}

// recordAudit records a call's audit row.
func (s *server) recordAudit(ctx context.Context, c *call, outcome, code, summary string, elapsed time.Duration) {
	e := AuditEvent{
		Time: s.opts.Now().UTC(), CallID: c.id, Client: c.client, Session: c.session, Tool: c.tool,
		StoreID: c.storeID, SKU: c.sku, Outcome: outcome, ErrorCode: code, Summary: summary, DurationMS: ms(elapsed),
		TraceID: telemetry.TraceID(ctx),
	}
	if s.opts.Audit == nil {
		return
	}
	started := time.Now()
	err := s.opts.Audit.Record(ctx, e)
	s.recordAuditWrite(ctx, time.Since(started), err)
	if err != nil {
		s.log.ErrorContext(ctx, "audit.write_failed", "call_id", c.id, "error", err.Error())
	}
}

func causeText(e *apperr.Error) string {
	if e.Cause == nil {
		return e.Message
	}
	return e.Cause.Error()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ptr[T any](v T) *T { return &v }
