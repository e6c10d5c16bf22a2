package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// tsHTTPHost is the TypeScript SDK client (conformance/tsclient/http.mjs)
// connected to a running server over Streamable HTTP with a token.
type tsHTTPHost struct {
	*lineProc
	nextID int
}

// tsHTTPReply is one line of the driver: a reply, or the readiness line.
type tsHTTPReply struct {
	tsReply
	Ready    bool             `json:"ready"`
	Tools    []map[string]any `json:"tools"`
	Redirect *string          `json:"redirect"`
}

// startTSHTTP starts the HTTP driver against url with token, from an OAuth
// provider or a fixed header, and returns the readiness line.
func startTSHTTP(t *testing.T, inst tsInstall, url, token string, provider bool) (*tsHTTPHost, tsHTTPReply) {
	t.Helper()
	work := stageTSScript(t, inst, "http.mjs")
	cfg, _ := json.Marshal(map[string]any{"url": url, "token": token, "provider": provider})
	cmd := exec.Command(inst.node, filepath.Join(work, "http.mjs"), string(cfg))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	h := &tsHTTPHost{lineProc: startLineProc(t, cmd)}
	return h, h.next()
}

func (h *tsHTTPHost) next() tsHTTPReply {
	h.t.Helper()
	var r tsHTTPReply
	h.read(&r, 60*time.Second)
	return r
}

// call runs one tools/call and returns the driver's reply.
func (h *tsHTTPHost) call(name string, args map[string]any) tsHTTPReply {
	h.t.Helper()
	h.nextID++
	b, _ := json.Marshal(map[string]any{"id": h.nextID, "name": name, "arguments": args})
	if _, err := h.stdin.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
	return h.next()
}

// status is the HTTP status the client threw with (its error code), or 0.
func (r tsHTTPReply) status() int {
	if r.Error == nil || r.Error.Code == nil {
		return 0
	}
	return *r.Error.Code
}

// envelope decodes the tool's JSON envelope from a reply.
func (r tsHTTPReply) envelope(t *testing.T) map[string]any {
	t.Helper()
	if r.Error != nil || r.Result == nil || len(r.Result.Content) == 0 {
		t.Fatalf("no result: %+v", r)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprint(r.Result.Content[0]["text"])), &env); err != nil {
		t.Fatalf("not an envelope: %v", r.Result.Content[0])
	}
	return env
}
