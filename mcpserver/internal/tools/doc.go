// Package tools is the MCP server's tool layer: the five workflow tools and
// two prompts, scoped to the keyring's stores, answering in one envelope
// with a closed set of error codes. It must not speak HTTP (only
// internal/upstream does) or open storage: internal/app hands it the
// StoreLink client, ledger and audit sink.
package tools
