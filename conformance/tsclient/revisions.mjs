// One buyer's round trip through an official TypeScript client, of either
// generation, over either transport: the 1.x SDK (which speaks up to
// 2025-11-25, initialize handshake) or the 2.x client pinned to 2026-07-28
// (stateless, per-request _meta), over stdio (it spawns the server) or
// Streamable HTTP (a running server, with a bearer token). It lists the
// tools and the prompts, gets a prompt, asks for a completion, and calls the
// risk check, as a host would, so the client checks the answer against the
// tool's output schema. e2e/revisions_test.go runs it in every combination.
//
// Usage: node revisions.mjs '<json {sdk: "v1"|"v2", transport: "stdio"|"http",
//   command, args, env (stdio), url, token (http), sku, store}>'
//   stdout, one line: {"ok": true, "protocol_version", "capabilities",
//   "tools": [names, twice], "prompts": [names], "prompt_text", "completion",
//   "risk": CallToolResult}, or {"ok": false, "step", "error": {code, message}}.
const cfg = JSON.parse(process.argv[2]);
const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

let step = "load";
try {
  const v2 = cfg.sdk === "v2";
  const mod = v2
    ? await import("@modelcontextprotocol/client")
    : await import("@modelcontextprotocol/sdk/client/index.js");
  let transport;
  if (cfg.transport === "stdio") {
    const { StdioClientTransport } = v2
      ? await import("@modelcontextprotocol/client/stdio")
      : await import("@modelcontextprotocol/sdk/client/stdio.js");
    transport = new StdioClientTransport({ command: cfg.command, args: cfg.args || [], env: cfg.env || {}, stderr: "inherit" });
  } else {
    const { StreamableHTTPClientTransport } = v2
      ? mod
      : await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    transport = new StreamableHTTPClientTransport(new URL(cfg.url), {
      requestInit: { headers: { Authorization: `Bearer ${cfg.token}` } },
    });
  }
  // The 1.x client tells the transport the version initialize settled on,
  // and has no other way to say it; the 2.x client answers directly.
  let negotiated;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    negotiated = v;
    setVersion?.(v);
  };
  const info = { name: v2 ? "ts-client-2x" : "ts-sdk-1x", version: "1" };
  const client = v2
    ? new mod.Client(info, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
    : new mod.Client(info);

  step = "connect";
  await client.connect(transport);
  step = "tools/list";
  const first = await client.listTools();
  const second = await client.listTools();
  step = "prompts/list";
  const prompts = await client.listPrompts();
  step = "prompts/get";
  const prompt = await client.getPrompt({
    name: "korral_restock_gaps",
    arguments: { sku: cfg.sku, min_gap_units: "5", store_ids: cfg.store },
  });
  step = "completion/complete";
  const completion = await client.complete({
    ref: { type: "ref/prompt", name: "korral_restock_gaps" },
    argument: { name: "store_ids", value: cfg.store.slice(0, 1) },
  });
  step = "tools/call";
  const risk = await client.callTool({ name: "korral_check_stock_risk", arguments: { sku: cfg.sku, store_id: cfg.store } });
  write({
    ok: true,
    protocol_version: v2 ? client.getNegotiatedProtocolVersion() : negotiated,
    capabilities: client.getServerCapabilities(),
    tools: [first.tools.map((t) => t.name), second.tools.map((t) => t.name)],
    prompts: prompts.prompts.map((p) => p.name),
    prompt_text: prompt.messages.map((m) => m.content?.text ?? "").join("\n"),
    completion: completion.completion.values,
    risk,
  });
  step = "close";
  await client.close();
  process.exit(0);
} catch (err) {
  write({ ok: false, step, error: { code: err?.code ?? null, message: String(err?.message ?? err) } });
  process.exit(1);
}
