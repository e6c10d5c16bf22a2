// Package tools is the MCP server's tool layer: the five workflow tools and
// the two prompts, each scoped to the stores whose keys the keyring holds,
// each answering in one envelope with a closed set of error codes.
//
// It builds on internal/replenish (the order workflow), internal/projection
// and a small Upstream interface. It does not speak HTTP (only
// internal/upstream does) and opens no storage: internal/app hands it the
// StoreLink client, the ledger and the audit sink.
package tools
