// A host that asks its user: the official TypeScript MCP client of either
// generation, connected to one storelink-mcp over stdio (or to a running
// `serve --http` over Streamable HTTP), answering the server's consent
// questions (form elicitation) as a test tells it to.
//
// Usage: node consent.mjs '<json {command, args, env, generation, elicitation}>'
//    or: node consent.mjs '<json {url, token, generation, elicitation}>'
//   url: the server's MCP endpoint; the client connects with its
//     generation's Streamable HTTP transport instead of spawning command,
//     sending "Authorization: Bearer <token>" when token is set.
//   generation "1": @modelcontextprotocol/sdk 1.x (2025-11-25): the server
//     asks with elicitation/create inside the call.
//   generation "2": @modelcontextprotocol/client 2.x pinned to 2026-07-28:
//     the server answers input_required, and the client fulfils it through
//     the same elicitation handler and retries (automatic mode), or hands
//     it to the test (manual mode).
//   elicitation false: the client declares no elicitation capability.
//   url_elicitation true: the client declares URL elicitation beside form
//     ({ elicitation: { form: {}, url: {} } }), answers a mode "url" question
//     as the test tells it (the test opens the URL itself), and records every
//     notifications/elicitation/complete it receives (generation 1).
// stdout, first line: {"ready": true, "protocol": ...} or {"ready": false, "error": {...}}.
// stdin: one JSON request per line, run one after the other:
//   {"id", "name", "arguments", "answer"}: a call; "answer" is what the user
//     does when asked ({"action": "accept", "content": {...}} or
//     {"action": "decline"} ...); every question asked is reported back.
//   {"id", "name", "arguments", "manual": true}: generation 2 only; an
//     input_required answer is returned as it came, not fulfilled.
//   {"id", "name", "arguments", "inputResponses", "requestState"}: a retry
//     the test builds itself (generation 2 only).
//   {"id", "await_complete": elicitationId, "timeout_ms"}: answers
//     {"id", "completed": true} once notifications/elicitation/complete for
//     that id has arrived (at once if it has), {"id", "completed": false}
//     after timeout_ms.
// stdout: {"id", "result", "asked": [ElicitRequest params...]} or {"id", "error"}.
import { createInterface } from "node:readline";

const cfg = JSON.parse(process.argv[2]);
const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const thrown = (err) => ({ code: err?.code ?? null, message: String(err?.message ?? err) });

const info = { name: `consent-host-${cfg.generation}`, version: "1" };
const capabilities = cfg.elicitation === false ? {} : cfg.url_elicitation ? { elicitation: { form: {}, url: {} } } : { elicitation: { form: {} } };
const serverParams = { command: cfg.command, args: cfg.args || [], env: cfg.env || {}, stderr: "inherit" };
const httpOptions = { requestInit: { headers: cfg.token ? { Authorization: `Bearer ${cfg.token}` } : {} } };

// What the user does with the next question, and the questions asked.
let answer = { action: "cancel" };
let asked = [];
const onElicit = async (request) => {
  asked.push(request.params);
  return answer;
};

// The elicitation ids the server reported complete, and who waits for one.
const completed = new Set();
const completeWaiters = new Map();
const onComplete = (notification) => {
  const id = notification.params.elicitationId;
  completed.add(id);
  completeWaiters.get(id)?.();
};

let client, protocol;
try {
  if (cfg.generation === "1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    client = new Client(info, { capabilities });
    if (cfg.elicitation !== false) client.setRequestHandler(ElicitRequestSchema, onElicit);
    if (cfg.url_elicitation) {
      const { ElicitationCompleteNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, onComplete);
    }
    if (cfg.url) {
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      await client.connect(new StreamableHTTPClientTransport(new URL(cfg.url), httpOptions));
    } else {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      await client.connect(new StdioClientTransport(serverParams));
    }
    protocol = client.transport?.protocolVersion ?? "2025-11-25";
  } else {
    const { Client } = await import("@modelcontextprotocol/client");
    client = new Client(info, { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } });
    if (cfg.elicitation !== false) client.setRequestHandler("elicitation/create", onElicit);
    if (cfg.url) {
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
      await client.connect(new StreamableHTTPClientTransport(new URL(cfg.url), httpOptions));
    } else {
      const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
      await client.connect(new StdioClientTransport(serverParams));
    }
    protocol = "2026-07-28";
  }
  await client.listTools();
  write({ ready: true, protocol });
} catch (err) {
  write({ ready: false, error: thrown(err) });
  process.exit(1);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let queue = Promise.resolve();
lines.on("line", (line) => {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  queue = queue.then(async () => {
    if (req.await_complete !== undefined) {
      const done = completed.has(req.await_complete) || await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), req.timeout_ms ?? 30000);
        completeWaiters.set(req.await_complete, () => { clearTimeout(timer); resolve(true); });
      });
      completeWaiters.delete(req.await_complete);
      write({ id: req.id, completed: done });
      return;
    }
    answer = req.answer ?? { action: "cancel" };
    asked = [];
    const params = { name: req.name, arguments: req.arguments || {} };
    if (req.requestState !== undefined) params.requestState = req.requestState;
    if (req.inputResponses !== undefined) params.inputResponses = req.inputResponses;
    const options = { timeout: 60000 };
    if (req.manual || req.requestState !== undefined) options.allowInputRequired = true;
    try {
      let result;
      if (cfg.generation === "1") {
        // The 1.x client takes a result schema before the options.
        result = await client.callTool(params, undefined, options);
      } else if (options.allowInputRequired) {
        // callTool insists on structured content where the tool declares an
        // output schema, which an input_required answer has not: the plain
        // request hands the answer back as it came.
        result = await client.request({ method: "tools/call", params }, options);
      } else {
        result = await client.callTool(params, options);
      }
      write({ id: req.id, result, asked });
    } catch (err) {
      write({ id: req.id, error: thrown(err), asked });
    }
  });
});
lines.on("close", async () => {
  await queue;
  await client.close();
  process.exit(0);
});
