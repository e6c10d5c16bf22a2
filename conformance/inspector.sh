#!/usr/bin/env bash
# Drives storelink-mcp with the MCP Inspector CLI over both transports, as
# docs/mcp-clients.md shows: stdio (the Inspector spawns the binary) and
# Streamable HTTP (a started server, reached with a bearer token). Each must
# list exactly the five korral_ tools and answer a read tool call.
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
