// Package console is the approvals console: web pages on which a named
// approver logs in, reads the orders staged for their stores with the
// stock evidence behind each, approves or rejects them, and reads the
// history and one day's audit trail.
//
// New returns an http.Handler over a Backend; NewWorkflowBackend is the
// Backend over the order workflow (package replenish) and the approver
// register, and decides who may see and decide which order. Listen serves
// it on a listener of its own. Pages are server-rendered with no script;
// sessions live on the server side, every POST carries a CSRF token,
// logins are rate-limited, and a request carrying a bearer token (the
// agent's credential) is refused. It never sends an order itself: the
// workflow does.
package console
