# Sourced by the scripts beside it: start and stop one storelink-mcp
# `serve --http` on a free loopback port, with the embedded StoreLink and a
# throwaway state database, and nothing inherited from the caller's
# environment but PATH.
#
# After start_server, $server_url is the MCP endpoint and $server_pid the
# process. stop_server sends SIGTERM and expects a clean exit; it also runs
# from the EXIT trap, so a failing check never leaves a server behind.

server_pid=""
server_url=""
server_log=""

# start_server WORKDIR [ENV=VALUE...] -- [serve flags...]
start_server() {
	local work=$1
	shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	server_log=$work/server.log
	env -i PATH="$PATH" HOME="$work" STATE_DB_PATH="$work/state.db" "${envs[@]}" \
		"$STORELINK_MCP" serve --http 127.0.0.1:0 "$@" 2>"$server_log" &
	server_pid=$!
	local addr="" i
	for i in $(seq 1 150); do
		addr=$(sed -n 's/.*"msg":"http.listening","addr":"\([^"]*\)".*/\1/p' "$server_log" | head -n 1)
		[ -n "$addr" ] && break
		if ! kill -0 "$server_pid" 2>/dev/null; then
			echo "storelink-mcp exited before listening:" >&2
			cat "$server_log" >&2
			server_pid=""
			return 1
		fi
		sleep 0.1
	done
	if [ -z "$addr" ]; then
		echo "storelink-mcp did not report its address within 15 s:" >&2
		cat "$server_log" >&2
		return 1
	fi
	server_url="http://$addr/mcp"
}

stop_server() {
	[ -n "$server_pid" ] || return 0
	local pid=$server_pid rc=0
	server_pid=""
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "storelink-mcp (pid $pid) exited with $rc after SIGTERM:" >&2
		tail -n 20 "$server_log" >&2
		return 1
	fi
}
