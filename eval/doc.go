// Package eval runs storelink-mcp as an agent does and checks what
// happened. Agent loops a Model over the server's tools; ScriptedModel
// replays a written trajectory offline; scenarios.json pairs requests with
// model-agnostic checks. Negative controls must fail.
package eval
