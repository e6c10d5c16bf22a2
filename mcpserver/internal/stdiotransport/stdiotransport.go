// Package stdiotransport is the MCP server's stdio transport:
// newline-delimited JSON-RPC over a reader and a writer, as a go-sdk
// mcp.Transport. Unlike the SDK's IOTransport, it answers a line it cannot
// decode with a JSON-RPC error (-32700 or -32600) and reads on, instead of
// ending the process. Writes are serialised, so lines never interleave.
package stdiotransport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLineBytes is the line limit when MaxLineBytes is zero.
const DefaultMaxLineBytes = 1 << 20

// Transport serves one MCP session over a reader and a writer, for exactly
// one connection.
type Transport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxLineBytes bounds one incoming line, newline excluded; zero means
	// DefaultMaxLineBytes. A longer line is answered with an error.
	MaxLineBytes int
	// Logger receives one warning per rejected line; nil discards them.
	Logger *slog.Logger
	// Inspect, when set, sees each decoded request before the SDK does, on
	// the reader goroutine, so it must not block or change the request.
	Inspect func(*jsonrpc.Request)
}

var _ mcp.Transport = (*Transport)(nil)

// Connect implements mcp.Transport. It starts the reader goroutine, since a
// stdin read cannot be interrupted portably.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	return t.connect(nil), nil
}

// connect starts a connection whose Write writes the results d holds.
func (t *Transport) connect(d *Deferred) *conn {
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &conn{
		w:        t.Writer,
		log:      log,
		inspect:  t.Inspect,
		limit:    limit,
		incoming: make(chan jsonrpc.Message),
		closed:   make(chan struct{}),
		readDone: make(chan struct{}),
		deferred: d,
	}
	go c.readLoop(bufio.NewReaderSize(t.Reader, 64<<10))
	return c
}

// conn is one connection: Read from one goroutine, Write from many, Close
// from any, any number of times.
type conn struct {
	log     *slog.Logger
	limit   int
	inspect func(*jsonrpc.Request)

	incoming chan jsonrpc.Message
	// readErr is why the reader stopped; valid once readDone is closed.
	readErr  error
	readDone chan struct{}

	closeOnce sync.Once
	closed    chan struct{}

	// deferred holds the results this connection's responses carry as
	// placeholders (Serve); nil for a plain Connect.
	deferred *Deferred

	wmu  sync.Mutex
	w    io.Writer
	wbuf bytes.Buffer
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	default:
	}
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-c.readDone:
		return nil, c.readErr
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection: one message, one line.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, _ := msg.(*jsonrpc.Response)
	var result json.RawMessage
	var deferred, found bool
	if resp != nil {
		// Taken first, so a response that is not written frees its result.
		result = resp.Result
		var raw []byte
		if raw, deferred, found = c.deferred.take(result); deferred {
			result = raw
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if deferred && !found {
		return c.writeLost(resp)
	}
	if resp != nil {
		if id, ok := plainID(resp); ok {
			return c.writeResult(id, result)
		}
		if deferred {
			msg = &jsonrpc.Response{ID: resp.ID, Result: result, Error: resp.Error}
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("stdio: encode message: %w", err)
	}
	return c.writeLine(data)
}

// plainID returns the JSON of a successful response's id when the response
// can be written around its result as is: no error, a result, and an id
// that is an integer or a string needing no escapes.
//
// The SDK builds every response's result with its own JSON encoder, so the
// result is already compact JSON; jsonrpc.EncodeMessage would only scan it
// once more (encoding/json compacts a RawMessage), which costs about as
// much as the rest of the line for a large answer. The bytes written are
// the same as EncodeMessage's (TestResultLinesMatchEncodeMessage).
func plainID(resp *jsonrpc.Response) ([]byte, bool) {
	if resp.Error != nil || len(resp.Result) == 0 {
		return nil, false
	}
	switch v := resp.ID.Raw().(type) {
	case int64:
		return strconv.AppendInt(nil, v, 10), true
	case string:
		for i := 0; i < len(v); i++ {
			if b := v[i]; b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
				return nil, false
			}
		}
		return append(append(append(make([]byte, 0, len(v)+2), '"'), v...), '"'), true
	}
	return nil, false
}

// writeResult writes a successful response's line: the envelope around
// the result as the SDK encoded it.
func (c *conn) writeResult(id []byte, result json.RawMessage) error {
	return c.write(func(b *bytes.Buffer) {
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		b.Write(id)
		b.WriteString(`,"result":`)
		b.Write(result)
		b.WriteByte('}')
	})
}

// writeLine writes data and its newline in one Write call.
func (c *conn) writeLine(data []byte) error {
	return c.write(func(b *bytes.Buffer) { b.Write(data) })
}

// write writes the line fill puts in the buffer, and its newline, in one
// Write call.
func (c *conn) write(fill func(*bytes.Buffer)) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	c.wbuf.Reset()
	fill(&c.wbuf)
	c.wbuf.WriteByte('\n')
	_, err := c.w.Write(c.wbuf.Bytes())
	if c.wbuf.Cap() > 1<<20 {
		// One large answer must not pin its buffer for the session's life.
		c.wbuf = bytes.Buffer{}
	}
	return err
}

