// Package mcptest holds helpers shared by the tests of the MCP server's
// packages: a log buffer that a server's goroutines may write while a test
// reads it, the JSON lines such a buffer holds, and a POST of one JSON-RPC
// message to an MCP endpoint. It is
// for tests only; no production code imports it.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer safe for concurrent use: a logger writes to
// it from the server's goroutines while the test reads it. Its zero value
// is an empty buffer ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Post sends body, one JSON-RPC message, to url as an MCP client does
// (Content-Type application/json, Accept JSON and event stream), with the
// headers hdr ("Host" sets the request's host), and returns the response
// with the first 64 KiB of its body read. A request that cannot be sent
// fails the test.
func Post(t testing.TB, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp, string(b)
}

// LogLines are the JSON log lines in s, each as an object; lines that are
// not JSON objects are skipped.
func LogLines(s string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
