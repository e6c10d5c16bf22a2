// Package state defines the MCP server's durable state: the idempotency
// ledger of replenishment orders, the approvals staged for a person, the
// approvers who may decide them, and the audit trail.
//
// An idempotency key is reserved before anything is sent to StoreLink, so a
// retry, a restart or another replica finds the first attempt instead of
// raising a second order. This package holds the types, the transition table
// (machine.go) and the interfaces callers use (Ledger, AuditLog, Approvers, …,
// Store), and no storage: packages sqlite and postgres implement Store, and
// both pass the suite in package statetest.
package state