// writeLost answers a response whose result placeholder has no result
// held for it, which only a response written twice could cause: an
// internal error, rather than the placeholder, goes to the client.
func (c *conn) writeLost(resp *jsonrpc.Response) error {
	c.log.Warn("stdio.write_failed", "error", fmt.Sprintf("the result for id %v was not kept for writing; answered with an internal error", resp.ID.Raw()))
	data, err := EncodeError(resp.ID.Raw(), jsonrpc.CodeInternalError, "Internal error: the result was not kept for writing")
	if err != nil {
		return fmt.Errorf("stdio: encode message: %w", err)
	}
	return c.writeLine(data)
}

// Close implements mcp.Connection. The reader delivers nothing after it,
// and the results held for unwritten responses are freed.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.deferred.close()
	})
	return nil
}

// SessionID implements mcp.Connection: stdio has no protocol session id.
func (c *conn) SessionID() string { return "" }

// readLoop hands each valid message to Read and answers the rest.
func (c *conn) readLoop(r *bufio.Reader) {
	defer close(c.readDone)
	var line []byte
	for {
		var tooLong bool
		var err error
		line, tooLong, err = readLine(r, line[:0], c.limit)
		if tooLong {
			c.reject(nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: line exceeds the limit of %d bytes (STDIO_MAX_LINE_BYTES); nothing in it was read", c.limit))
		} else if len(bytes.TrimSpace(line)) > 0 {
			msg, rerr := Decode(line)
			if rerr != nil {
				c.reject(rerr.ID, rerr.Code, rerr.Message)
			} else {
				if req, ok := msg.(*jsonrpc.Request); ok && c.inspect != nil {
					c.inspect(req)
				}
				select {
				case c.incoming <- msg:
				case <-c.closed:
					c.readErr = io.EOF
					return
				}
			}
		}
		if err != nil {
			c.readErr = err
			return
		}
		select {
		case <-c.closed:
			c.readErr = io.EOF
			return
		default:
		}
	}
}

// reject answers a line that carried no usable message.
func (c *conn) reject(id any, code int64, message string) {
	c.log.Warn("stdio.rejected_frame", "code", code, "error", message)
	data, err := EncodeError(id, code, message)
	if err == nil {
		err = c.writeLine(data)
	}
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		c.log.Warn("stdio.write_failed", "error", err.Error())
	}
}

