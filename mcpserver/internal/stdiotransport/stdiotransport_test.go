package stdiotransport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostileFrames are lines the SDK's IOTransport would end the process on,
// each followed by a newline when written.
var hostileFrames = []string{
	`{"jsonrpc":"2.0","id":1,"method":`,        // invalid JSON (truncated line)
	`not json at all`,                          // invalid JSON
	`{"jsonrpc":"1.0","id":2,"method":"ping"}`, // wrong version
	`{"id":3,"method":"ping"}`,                 // missing jsonrpc
	`[]`,                                       // empty batch
	`{}`,                                       // empty object
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,         // object id
	"{\"jsonrpc\":\"2.0\",\x00\"id\":4,\"method\":\"ping\"}", // NUL byte
	"\x00\x00\x00", // NUL bytes only
	`{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}`, // two messages on one line
	`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`,                                       // a batch
	`42`,
}

// run feeds input to a fresh connection and returns the messages it
// delivered, the lines it wrote back, and the error that ended reading.
func run(t testing.TB, input []byte, limit int) (delivered []jsonrpc.Message, answers []string, end error) {
	var out bytes.Buffer
	tr := &Transport{Reader: bytes.NewReader(input), Writer: &out, MaxLineBytes: limit}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		msg, err := c.Read(ctx)
		if err != nil {
			end = err
			break
		}
		delivered = append(delivered, msg)
	}
	_ = c.Close()
	if s := strings.TrimSuffix(out.String(), "\n"); s != "" {
		answers = strings.Split(s, "\n")
	}
	return delivered, answers, end
}

// expectedOutcomes counts the non-blank lines of input, each of which must
// produce exactly one outcome.
func expectedOutcomes(input []byte, limit int) int {
	n := 0
	for _, line := range bytes.Split(input, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > limit || len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}

func TestHostileFramesAreAnsweredAndReadingGoesOn(t *testing.T) {
	for _, frame := range hostileFrames {
		t.Run(frame, func(t *testing.T) {
			input := frame + "\n" + `{"jsonrpc":"2.0","id":"next","method":"ping"}` + "\n"
			delivered, answers, end := run(t, []byte(input), 1024)
			if !errors.Is(end, io.EOF) {
				t.Fatalf("reading ended with %v, want EOF", end)
			}
			if len(answers) != 1 {
				t.Fatalf("answers = %q, want one error", answers)
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(answers[0]), &resp); err != nil || resp.JSONRPC != "2.0" {
				t.Fatalf("answer %q is not a JSON-RPC response: %v", answers[0], err)
			}
			if resp.Error.Code != jsonrpc.CodeParseError && resp.Error.Code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("code %d", resp.Error.Code)
			}
			if len(delivered) != 1 {
				t.Fatalf("delivered %d messages, want the next request", len(delivered))
			}
			if req, ok := delivered[0].(*jsonrpc.Request); !ok || req.ID.Raw() != "next" {
				t.Fatalf("delivered %#v", delivered[0])
			}
		})
	}
}

func TestErrorCodesAndIDs(t *testing.T) {
	for _, tc := range []struct {
		line string
		code int64
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, jsonrpc.CodeParseError, "null"},
		{"\x00", jsonrpc.CodeParseError, "null"},
		{`{"a":1}{"b":2}`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "7"},
		{`{"id":"abc","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"abc"`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{}`, jsonrpc.CodeInvalidRequest, "null"},
		{`[]`, jsonrpc.CodeInvalidRequest, "null"},
		{`"text"`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":2,"id":9,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "9"},
	} {
		_, answers, _ := run(t, []byte(tc.line+"\n"), 1024)
		if len(answers) != 1 {
			t.Fatalf("%q: answers %q", tc.line, answers)
		}
		var resp struct {
			ID    json.RawMessage      `json:"id"`
			Error struct{ Code int64 } `json:"error"`
		}
		if err := json.Unmarshal([]byte(answers[0]), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Error.Code != tc.code || string(resp.ID) != tc.id {
			t.Errorf("%q: code %d id %s, want %d %s", tc.line, resp.Error.Code, resp.ID, tc.code, tc.id)
		}
	}
}

func TestOverLongLineIsRefusedAndTheNextOneServed(t *testing.T) {
	const limit = 100
	ok := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	long := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200_000) + `"}}`
	exact := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("y", limit-60) + `"}}`
	if len(exact) != limit {
		t.Fatalf("exact line is %d bytes", len(exact))
	}
	delivered, answers, end := run(t, []byte(long+"\n"+exact+"\r\n"+ok+"\n"), limit)
	if !errors.Is(end, io.EOF) {
		t.Fatal(end)
	}
	if len(answers) != 1 || !strings.Contains(answers[0], "-32600") || !strings.Contains(answers[0], "100 bytes") {
		t.Fatalf("answers %q", answers)
	}
	if len(delivered) != 2 {
		t.Fatalf("delivered %d, want the line at the limit and the one after", len(delivered))
	}
	if _, answers, _ := run(t, []byte(exact+"z\n"), limit); len(answers) != 1 {
		t.Fatalf("a line one byte over the limit: answers %q", answers)
	}
}

func TestLastLineWithoutNewlineIsServed(t *testing.T) {
	delivered, answers, end := run(t, []byte("\n  \n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`), 1024)
	if len(delivered) != 1 || len(answers) != 0 || !errors.Is(end, io.EOF) {
		t.Fatalf("delivered %d answers %q end %v", len(delivered), answers, end)
	}
}

// TestConcurrentWritesKeepOneMessagePerLine would interleave lines if the
// writer were not serialised.
func TestConcurrentWritesKeepOneMessagePerLine(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out mcptest.SyncBuffer
	c, _ := (&Transport{Reader: pr, Writer: &out}).Connect(context.Background())
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, _ := jsonrpc.MakeID(float64(i))
			_ = c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"pad":"` + strings.Repeat("p", 5000) + `"}`)})
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if _, err := jsonrpc.DecodeMessage([]byte(l)); err != nil {
			t.Fatalf("line is not one message: %v", err)
		}
	}
}

func TestCloseUnblocksRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	c, _ := (&Transport{Reader: pr, Writer: io.Discard}).Connect(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Read(context.Background()); errc <- err }()
	_ = c.Close()
	if err := <-errc; !errors.Is(err, io.EOF) {
		t.Fatalf("Read after Close: %v", err)
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "x"}); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

// FuzzReader: every non-blank line yields exactly one outcome, every answer
// is one JSON-RPC error response on its own line, and only the end of input
// stops the reader.
func FuzzReader(f *testing.F) {
	valid := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, frame := range hostileFrames {
		f.Add([]byte(frame + "\n" + valid + "\n"))
	}
	f.Add([]byte(strings.Repeat("a", 300) + "\n" + valid))
	f.Add([]byte(valid + "\r\n" + valid + "\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":9,"result":{}}` + "\n"))
	const limit = 256
	f.Fuzz(func(t *testing.T, input []byte) {
		delivered, answers, end := run(t, input, limit)
		if !errors.Is(end, io.EOF) {
			t.Fatalf("reading stopped with %v before the end of the input", end)
		}
		if got, want := len(delivered)+len(answers), expectedOutcomes(input, limit); got != want {
			t.Fatalf("%d outcomes (%d delivered, %d answered) for %d lines", got, len(delivered), len(answers), want)
		}
		for _, a := range answers {
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal([]byte(a), &resp); err != nil || resp.JSONRPC != "2.0" || resp.ID == nil || resp.Error == nil {
				t.Fatalf("answer %q is not a JSON-RPC error response (%v)", a, err)
			}
		}
	})
}

