// Package state is the MCP server's durable memory as a domain: the
// idempotency ledger of replenishment orders, the approvals staged for a
// human, the register of the people who may decide them, and the audit
// trail a buyer reads the next morning.
//
// The ledger is what makes a write safe to repeat. An idempotency key is
// reserved before anything is sent to StoreLink, so a replay after a crash, a
// restart or a retry from another server process finds the first attempt
// instead of raising a second order. Everything therefore has to survive a
// restart and has to hold when several server processes share one store.
//
// This package holds the vocabulary (entries and their states, the
// transition table in machine.go, approvers, reasons, keys) and the
// interfaces callers depend on (Ledger, AuditLog, Approvers, … and Store).
// It holds no storage: the backends are its peers, package sqlite (one
// embedded database file) and package postgres (replicas on several
// machines), and both pass the same conformance suite, package statetest.
package state