// readLine reads one line into buf without its "\n" or "\r\n". A line
// longer than limit is read to its end and dropped (tooLong, buf empty). err
// is io.EOF or the reader's error when the input ends; a last line without
// a newline is still returned with it.
func readLine(r *bufio.Reader, buf []byte, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, rerr := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > limit+2 { // room for "\r\n"
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case rerr == nil:
			return trimEOL(buf, tooLong, limit)
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		default:
			line, tooLong, _ = trimEOL(buf, tooLong, limit)
			return line, tooLong, rerr
		}
	}
}

func trimEOL(buf []byte, tooLong bool, limit int) ([]byte, bool, error) {
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	buf = bytes.TrimSuffix(buf, []byte("\r"))
	if len(buf) > limit {
		return buf[:0], true, nil
	}
	return buf, tooLong, nil
}

// FrameError is why a line carried no usable message: a JSON-RPC error
// code, the message, and the request's id when readable (else nil).
type FrameError struct {
	Code    int64
	Message string
	ID      any
}

// wireMessage is every field of a JSON-RPC 2.0 message; Method is raw to
// tell an empty method from a missing one.
type wireMessage struct {
	JSONRPC any             `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// Decode turns one line into a JSON-RPC 2.0 message, refusing anything
// after the first value. Only a rejected line is examined further, for the
// error code and its id.
func Decode(line []byte) (jsonrpc.Message, *FrameError) {
	if req, ok := decodeRequest(line); ok {
		return req, nil
	}
	return decodeGeneral(line)
}

// decodeGeneral is Decode for any line, through encoding/json.
func decodeGeneral(line []byte) (jsonrpc.Message, *FrameError) {
	var w wireMessage
	err := json.Unmarshal(line, &w)
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax) || (err != nil && !json.Valid(line)):
		return nil, &FrameError{Code: jsonrpc.CodeParseError, Message: "Parse error: the line is not one JSON value"}
	case err != nil && firstByte(line) != '{':
		// MCP has no batches since 2025-06-18; a scalar is no message.
		return nil, &FrameError{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: expected one JSON-RPC 2.0 object per line"}
	case err != nil:
		// Valid JSON with a field of the wrong type: read what can be read.
		var probe struct {
			JSONRPC any             `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		w = wireMessage{JSONRPC: probe.JSONRPC, ID: probe.ID}
	}
	id, idErr := parseID(w.ID)
	if w.JSONRPC != "2.0" {
		return nil, &FrameError{Code: jsonrpc.CodeInvalidRequest, ID: id, Message: `Invalid Request: "jsonrpc" must be "2.0"`}
	}
	if idErr != nil {
		return nil, &FrameError{Code: jsonrpc.CodeInvalidRequest, Message: `Invalid Request: "id" must be a string or an integer`}
	}
	if err == nil {
		var method string
		if w.Method != nil && json.Unmarshal(w.Method, &method) == nil {
			return &jsonrpc.Request{ID: idOf(id), Method: method, Params: w.Params}, nil
		}
		if w.Method == nil && id != nil && (w.Result != nil || w.Error != nil) {
			resp := &jsonrpc.Response{ID: idOf(id), Result: w.Result}
			if w.Error != nil {
				resp.Error = w.Error
			}
			return resp, nil
		}
	}
	return nil, &FrameError{Code: jsonrpc.CodeInvalidRequest, ID: id, Message: `Invalid Request: a request needs a string "method" (and an "id" unless it is a notification); a response needs an "id" and a "result" or an "error"`}
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// idOf converts an id parsed by parseID; nil is the zero ID (a notification).
func idOf(id any) jsonrpc.ID {
	if id == nil {
		return jsonrpc.ID{}
	}
	if i, ok := id.(int64); ok {
		id = float64(i) // the form MakeID takes
	}
	out, _ := jsonrpc.MakeID(id)
	return out
}

// parseID reads a request id: a string, an integer, or absent/null (nil).
func parseID(raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return nil, errors.New("bad id")
}

// EncodeError is the wire form of a JSON-RPC error response.
func EncodeError(id any, code int64, message string) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, message}})
}
