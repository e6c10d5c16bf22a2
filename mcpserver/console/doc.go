// Package console is the approvals console: server-rendered pages where a
// named approver reviews, approves or rejects staged orders and reads the
// history and audit trail. New serves a Backend; Listen serves it on its
// own listener. It never sends an order itself, and refuses requests that
// carry a bearer token.
package console
