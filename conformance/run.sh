#!/usr/bin/env bash
# Runs the official MCP conformance suite against storelink-mcp over
# Streamable HTTP, once with sessions and once stateless. Scenarios that need
# the suite's own fixture tools, prompts or resources are listed, each with
# its reason, in baseline.yml (and baseline-stateless.yml for what only a
# stateful server can do).
#
# Usage: run.sh STORELINK_MCP NODE CONFORMANCE_JS
set -euo pipefail

STORELINK_MCP=$1
node=$2
suite=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=server.sh
. "$here/server.sh"

work=$(mktemp -d)
trap 'stop_server || true; rm -rf "$work"' EXIT

# The stateless run expects baseline.yml's failures plus its own.
cp "$here/baseline.yml" "$work/baseline-stateful.yml"
{ cat "$here/baseline.yml"; sed '/^server:/d' "$here/baseline-stateless.yml"; } >"$work/baseline-stateless.yml"

for mode in stateful stateless; do
	flags=()
	[ "$mode" = stateless ] && flags=(--stateless)
	mkdir -p "$work/$mode"
	# No token: the suite cannot send one, and the server runs without
	# authentication only on loopback.
	start_server "$work/$mode" -- "${flags[@]}"
	echo "== conformance ($mode) against $server_url"
	"$node" "$suite" server --url "$server_url" \
		--expected-failures "$work/baseline-$mode.yml" -o "$work/$mode/results" >"$work/$mode/suite.log" 2>&1 || {
		cat "$work/$mode/suite.log"
		echo "conformance ($mode): unexpected results (see above)" >&2
		exit 1
	}
	sed -n '/=== SUMMARY ===/,$p' "$work/$mode/suite.log"
	stop_server
done
