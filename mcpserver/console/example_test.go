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
// (Options.BehindTLSProxy), and name the hosts it answers to: its listen
// address and the address people open it at (Options.Hosts).
func Example() {
	backend := consoletest.New(time.Now) // a real deployment passes its workflow's adapter
	backend.AddApprover("jana.novakova", "a secret shown once")

	h, err := console.New(backend, console.Options{Hosts: []string{"127.0.0.1:8444", "approvals.korral.example"}})
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Addr: "127.0.0.1:8444", Handler: h, ReadHeaderTimeout: 5 * time.Second}
	_ = srv // srv.ListenAndServeTLS(cert, key)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "https://approvals.korral.example/login", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Security-Policy"))

	// Another name that resolves to the console (DNS rebinding) is refused.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://evil.example:8444/login", nil))
	fmt.Println(rec.Code)

	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "https://approvals.korral.example/", nil)
	req.Header.Set("Authorization", "Bearer the-agents-mcp-token")
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// 200 default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'
	// 421
	// 401
}
