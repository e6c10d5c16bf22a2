// Package console is the approvals console: the web pages on which a named
// approver (a category buyer or a store manager) logs in, reads the orders
// the agent staged for their stores with the stock evidence behind each,
// approves or rejects them, and reads the history and the agent's audit
// trail of a day.
//
// New returns an http.Handler over a Backend, the small interface through
// which the console reaches the approver record, the order workflow and the
// audit trail. The pages are server-rendered from embedded html/template
// templates and one stylesheet; no script runs in them, and the
// Content-Security-Policy says so. Sessions are random ids held on the
// server side (SessionStore), every POST carries a per-session CSRF token,
// logins are rate-limited per name and per address, and a request that
// carries a bearer token, the agent's credential, opens nothing.
package console
