// Package eval runs the real storelink-mcp the way an agent does and checks
// what happened. An agent loop (Agent) gives the server's tools to a Model;
// a scripted model (ScriptedModel) replays a written trajectory, so a run is
// offline and reproducible; the harness (World, Server) starts the binary
// over stdio against a mock StoreLink; scenarios.json pairs each request
// with checks on the tools called, what reached StoreLink and the ledger,
// and the final answer. Two negative controls must fail, to show the checks
// can fail. The checks test behaviour, not the script, so a live model can
// be graded the same way.
package eval