// sdkRaw encodes v as the SDK encodes a response's result (an Encoder
// without HTML escaping, the newline trimmed).
func sdkRaw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// writeOne writes m through a new connection with d as its Deferred and
// returns what it wrote; d must be open, or nil.
func writeOne(t *testing.T, m jsonrpc.Message, d *Deferred) string {
	t.Helper()
	var out bytes.Buffer
	c := (&Transport{Reader: strings.NewReader(""), Writer: &out}).connect(d)
	if err := c.Write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	return out.String()
}

// A successful response is written around its result without encoding it
// again: the line must be byte for byte what jsonrpc.EncodeMessage makes,
// for every kind of id and result, and an error response or an id that
// needs escapes takes EncodeMessage itself. The same holds when the
// response carries a placeholder for a result the connection holds.
func TestResultLinesMatchEncodeMessage(t *testing.T) {
	tool := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "Butter <250g> & \"more\"\u2028 é \x01 \\ end"}},
		StructuredContent: map[string]any{"ok": true, "note": "a<b>&c\u2029", "n": 1.5e-7, "list": []any{nil, "x", 3}},
	}
	results := []any{tool, map[string]any{}, []int{1, 2}, "plain", 42, map[string]string{"k": "\u00e9\U0001F600"}}
	ids := []any{float64(0), float64(7), float64(-3), float64(1 << 52), "", "abc-123", "quote\"d", "back\\slash", "tag<b>", "ctl\x01", "é", "new\nline"}
	var msgs []jsonrpc.Message
	for _, raw := range ids {
		id, err := jsonrpc.MakeID(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			msgs = append(msgs, &jsonrpc.Response{ID: id, Result: sdkRaw(t, r)})
		}
		msgs = append(msgs, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>"}})
	}
	req, err := jsonrpc.MakeID(float64(9))
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, &jsonrpc.Request{ID: req, Method: "ping"})
	fast, deferred := 0, 0
	for _, m := range msgs {
		want, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := writeOne(t, m, nil); got != string(want)+"\n" {
			t.Errorf("line %q, EncodeMessage %q", got, want)
		}
		r, ok := m.(*jsonrpc.Response)
		if !ok {
			continue
		}
		if _, ok := plainID(r); ok {
			fast++
		}
		// The same response with its result held by the connection and a
		// placeholder in its place, as Serve writes it.
		d := newDeferred()
		if _, ok := d.Defer(nil, r.Result); ok {
			t.Fatal("a Deferred held a result before its connection started")
		}
		if !d.open() {
			t.Fatal("a new Deferred did not open")
		}
		p, ok := d.Defer(nil, r.Result)
		if !ok {
			t.Fatal("an open Deferred held nothing")
		}
		deferred++
		if got := writeOne(t, &jsonrpc.Response{ID: r.ID, Result: p, Error: r.Error}, d); got != string(want)+"\n" {
			t.Errorf("with the result deferred: line %q, EncodeMessage %q", got, want)
		}
	}
	if want := len(ids) * (len(results) + 1); deferred != want {
		t.Errorf("%d lines written with a deferred result, want %d", deferred, want)
	}
	// The 4 integer ids and the 3 string ids without escapes ("",
	// "abc-123", "tag<b>": the SDK does not escape HTML), each with the 6
	// results.
	if want := 7 * 6; fast != want {
		t.Errorf("%d lines written around their result, want %d", fast, want)
	}
}
