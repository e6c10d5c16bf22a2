// Package state defines the server's durable state: the idempotency ledger,
// staged approvals, approvers and the audit trail. It holds types, the
// transition table and interfaces, and no storage: sqlite and postgres
// implement Store and pass the statetest suite.
package state
