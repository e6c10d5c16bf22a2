#!/usr/bin/env bash
# Runs the official MCP conformance suite against one default
# `storelink-mcp serve --http` (no transport flags): first the scenarios
# revision 2025-11-25 requires (initialize handshake and sessions), then those
# 2026-07-28 requires (stateless, per-request _meta), both against the same
# process, because one endpoint serves both revisions. Checks that need the
# suite's own fixture tools, prompts or resources are listed, one check per
# entry and each with its reason, in baseline-<revision>.yml; nothing else
# may fail.
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

# No token: the suite cannot send one, and the server runs without
# authentication only on loopback.
start_server "$work" --
for revision in 2025-11-25 2026-07-28; do
	echo "== conformance --requirements $revision against $server_url"
	"$node" "$suite" server --url "$server_url" --requirements "$revision" \
		--expected-failures "$here/baseline-$revision.yml" -o "$work/$revision" >"$work/$revision.log" 2>&1 || {
		cat "$work/$revision.log"
		echo "conformance ($revision): unexpected results (see above)" >&2
		exit 1
	}
	sed -n '/=== SUMMARY ===/,$p' "$work/$revision.log"
done
stop_server
