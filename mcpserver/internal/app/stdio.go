package app

import (
	"context"
	"errors"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/stdiotransport"
)

// ServeStdio assembles the server and serves one MCP client over stdin and
// stdout until the client hangs up or ctx is cancelled; logs go to
// opts.Log (or LOG_FILE).
func ServeStdio(ctx context.Context, opts Options, stdin io.Reader, stdout io.Writer) error {
	// One stdio process serves one client: name its session once.
	session := "stdio-" + callid.New()
	opts.SessionName = session
	a, err := New(ctx, opts, Server)
	if err != nil {
		return err
	}
	defer a.Close()
	a.log.Info("server.start", "transport", "stdio", "version", Version, "upstream", a.upstreamKind())
	// Our own transport: a malformed line is answered and skipped rather
	// than ending the session, as the SDK's IOTransport would.
	t := &stdiotransport.Transport{Reader: stdin, Writer: stdout, MaxLineBytes: a.cfg.StdioMaxLineBytes, Logger: a.log,
		Inspect: func(req *jsonrpc.Request) {
			if tool, reason, refused := audit.UndecodableCall(req); refused {
				a.rejections.Record(ctx, tool, reason, stdioClient(a.server), session)
			}
		}}
	// Serve is Run that lets the connection write tool results itself.
	err = t.Serve(ctx, a.server)
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled)) {
		err = nil
	}
	a.log.Info("server.stop", "transport", "stdio")
	return err
}

// stdioClient is the name the one stdio client gave itself at initialize,
// or "" before that.
func stdioClient(s *mcp.Server) string {
	for ss := range s.Sessions() {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			return p.ClientInfo.Name
		}
	}
	return ""
}
