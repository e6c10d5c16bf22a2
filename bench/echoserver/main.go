// Command echoserver is the benchmarks' baseline: a bare go-sdk server with
// one `echo` tool.
//
//	echoserver                              # MCP over stdio
//	echoserver --http 127.0.0.1:8080        # Streamable HTTP at /mcp
//	echoserver --http 127.0.0.1:8080 --stateless
//
// --token-file requires a bearer token from the file; --cpuprofile writes a
// CPU profile on exit. With ECHO_ANSWER_FILE naming a file of one JSON
// object, a second tool, `answer` (no arguments), returns that object as
// both its text and its structured content: the load driver's cpu phase
// gives it storelink-mcp's trivial answer, to tell the cost of an answer's
// size from the cost of the server that built it.
package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoIn is the echo tool's input.
type echoIn struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv("ECHO_ANSWER_FILE"))
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}

// newServer is the whole MCP server: the echo tool, and the answer tool
// when answer is not nil, with the SDK's defaults.
func newServer(answer []byte) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echoserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Send the message back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	if answer != nil {
		text := string(answer)
		s.AddTool(&mcp.Tool{Name: "answer", Description: "Send the fixed answer back.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(answer)}, nil
			})
	}
	return s
}

// readAnswer reads the answer tool's JSON object from path; no path, no
// answer tool.
func readAnswer(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if !json.Valid(b) || b[0] != '{' {
		return nil, fmt.Errorf("%s: not one JSON object", path)
	}
	return b, nil
}

func run(ctx context.Context, args []string, answerFile string) error {
	fs := flag.NewFlagSet("echoserver", flag.ContinueOnError)
	addr := fs.String("http", "", "serve Streamable HTTP at `ADDR`/mcp instead of stdio")
	stateless := fs.Bool("stateless", false, "no MCP sessions over HTTP: every request stands alone")
	tokenFile := fs.String("token-file", "", "`file` of \"label token\" lines; HTTP requests need one of the tokens")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to `file` on exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	answer, err := readAnswer(answerFile)
	if err != nil {
		return err
	}
	if *addr == "" {
		return newServer(answer).Run(ctx, &mcp.StdioTransport{})
	}
	tokens, err := readTokens(*tokenFile)
	if err != nil {
		return err
	}
	srv := newServer(answer)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireToken(tokens, h))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// readTokens reads the tokens of a "label token" file; no file, no tokens
// (and no check).
func readTokens(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tokens []string
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 {
			tokens = append(tokens, f[1])
		}
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s: no \"label token\" line", path)
	}
	return tokens, nil
}

// requireToken answers 401 to a request without one of tokens.
func requireToken(tokens []string, next http.Handler) http.Handler {
	if len(tokens) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			for _, t := range tokens {
				if subtle.ConstantTimeCompare([]byte(got), []byte(t)) == 1 {
					next.ServeHTTP(w, r)
					return
				}
			}
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
}
