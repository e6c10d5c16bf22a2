// A throwaway identity provider on loopback for the scripts beside it: it
// generates an ES256 key, serves RFC 8414 metadata and the key set, signs
// access tokens for the audience it is given, and runs the authorization
// code flow with PKCE that a client such as the MCP Inspector starts: its
// /authorize answers at once (no login page) with a redirect carrying a
// code, and /token exchanges the code for a token after checking the PKCE
// verifier and the resource (RFC 8707). Signing and hashing are Node's own
// (node:crypto); nothing here is for production.
//
// Usage: node issuer.mjs AUDIENCE
//   stdout, one JSON line once listening:
//   {"issuer": URL, "token": JWT (both scopes), "read_token": JWT (read scope only)}
//   It serves until killed.
import { createServer } from "node:http";
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";

const audience = process.argv[2];
const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const jwk = { ...publicKey.export({ format: "jwk" }), kid: "inspector-k1", alg: "ES256", use: "sig" };
const b64 = (v) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

let issuer = "";
const mint = (scope) => {
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: "ES256", kid: jwk.kid, typ: "at+jwt" });
  const body = b64({ iss: issuer, aud: audience, sub: "inspector-user", iat: now, exp: now + 600, scope });
  const sig = sign("sha256", Buffer.from(`${head}.${body}`), { key: privateKey, dsaEncoding: "ieee-p1363" });
  return `${head}.${body}.${sig.toString("base64url")}`;
};

// codes maps an issued code to the PKCE challenge and scope it was for.
const codes = new Map();

const server = createServer(async (req, res) => {
  const json = (obj, status = 200) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(obj));
  };
  const url = new URL(req.url, issuer);
  if (url.pathname === "/authorize") {
    const q = url.searchParams;
    const back = q.get("redirect_uri") || "";
    if (q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256" || !q.get("code_challenge") ||
        q.get("resource") !== audience || !back.startsWith("http://127.0.0.1:")) {
      return json({ error: "invalid_request", error_description: `want code, S256 PKCE, resource=${audience}, a loopback redirect_uri` }, 400);
    }
    const code = randomBytes(16).toString("hex");
    codes.set(code, { challenge: q.get("code_challenge"), scope: q.get("scope") || "storelink.read", back });
    const to = new URL(back);
    to.searchParams.set("code", code);
    if (q.get("state")) to.searchParams.set("state", q.get("state"));
    to.searchParams.set("iss", issuer);
    res.writeHead(302, { Location: to.toString() });
    return res.end();
  }
  if (url.pathname === "/token" && req.method === "POST") {
    let body = "";
    for await (const chunk of req) body += chunk;
    const f = new URLSearchParams(body);
    const grant = codes.get(f.get("code") || "");
    codes.delete(f.get("code") || "");
    const verifier = createHash("sha256").update(f.get("code_verifier") || "").digest("base64url");
    if (f.get("grant_type") !== "authorization_code" || !grant || verifier !== grant.challenge ||
        (f.get("resource") && f.get("resource") !== audience)) {
      return json({ error: "invalid_grant" }, 400);
    }
    return json({ access_token: mint(grant.scope), token_type: "Bearer", expires_in: 600, scope: grant.scope });
  }
  if (req.url === "/.well-known/oauth-authorization-server") {
    return json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
    });
  }
  if (req.url === "/jwks") return json({ keys: [jwk] });
  res.writeHead(404);
  res.end();
});
server.listen(0, "127.0.0.1", () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(JSON.stringify({ issuer, token: mint("storelink.read storelink.write"), read_token: mint("storelink.read") }) + "\n");
});
