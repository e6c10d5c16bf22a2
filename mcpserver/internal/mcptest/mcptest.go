// Package mcptest holds test helpers shared by the MCP server's packages.
// Only tests import it.
package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for concurrent use: a logger writes to
// it from the server's goroutines while the test reads it.
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

// Post sends body, one JSON-RPC message, to url with the headers an MCP
// client sends and the headers in hdr ("Host" sets the request's host). It
// returns the response and the first 64 KiB of its body.
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

// Clock is a settable clock for tests.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// StdioAnswers runs serve on a pair of pipes, writes lines to it one at a
// time, and returns the answer line to each line that holds an "id" (a
// notification gets none). serve reads requests from in and writes answers
// to out; it must return once in is closed.
func StdioAnswers(t testing.TB, lines []string, serve func(ctx context.Context, in io.Reader, out io.Writer) error) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, inR, outW) }()
	scan := bufio.NewScanner(outR)
	scan.Buffer(nil, 1<<20)
	var answers []string
	for _, line := range lines {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"id"`) {
			if !scan.Scan() {
				t.Fatalf("no answer to %s", line)
			}
			answers = append(answers, scan.Text())
		}
	}
	_ = inW.Close()
	<-done
	return answers
}
