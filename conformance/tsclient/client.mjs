// A host's hand: the official TypeScript SDK client (the one most hosts
// embed) connected to one storelink-mcp over stdio, driven line by line by a
// test. Like a host, it lists the tools first, so every later result with
// structured content is checked against the tool's output schema, and a
// mismatch throws MCP error -32602 instead of returning the result.
//
// Usage: node client.mjs '<json {command, args, env}>'
//   stdout, first line: {"ready": true, "tools": [...]} (the tools/list
//   result), or {"ready": false, "error": {...}} when the connection failed.
//   stdin: one JSON request per line, {"id": N, "name": TOOL, "arguments": {...}};
//   requests run concurrently, so a test can ask for a status while a
//   confirm is still in flight.
//   stdout: one JSON line per request, {"id": N, "result": CallToolResult}
//   or {"id": N, "error": {"code": C, "message": M}} when the client threw.
// The end of stdin closes the session (and so the server) and exits.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const server = JSON.parse(process.argv[2]);
const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const thrown = (err) => ({ code: err?.code ?? null, message: String(err?.message ?? err) });

const transport = new StdioClientTransport({
  command: server.command,
  args: server.args || [],
  env: server.env || {},
  stderr: "inherit", // the server's log lines reach the test through ours
});
const client = new Client({ name: "ts-sdk-host", version: "1" });

try {
  await client.connect(transport);
  const list = await client.listTools();
  write({ ready: true, tools: list.tools });
} catch (err) {
  write({ ready: false, error: thrown(err) });
  process.exit(1);
}

const inflight = new Set();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  const task = client
    .callTool({ name: req.name, arguments: req.arguments || {} }, undefined, { timeout: 60000 })
    .then((result) => write({ id: req.id, result }))
    .catch((err) => write({ id: req.id, error: thrown(err) }))
    .finally(() => inflight.delete(task));
  inflight.add(task);
});
lines.on("close", async () => {
  await Promise.allSettled([...inflight]);
  await client.close();
  process.exit(0);
});
