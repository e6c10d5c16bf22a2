package storelinkclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on what an error keeps from a response body.
const (
	maxMessageBytes = 500
	maxCodeBytes    = 64
	// maxRetryAfter is the spec's ceiling; it also prevents overflow.
	maxRetryAfter = 24 * time.Hour
)

// ErrMalformedResponse reports a success status whose body could not be
// used. Test for it with errors.Is.
var ErrMalformedResponse = errors.New("storelink: malformed response")

// APIError is a failure answer: a non-2xx status, or a 2xx with an error
// envelope.
type APIError struct {
	// StatusCode is the HTTP status; 200 (or another 2xx) when ErrorInSuccess
	// is set.
	StatusCode int
	// Code is StoreLink's machine-readable error code, such as "not_found";
	// empty when the body was not an error envelope.
	Code string
	// Message is StoreLink's explanation, single-line, at most 500 bytes;
	// empty when the body was not an error envelope (other bodies may echo
	// the key and are never copied).
	Message string
	// RetryAfter is how long StoreLink asked the caller to wait, from the
	// Retry-After header of a 429 or 503 (delay-seconds or HTTP-date form,
	// capped at 24 hours); zero when absent or unreadable.
	RetryAfter time.Duration
	// ErrorInSuccess is set when a success status carried an error body.
	ErrorInSuccess bool
	// OtherJSON is set when a failure's body is JSON but not StoreLink's
	// error object, such as {"detail": "Not Found"}; Code is then empty.
	OtherJSON bool
	// BodyProperties names the top-level properties of such a body, sorted,
	// at most 10 of at most 64 bytes; never values.
	BodyProperties []string
}

// Error returns a single line such as
// "storelink: 404 not_found: sku 1234567 not found". It carries no header
// values, so no store key.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("storelink: ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	switch {
	case e.Code != "":
		b.WriteString(" ")
		b.WriteString(e.Code)
	case e.Message == "":
		if text := http.StatusText(e.StatusCode); text != "" {
			b.WriteString(" ")
			b.WriteString(text)
		}
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.ErrorInSuccess {
		b.WriteString(" (error body on a success status)")
	}
	return b.String()
}

// Temporary reports whether the same request may succeed later: true for 429
// and 5xx.
func (e *APIError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || (e.StatusCode >= 500 && e.StatusCode <= 599)
}

// CheckResponse returns an *APIError when resp is a failure: a non-2xx
// status, or a 2xx status whose body (already read into body) is the error
// envelope {"error": {...}}. It returns nil for a usable success. The
// request's store key is redacted from the message.
func CheckResponse(resp *http.Response, body []byte) error {
	if resp == nil {
		return errors.New("storelink: no response to check")
	}
	success := resp.StatusCode >= 200 && resp.StatusCode <= 299
	code, message, isEnvelope := parseEnvelope(body, !success)
	if success && !isEnvelope {
		return nil
	}
	key := ""
	if resp.Request != nil {
		key = resp.Request.Header.Get(StoreKeyHeader)
	}
	e := &APIError{
		StatusCode:     resp.StatusCode,
		Code:           clean(code, key, maxCodeBytes),
		Message:        clean(message, key, maxMessageBytes),
		ErrorInSuccess: success,
	}
	if e.Code == "" && !success {
		e.OtherJSON, e.BodyProperties = otherJSON(body, key)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter = retryAfter(resp.Header, time.Now())
	}
	return e
}

// parseEnvelope extracts code and message from {"error": {"code", "message"}}.
// On a success status a substring test avoids decoding large bodies twice;
// no success schema has an "error" property.
func parseEnvelope(body []byte, failure bool) (code, message string, ok bool) {
	if !failure && !bytes.Contains(body, []byte(`"error"`)) {
		return "", "", false
	}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Error) == 0 || string(env.Error) == "null" {
		return "", "", false
	}
	var detail struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(env.Error, &detail) != nil {
		// A bare string, {"error": "boom"}, still says what went wrong.
		var text string
		if json.Unmarshal(env.Error, &text) == nil {
			return "", text, true
		}
		return "", "", true
	}
	return detail.Code, detail.Message, true
}

// Bounds on the property names an APIError keeps from a foreign JSON body.
const (
	maxBodyProperties   = 10
	maxBodyPropertyName = 64
)

// otherJSON reports whether body is JSON, and for an object the names of
// its properties, sorted and bounded.
func otherJSON(body []byte, key string) (bool, []string) {
	if !json.Valid(body) {
		return false, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || len(obj) == 0 {
		return true, nil
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, clean(name, key, maxBodyPropertyName))
	}
	slices.Sort(names)
	return true, names[:min(len(names), maxBodyProperties)]
}

