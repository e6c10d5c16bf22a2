// A remote host's hand: the official TypeScript SDK client connected to a
// running `storelink-mcp serve --http` with an OAuth access token, driven
// line by line by a test.
//
// Usage: node http.mjs '<json {url, token, provider}>'
//   provider false: the token goes in requestInit's Authorization header,
//   as a host configured with a fixed token sends it.
//   provider true: the token comes from an OAuthClientProvider, as a host
//   that signs its users in holds it. On a 401 or a 403 insufficient_scope
//   the client then runs its own discovery (the server's protected resource
//   metadata, then the issuer's) and would send the user to the issuer's
//   authorization endpoint: that URL is reported as "redirect", and the
//   call fails with the client's UnauthorizedError.
//   stdout, first line: {"ready": true, "tools": [...]} or
//   {"ready": false, "error": {...}, "redirect": URL|null}.
//   stdin: one JSON request per line, {"id": N, "name": TOOL, "arguments": {...}},
//   answered in order: {"id": N, "result": CallToolResult} or
//   {"id": N, "error": {"code": C, "message": M}, "redirect": URL|null}.
// The end of stdin closes the session and exits.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const cfg = JSON.parse(process.argv[2]);
const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const thrown = (err) => ({ code: err?.code ?? null, message: String(err?.message ?? err) });

let redirect = null;
const callback = "http://127.0.0.1:9/callback";
const provider = {
  get redirectUrl() { return callback; },
  get clientMetadata() {
    return { client_name: "ts-sdk-host", redirect_uris: [callback], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation() { return { client_id: "ts-sdk-host" }; },
  tokens() { return { access_token: cfg.token, token_type: "Bearer" }; },
  saveTokens() {},
  redirectToAuthorization(url) { redirect = url.toString(); },
  saveCodeVerifier() {},
  codeVerifier() { return "unused"; },
};

const opts = cfg.provider
  ? { authProvider: provider }
  : { requestInit: { headers: { Authorization: `Bearer ${cfg.token}` } } };
const transport = new StreamableHTTPClientTransport(new URL(cfg.url), opts);
const client = new Client({ name: "ts-sdk-host", version: "1" });

try {
  await client.connect(transport);
  const list = await client.listTools();
  write({ ready: true, tools: list.tools });
} catch (err) {
  write({ ready: false, error: thrown(err), redirect });
  process.exit(0);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  redirect = null;
  try {
    const result = await client.callTool({ name: req.name, arguments: req.arguments || {} }, undefined, { timeout: 60000 });
    write({ id: req.id, result });
  } catch (err) {
    write({ id: req.id, error: thrown(err), redirect });
  }
}
await client.close().catch(() => {});
process.exit(0);
