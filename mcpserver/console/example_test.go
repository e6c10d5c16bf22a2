package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

// The console is an http.Handler over a Backend. Serve it on a listener of
// its own, with the server's timeouts set, behind TLS or a TLS proxy
// (Options.BehindTLSProxy).
func Example() {
	backend := consoletest.New(time.Now) // a real deployment passes its workflow's adapter
	backend.AddApprover("jana.novakova", "a secret shown once")

	h, err := console.New(backend, console.Options{})
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Addr: "127.0.0.1:8444", Handler: h, ReadHeaderTimeout: 5 * time.Second}
	_ = srv // srv.ListenAndServeTLS(cert, key)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/login", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Security-Policy"))

	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Authorization", "Bearer the-agents-mcp-token")
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// 200 default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'
	// 401
}
