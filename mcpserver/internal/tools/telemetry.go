package tools

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attribute names of the OpenTelemetry MCP conventions, and this server's
// bounded additions.
const (
	attrMethod          = "mcp.method.name"
	attrToolName        = "gen_ai.tool.name"
	attrOperation       = "gen_ai.operation.name"
	attrSessionID       = "mcp.session.id"
	attrProtocolVersion = "mcp.protocol.version"
	attrErrorType       = "error.type"
	attrTransport       = "network.transport"
	attrPromptName      = "gen_ai.prompt.name"
	// attrErrorCode is the tool's error code, a bounded label.
	attrErrorCode = "storelink.error.code"
	attrCallID    = "storelink.call_id"
	// attrReason is why the SDK refused a call, as a closed set of codes.
	attrReason  = "reason"
	attrOutcome = "outcome"
	// attrLimit is which per-caller limit refused a call (ADR 0036).
	attrLimit = "limit"
)

// limitCalls is the limit label of a call refused by the caller's rate of
// tool calls.
const limitCalls = "calls"

// errorTypeTool is error.type of a call whose result has isError set.
const errorTypeTool = "tool_error"

// otherValue stands for any value outside a bounded set, as the
// conventions use it.
const otherValue = "_OTHER"

// Rejection reasons, the bounded label of the rejected-calls counter.
const (
	rejectUnknownTool   = "unknown_tool"
	rejectUndecodable   = "undecodable_params"
	rejectInvalidParams = "invalid_params"
	rejectOther         = "other"
)

// durationBuckets are the conventions' bucket bounds, in seconds, for the
// operation and session durations.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// instruments are the server's metrics; no-ops without a MeterProvider.
type instruments struct {
	operation  metric.Float64Histogram
	session    metric.Float64Histogram
	rejected   metric.Int64Counter
	auditWrite metric.Float64Histogram
	// rateLimited counts calls refused by a per-caller limit.
	rateLimited metric.Int64Counter
}

func newInstruments(mp metric.MeterProvider) instruments {
	m := telemetry.Meter(mp)
	var in instruments
	// An instrument that cannot be made is a no-op; telemetry never stops
	// the server.
	in.operation, _ = m.Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of the MCP requests the server answered."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.session, _ = m.Float64Histogram("mcp.server.session.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of the MCP sessions, from initialize to their end."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.rejected, _ = m.Int64Counter("storelink.mcp.rejected_calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls refused before any tool ran, by reason code."))
	in.rateLimited, _ = m.Int64Counter("storelink.mcp.rate_limited_calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls refused with RATE_LIMITED because their caller was past its limit, by limit."))
	in.auditWrite, _ = m.Float64Histogram("storelink.audit.write.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to store one audit record, by outcome (ok or error)."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
	return in
}

// callObs is what a tool handler tells the span around it: the call id
// and the error code.
type callObs struct {
	callID string
	code   string
}

type callObsKey struct{}

// noteCall records the call's id and any error code for the span and
// metrics.
func noteCall(ctx context.Context, callID, code string) {
	if o, ok := ctx.Value(callObsKey{}).(*callObs); ok {
		if callID != "" {
			o.callID = callID
		}
		if code != "" {
			o.code = code
		}
	}
}

// propagator reads the W3C trace context a caller puts in params._meta.
var propagator = propagation.TraceContext{}