// clean redacts key, turns control characters into spaces and cuts s to
// limit bytes on a rune boundary. Redaction comes first so a cut cannot
// leave part of the key.
func clean(s, key string, limit int) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	s = strings.Map(func(r rune) rune {
		if isControl(r) || (r >= 0x80 && r <= 0x9f) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.TrimSpace(s)
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// retryAfter reads Retry-After in either RFC 9110 form; an HTTP-date is
// measured against the response's Date header when present, to ignore
// clock skew.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		if secs > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		if date, err := http.ParseTime(h.Get("Date")); err == nil {
			now = date
		}
		d = at.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// Response is satisfied by the result of each generated *WithResponse method
// whose documented success body is a T, for example *GetInventoryResponse for
// Inventory. Only this package's types implement it.
type Response[T any] interface {
	StatusCode() int
	GetBody() []byte
	// okBody is the decoded body of the documented success status.
	okBody() *T
	// rawResponse returns the HTTP response; nil on a nil receiver.
	rawResponse() *http.Response
	// operation names the spec operation and its success status; it must
	// work on a nil receiver.
	operation() (id string, okStatus int)
	// walked is what the generated parse's decode found in the body
	// (decodeBody); nil when the response was built elsewhere.
	walked() *Fields
}

// Result turns what a generated *WithResponse method returned into its typed
// success body or an error. It never returns a nil value with a nil error.
// The error is:
//   - err itself when the call failed in transport (also ErrResponseTooLarge
//     from [WithResponseLimit]);
//   - ErrMalformedResponse, wrapped with the operation's name, when a body
//     did not decode, was not JSON, or came with an unexpected success status;
//   - the *APIError of [CheckResponse] for any failure status and for a
//     success status with an error body.
//
// A failure whose body the generated decoder cannot read also ends as
// ErrMalformedResponse.
func Result[T any, R Response[T]](resp R, err error) (*T, error) {
	v, _, err := ResultWithProblems(resp, err)
	return v, err
}

// ResultWithProblems is [Result] that also returns the success body's
// [FieldProblems] from the same walk. They come with the value or with a
// *MissingFieldError; on every other error they are nil.
func ResultWithProblems[T any, R Response[T]](resp R, err error) (*T, []FieldProblem, error) {
	v, fields, err := ResultWithFields(resp, err)
	return v, fields.Problems, err
}

// ResultWithFields is [ResultWithProblems] that also returns the properties
// the success body leaves out ([Fields.Absent]). They come with the value or
// with a *MissingFieldError; on every other error they are empty.
func ResultWithFields[T any, R Response[T]](resp R, err error) (*T, Fields, error) {
	op, okStatus := resp.operation()
	if err != nil {
		if isDecodeError(err) {
			return nil, Fields{}, fmt.Errorf("%w from %s: %w", ErrMalformedResponse, op, err)
		}
		return nil, Fields{}, err
	}
	raw := resp.rawResponse()
	if raw == nil {
		return nil, Fields{}, fmt.Errorf("storelink: %s: no HTTP response", op)
	}
	if err := CheckResponse(raw, resp.GetBody()); err != nil {
		return nil, Fields{}, err
	}
	v := resp.okBody()
	if v != nil {
		// The parse walked the body when it decoded it; a response built
		// elsewhere is walked here.
		var fields Fields
		if f := resp.walked(); f != nil {
			fields = *f
		} else {
			fields = BodyFields(resp.GetBody(), v)
		}
		if names := missing(fields.Problems); len(names) > 0 {
			return nil, fields, fmt.Errorf("%w (from %s)", &MissingFieldError{Field: names[0], Fields: names}, op)
		}
		return v, fields, nil
	}
	if raw.StatusCode != okStatus {
		return nil, Fields{}, fmt.Errorf("%w from %s: status %d, want %d", ErrMalformedResponse, op, raw.StatusCode, okStatus)
	}
	return nil, Fields{}, fmt.Errorf("%w from %s: content type %q is not JSON", ErrMalformedResponse, op, raw.Header.Get("Content-Type"))
}

// isDecodeError reports whether err came from decoding a response rather than
// from sending the request or reading the body.
func isDecodeError(err error) bool {
	var (
		syntax   *json.SyntaxError
		mismatch *json.UnmarshalTypeError
		badTime  *time.ParseError
		badInt   *strconv.NumError
	)
	switch {
	case errors.As(err, &syntax), errors.As(err, &mismatch), errors.As(err, &badTime), errors.As(err, &badInt):
		return true
	}
	// time.Time rejects a non-string timestamp with an untyped error; its
	// text is the only mark it carries.
	return strings.HasPrefix(err.Error(), "Time.UnmarshalJSON:")
}
