// Package e2e holds the end-to-end tests: the real storelink-mcp binary,
// built once per run, driven over stdio and Streamable HTTP by the go-sdk
// client, the TypeScript SDK clients, a browser and raw JSON-RPC, against a
// mock StoreLink on loopback. It has no code of its own; README.md says what
// the suite covers, what it needs and how to run one test.
package e2e
