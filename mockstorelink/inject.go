package mockstorelink

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// This file serves requests while faults are armed.

// serveFaulty applies the armed faults around the contract-checked API.
func (s *Server) serveFaulty(w http.ResponseWriter, r *http.Request, rt *routed) {
	op, store := rt.operation, rt.storeID
	fired := func(f Fault) {
		s.log.Info("fault injected", "kind", f.Kind, "operation", op, "store_id", store)
	}
	if f, ok := s.faults.take(FaultLatency, op, store); ok {
		fired(f)
		if !s.wait(r.Context(), f.Delay) {
			return
		}
	}
	if f, ok := s.faults.take(FaultHang, op, store); ok {
		fired(f)
		bound := f.Delay
		if bound <= 0 {
			bound = DefaultHangBound
		}
		if !s.wait(r.Context(), bound) {
			return // the client gave up: nobody to answer
		}
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the request was held and released")
		return
	}
	if f, ok := s.faults.take(FaultRateLimit, op, store); ok {
		fired(f)
		retry := f.RetryAfter
		if retry == 0 {
			retry = 1
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		writeError(w, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded")
		return
	}
	if f, ok := s.faults.take(FaultStatus, op, store); ok {
		fired(f)
		status := f.Status
		if status == 0 {
			status = http.StatusServiceUnavailable
		}
		code := "unavailable"
		if status != http.StatusServiceUnavailable {
			code = "internal"
		}
		writeError(w, status, code, "injected failure")
		return
	}
	if f, ok := s.faults.take(FaultErrorIn200, op, store); ok {
		fired(f)
		writeError(w, http.StatusOK, "internal", "the store system did not answer in time")
		return
	}
	if !s.faults.armed(op, store, FaultMalformedJSON, FaultOversized, FaultDriftRenameField,
		FaultDriftWrongType, FaultDriftMissingField, FaultDriftFieldValue, FaultDriftUndeclaredStatus, FaultDriftWrongAuthStatus) {
		s.serveChecked(w, r, rt)
		return
	}
	c := newCapture()
	s.serveChecked(c, r, rt)
	padding := s.applyDrift(c, rt, fired)
	c.writeTo(w, padding)
}

// wait sleeps for d; it returns false when the client left first. A server
// shutting down cuts the wait short and lets the request finish.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.closing:
		return true
	case <-ctx.Done():
		return false
	}
}

// applyDrift rewrites a captured response with the armed post-response
// faults. It returns how many padding bytes an oversized fault asks for.
func (s *Server) applyDrift(c *capture, rt *routed, fired func(Fault)) (padding int) {
	op, store := rt.operation, rt.storeID
	status := c.statusCode()
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		if f, ok := s.faults.take(FaultDriftWrongAuthStatus, op, store); ok {
			fired(f)
			switch {
			case f.Status != 0:
				c.status = f.Status
			case status == http.StatusForbidden:
				c.status = http.StatusNotFound
				c.setJSON(errorBody("not_found", "store "+store+" not found"))
			default:
				c.status = http.StatusOK
			}
		}
	}
	if status >= 200 && status < 300 {
		s.setField(c, op, store, fired)
	}
	if d, ok := drifts[op]; ok && status >= 200 && status < 300 {
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(c.body.Bytes()))
		dec.UseNumber()
		if dec.Decode(&obj) == nil {
			changed := false
			if v, has := obj[d.rename]; has {
				if f, ok := s.faults.take(FaultDriftRenameField, op, store); ok {
					fired(f)
					delete(obj, d.rename)
					obj[d.renameTo] = v
					changed = true
				}
			}
			if v, has := obj[d.wrongType]; has {
				if f, ok := s.faults.take(FaultDriftWrongType, op, store); ok {
					fired(f)
					obj[d.wrongType] = wrongTyped(v)
					changed = true
				}
			}
			if _, has := obj[d.missing]; has {
				if f, ok := s.faults.take(FaultDriftMissingField, op, store); ok {
					fired(f)
					delete(obj, d.missing)
					changed = true
				}
			}
			if changed {
				c.setJSON(obj)
			}
		}
	}
	if f, ok := s.faults.take(FaultDriftUndeclaredStatus, op, store); ok {
		fired(f)
		c.status = f.Status
		if c.status == 0 {
			c.status = http.StatusTeapot
		}
	}
	if f, ok := s.faults.take(FaultMalformedJSON, op, store); ok {
		fired(f)
		c.body.Truncate(c.body.Len() / 2)
	}
	if f, ok := s.faults.take(FaultOversized, op, store); ok {
		fired(f)
		padding = f.Bytes
		if padding == 0 {
			padding = DefaultOversizedBytes
		}
	}
	return padding
}

// setField applies an armed FaultDriftFieldValue to a successful response
// whose body is a JSON object; other bodies leave the fault armed.
func (s *Server) setField(c *capture, op, store string, fired func(Fault)) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(c.body.Bytes(), &obj) != nil || obj == nil {
		return
	}
	f, ok := s.faults.take(FaultDriftFieldValue, op, store)
	if !ok {
		return
	}
	fired(f)
	obj[f.Field] = f.Value
	c.setJSON(obj)
}

// capture buffers a response so it can be validated or rewritten before it
// is sent.
type capture struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newCapture() *capture { return &capture{header: http.Header{}} }

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}

func (c *capture) statusCode() int {
	if c.status == 0 {
		return http.StatusOK
	}
	return c.status
}

func (c *capture) setJSON(v any) {
	c.body.Reset()
	enc := json.NewEncoder(&c.body)
	_ = enc.Encode(v)
}

// writeTo sends the captured response. padding > 0 inserts that many junk
// bytes as the first member of a JSON object body.
func (c *capture) writeTo(w http.ResponseWriter, padding int) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(c.statusCode())
	body := c.body.Bytes()
	if padding <= 0 {
		_, _ = w.Write(body)
		return
	}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	pad := func() {
		for n := padding; n > 0; n -= len(chunk) {
			if _, err := w.Write(chunk[:min(n, len(chunk))]); err != nil {
				return
			}
		}
	}
	rest, isObject := bytes.CutPrefix(bytes.TrimSpace(body), []byte("{"))
	if !isObject {
		// Not an object: no member to hide the junk in, so it trails.
		_, _ = w.Write(body)
		pad()
		return
	}
	_, _ = w.Write([]byte(`{"padding":"`))
	pad()
	if r := bytes.TrimSpace(rest); len(r) > 0 && r[0] == '}' {
		_, _ = w.Write([]byte(`"}`))
		return
	}
	_, _ = w.Write([]byte(`",`))
	_, _ = w.Write(rest)
}