// metaCarrier reads traceparent and tracestate out of params._meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}
func (m metaCarrier) Set(string, string) {}
func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// paramsMeta is params._meta of req, or nil.
func paramsMeta(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// callerTrace is ctx with the W3C trace context the caller put in
// params._meta, if any.
func callerTrace(ctx context.Context, req mcp.Request) context.Context {
	if meta := paramsMeta(req); len(meta) > 0 {
		return propagator.Extract(ctx, metaCarrier(meta))
	}
	return ctx
}

// observe is the receiving middleware around every MCP request: a server
// span continuing the caller's trace from params._meta, and
// mcp.server.operation.duration. It does not change the answer or error.
func (s *server) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if s.opts.TracerProvider == nil && s.opts.MeterProvider == nil {
			// Telemetry is off: spans and metrics would be no-ops, so only
			// the caller's trace context is kept, for the log lines' and
			// the audit row's trace_id.
			return next(callerTrace(ctx, req), method, req)
		}
		start := time.Now()
		tool, target := "", ""
		if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil {
			// The name is the caller's: only a tool of ours is a label.
			tool = otherValue
			if s.tools[ctr.Params.Name] {
				tool = ctr.Params.Name
			}
			target = audit.ClientName(ctr.Params.Name)
		}
		if gpr, ok := req.(*mcp.GetPromptRequest); ok && gpr.Params != nil {
			target = audit.ClientName(gpr.Params.Name)
		}
		ctx = callerTrace(ctx, req)
		name := method
		if target != "" {
			name += " " + target
		}
		attrs := []attribute.KeyValue{attribute.String(attrMethod, method), attribute.String(attrTransport, s.transport())}
		switch {
		case tool != "":
			attrs = append(attrs, attribute.String(attrToolName, target), attribute.String(attrOperation, "execute_tool"))
		case target != "":
			attrs = append(attrs, attribute.String(attrPromptName, target))
		}
		var version string
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			if id := ss.ID(); id != "" {
				attrs = append(attrs, attribute.String(attrSessionID, id))
			}
			if ip := ss.InitializeParams(); ip != nil {
				version = ip.ProtocolVersion
			}
		}
		if version != "" {
			attrs = append(attrs, attribute.String(attrProtocolVersion, version))
		}
		ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		obs := &callObs{}
		ctx = context.WithValue(ctx, callObsKey{}, obs)

		res, err := next(ctx, method, req)

		errType := ""
		if err != nil {
			errType = otherValue
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				errType = strconv.FormatInt(rpcErr.Code, 10)
			}
			span.SetStatus(codes.Error, errType)
		} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			errType = errorTypeTool
			span.SetStatus(codes.Error, obs.code)
		}
		if errType != "" {
			span.SetAttributes(attribute.String(attrErrorType, errType))
		}
		if obs.code != "" {
			span.SetAttributes(attribute.String(attrErrorCode, obs.code))
		}
		if obs.callID != "" {
			span.SetAttributes(attribute.String(attrCallID, obs.callID))
		}
		span.End()

		if method == "initialize" && err == nil {
			s.watchSession(req, version)
		}
		mattrs := []attribute.KeyValue{attribute.String(attrMethod, method), attribute.String(attrTransport, s.transport())}
		if tool != "" {
			mattrs = append(mattrs, attribute.String(attrToolName, tool))
		}
		if errType != "" {
			mattrs = append(mattrs, attribute.String(attrErrorType, errType))
		}
		if obs.code != "" {
			mattrs = append(mattrs, attribute.String(attrErrorCode, obs.code))
		}
		if version != "" {
			mattrs = append(mattrs, attribute.String(attrProtocolVersion, version))
		}
		s.metrics.operation.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
		return res, err
	}
}

// watchSession records mcp.server.session.duration when the session ends.
func (s *server) watchSession(req mcp.Request, version string) {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return
	}
	start := time.Now()
	go func() {
		_ = ss.Wait()
		attrs := []attribute.KeyValue{attribute.String(attrTransport, s.transport())}
		if version != "" {
			attrs = append(attrs, attribute.String(attrProtocolVersion, version))
		}
		s.metrics.session.Record(context.Background(), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}()
}

// transport is network.transport: "pipe" for stdio, "tcp" for HTTP.
func (s *server) transport() string {
	if s.opts.NetworkTransport != "" {
		return s.opts.NetworkTransport
	}
	return "pipe"
}

// rejectionReason is the bounded code of a refusal by the SDK.
func rejectionReason(err error) string {
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(rpcErr.Message, "unknown tool"):
		return rejectUnknownTool
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
		return rejectInvalidParams
	}
	return rejectOther
}

// recordAuditWrite records how long storing one audit record took.
func (s *server) recordAuditWrite(ctx context.Context, d time.Duration, err error) {
	if s.metrics.auditWrite == nil {
		// A server built without newServer (a benchmark's) has none.
		return
	}
	outcome := auditWriteOK
	if err != nil {
		outcome = auditWriteError
	}
	s.metrics.auditWrite.Record(context.WithoutCancel(ctx), d.Seconds(), outcome)
}

// The outcome attribute of storelink.audit.write.duration, built once: an
// attribute set hashes its attributes, on every call when built per call.
var (
	auditWriteOK    = metric.WithAttributeSet(attribute.NewSet(attribute.String(attrOutcome, "ok")))
	auditWriteError = metric.WithAttributeSet(attribute.NewSet(attribute.String(attrOutcome, "error")))
)

// recordRateLimited counts a call refused by a per-caller limit.
func (s *server) recordRateLimited(ctx context.Context, limit string) {
	if s.metrics.rateLimited == nil {
		return
	}
	s.metrics.rateLimited.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(attribute.String(attrLimit, limit)))
}
