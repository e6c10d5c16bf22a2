#!/usr/bin/env bash
# Drives storelink-mcp with the MCP Inspector CLI over both transports, as
# docs/mcp-clients.md shows: stdio (the Inspector spawns the binary) and
# Streamable HTTP (a started server, reached with a bearer token). Each must
# list exactly the five korral_ tools and answer a read tool call. Last, the
# Inspector logs in through OAuth, finding the identity provider from the
# server's protected resource metadata.
#
# Usage: inspector.sh STORELINK_MCP NODE INSPECTOR_JS
set -euo pipefail

STORELINK_MCP=$1
node=$2
inspector=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=server.sh
. "$here/server.sh"

work=$(mktemp -d)
trap 'stop_server || true; rm -rf "$work"' EXIT
# The Inspector keeps a catalog under HOME; keep it out of the user's.
export HOME=$work MCP_CATALOG_PATH=$work/catalog.json

want="korral_check_stock_risk
korral_get_order_status
korral_list_authorized_stores
korral_list_recent_sales
korral_raise_replenishment_order"

# check_tools LABEL FILE: the tool names in a tools/list JSON result.
check_tools() {
	local got
	got=$("$node" -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		console.log((r.result ?? r).tools.map(t => t.name).sort().join("\n"))' "$2")
	if [ "$got" != "$want" ]; then
		echo "$1: tools/list returned:" >&2
		echo "$got" >&2
		echo "want exactly:" >&2
		echo "$want" >&2
		exit 1
	fi
	echo "$1: tools/list has the five korral_ tools"
}

inspect() { "$node" "$inspector" --cli -q --format json "$@"; }

# stdio: the Inspector starts the binary itself; -e passes its environment.
inspect --method tools/list -e STATE_DB_PATH="$work/stdio.db" -- "$STORELINK_MCP" >"$work/stdio-tools.json"
check_tools stdio "$work/stdio-tools.json"
inspect --method tools/call --tool-name korral_list_authorized_stores \
	-e STATE_DB_PATH="$work/stdio.db" -- "$STORELINK_MCP" >"$work/stdio-call.json"
echo "stdio: korral_list_authorized_stores answered"

# HTTP with a bearer token.
token=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
printf '# label token\ninspector-check %s\n' "$token" >"$work/tokens"
chmod 600 "$work/tokens"
mkdir -p "$work/http"
start_server "$work/http" MCP_AUTH_TOKENS_FILE="$work/tokens" --
if inspect --method tools/list "$server_url" >"$work/http-denied.json" 2>&1; then
	echo "http: tools/list without a token succeeded" >&2
	exit 1
fi
# The Inspector takes the 401 as a cue to start an OAuth login, which it
# cannot do without a terminal; either way the server must have said no.
if ! grep -q '"reason":"no bearer token"' "$server_log"; then
	echo "http: the server did not refuse the request without a token:" >&2
	cat "$work/http-denied.json" >&2
	exit 1
fi
echo "http: refused without a token"
inspect --method tools/list "$server_url" --header "Authorization: Bearer $token" >"$work/http-tools.json"
check_tools http "$work/http-tools.json"
inspect --method tools/call --tool-name korral_list_authorized_stores \
	"$server_url" --header "Authorization: Bearer $token" >"$work/http-call.json"
echo "http: korral_list_authorized_stores answered"
stop_server
if ! grep -q '"client":"token:inspector-check' "$server_log"; then
	echo "http: the audit line does not name the token label" >&2
	exit 1
fi
echo "http: the audit trail names the caller token:inspector-check"

# OAuth: the server accepts access tokens of an identity provider (here a
# throwaway one on loopback, issuer.mjs). Without a token the server's 401
# must point to its protected resource metadata; the Inspector, given no
# token, must find the metadata from there, learn the provider, the scopes
# and the resource, and send its user to the provider's authorization page.
# This script plays the user's browser: it opens that page, whose redirect
# hands the code back to the Inspector, which then fetches its token and
# lists the tools with it.
free_port() { "$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port=$(free_port)
public="http://127.0.0.1:$port"
"$node" "$here/issuer.mjs" "$public/mcp" >"$work/issuer.json" &
issuer_pid=$!
trap 'stop_server || true; kill "$issuer_pid" 2>/dev/null || true; kill "${inspector_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do [ -s "$work/issuer.json" ] && break; sleep 0.1; done
field() { "$node" -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[process.argv[2]])' "$work/issuer.json" "$1"; }
issuer=$(field issuer)
mkdir -p "$work/oauth"
start_server "$work/oauth" OAUTH_ISSUER="$issuer" MCP_PUBLIC_URL="$public" -- --http "127.0.0.1:$port"

# The 401 and the metadata, fetched as a client does: the challenge's
# resource_metadata URL, and what it names.
"$node" --input-type=module -e '
const [url, issuer, resource] = process.argv.slice(1);
const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "probe", version: "1" } } }) });
const challenge = res.headers.get("www-authenticate") || "";
const m = /resource_metadata="([^"]+)"/.exec(challenge);
if (res.status !== 401 || !m) { console.error(`http: no token: status ${res.status}, WWW-Authenticate ${challenge}`); process.exit(1); }
const meta = await (await fetch(m[1])).json();
if (meta.resource !== resource || meta.authorization_servers?.[0] !== issuer || !meta.scopes_supported?.includes("storelink.write")) {
  console.error(`http: protected resource metadata at ${m[1]}: ${JSON.stringify(meta)}`); process.exit(1);
}
console.log(`oauth: the 401 points to ${m[1]}, which names ${issuer}`);
' "$server_url" "$issuer" "$public/mcp" 2>&1 || exit 1

callback_port=$(free_port)
MCP_AUTO_OPEN_ENABLED=true BROWSER=true "$node" "$inspector" --cli --format json --client-id inspector-cli \
	--callback-url "http://127.0.0.1:$callback_port/oauth/callback" --method tools/list "$server_url" \
	</dev/null >"$work/oauth-tools.json" 2>"$work/oauth-inspector.err" &
inspector_pid=$!
login=""
for _ in $(seq 1 300); do
	login=$(sed -n 's/.*Please navigate to: \(http[^ ]*\).*/\1/p' "$work/oauth-inspector.err" | head -n 1)
	[ -n "$login" ] && break
	kill -0 "$inspector_pid" 2>/dev/null || break
	sleep 0.1
done
case "$login" in
"$issuer/authorize?"*resource=http%3A%2F%2F127.0.0.1%3A"$port"%2Fmcp*) ;;
*)
	echo "oauth: the Inspector did not send its user to $issuer/authorize for resource $public/mcp:" >&2
	cat "$work/oauth-inspector.err" >&2
	exit 1
	;;
esac
echo "oauth: the Inspector found the metadata and asks $issuer to authorize it"
# The user's browser: the provider redirects at once to the Inspector's callback.
"$node" --input-type=module -e 'const r = await fetch(process.argv[1]); if (!r.ok) { console.error(`callback: HTTP ${r.status}`); process.exit(1); }' \
	"$login"
rc=0
wait "$inspector_pid" || rc=$?
inspector_pid=""
if [ "$rc" -ne 0 ]; then
	echo "oauth: the Inspector exited with $rc after the login:" >&2
	cat "$work/oauth-inspector.err" "$work/oauth-tools.json" >&2
	exit 1
fi
check_tools oauth "$work/oauth-tools.json"
stop_server
if ! grep -q '"msg":"auth.oauth"' "$server_log"; then
	echo "oauth: the server did not log its identity provider" >&2
	exit 1
fi
echo "oauth: the Inspector logged in with the provider and listed the tools with its access token"
