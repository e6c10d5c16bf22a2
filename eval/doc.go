// Package eval drives the real storelink-mcp server the way an agent does,
// and checks what happened.
//
// It has four parts. A provider-neutral agent loop (Agent) hands the server's
// tool definitions to a Model, runs the tool calls the model asks for over an
// MCP client session, and records a trace until the model answers. A scripted
// model (ScriptedModel) replays a written trajectory, deriving later
// arguments from earlier results, so the loop runs offline and
// reproducibly. A harness (World, Server) spawns the real binary over stdio
// against a mock StoreLink on loopback. Scenarios (scenarios.json) pair a
// user request and a trajectory with model-agnostic checks: which tools were
// called, which outcomes came back, what reached StoreLink and the ledger,
// and what the final answer says.
//
// The checks judge behaviour, not the script: a live model could be run
// through the same scenarios and graded the same way. Two negative controls
// misbehave on purpose and must fail, which shows the checks can fail.
package eval
