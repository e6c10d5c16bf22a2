#!/usr/bin/env bash
# Runs every benchmark of the toolkit and writes bench/out/results.md (printed
# at the end) and results.json: the Go benchmarks of the hot code, then the
# load driver against the real binaries, with wrk and Prism for the mock
# comparison. Installs wrk (apt) and Prism (npm, into .tools/) when missing.
#
# Environment: BENCH_RUNS (default 3) repetitions; BENCH_QUICK=1 for one
# short run while trying things out; BENCH_OUT for another output directory;
# BENCH_ONLY=phase,... runs only those phases of the load driver (cold,
# stdio, external, http, writes, scale, distance, telemetry, mocks, cpu;
# e.g. BENCH_ONLY=distance) and skips the Go benchmarks and the TypeScript
# client comparisons, installing and starting only what those phases need.
# Figures from a busy machine are not worth keeping: the script warns when
# the load average is high, and docs/benchmarks.md says how to wait for a
# quiet one.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${BENCH_OUT:-$ROOT/bench/out}
RUNS=${BENCH_RUNS:-3}
QUICK=${BENCH_QUICK:-}
ONLY=${BENCH_ONLY:-}
PRISM_VERSION=5.16.0
PRISM_DIR=$ROOT/.tools/prism-$PRISM_VERSION
PRISM=$PRISM_DIR/node_modules/.bin/prism

say() { printf 'bench: %s\n' "$*" >&2; }
# want PHASE: whether this run measures PHASE (every phase without BENCH_ONLY).
want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

# One exit trap for everything started or made below (a second trap would
# replace the first and leave PostgreSQL running).
pg_started="" tshome="" mockpid=""
cleanup() {
	[ -z "$mockpid" ] || kill "$mockpid" 2>/dev/null || true
	[ -z "$tshome" ] || rm -rf "$tshome"
	[ -z "$pg_started" ] || scripts/postgres-test.sh stop
}
trap cleanup EXIT

mkdir -p "$OUT/bin"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
load1=${LOAD_START%% *}
say "1-minute load average at the start: $load1"
if awk -v l="$load1" 'BEGIN { exit !(l >= 0.7) }'; then
	say "warning: 1-minute load average is $load1; figures taken now are noisy (see docs/benchmarks.md)"
fi

# wrk for the mock throughput comparison.
WRK=$(command -v wrk || true)
if [ -z "$WRK" ] && want mocks; then
	say "installing wrk (apt)"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=$(command -v sudo || true)
	if { $SUDO apt-get install -y wrk >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null 2>&1 && $SUDO apt-get install -y wrk >/dev/null 2>&1; }; }; then
		WRK=$(command -v wrk)
	else
		say "could not install wrk: the mock throughput comparison is skipped"
	fi
fi

# Prism, the reference mock, pinned.
if ! want mocks; then
	PRISM=""
elif [ ! -x "$PRISM" ]; then
	if command -v npm >/dev/null; then
		say "installing Prism $PRISM_VERSION into $PRISM_DIR"
		mkdir -p "$PRISM_DIR"
		npm install --silent --no-audit --no-fund --prefix "$PRISM_DIR" "@stoplight/prism-cli@$PRISM_VERSION" >&2 || true
	fi
	[ -x "$PRISM" ] || { say "Prism is not available: the Prism comparison is skipped"; PRISM=""; }
fi

say "building the binaries"
go build -o "$OUT/bin/storelink-mcp" ./cmd/storelink-mcp
# The storelink-mcp the release archives and the image ship (ADR 0015).
release=""
if want cold || want cpu; then
	go build -tags nodemo -o "$OUT/bin/storelink-mcp-release" ./cmd/storelink-mcp
	release=$OUT/bin/storelink-mcp-release
fi
go build -o "$OUT/bin/mockstorelink" ./cmd/mockstorelink
go build -o "$OUT/bin/loadgen" ./bench/loadgen
# The floor: a bare go-sdk server with one echo tool (bench/echoserver).
echoserver=""
if want scale || want cpu; then
	go build -o "$OUT/bin/echoserver" ./bench/echoserver
	echoserver=$OUT/bin/echoserver
fi

count=$RUNS
benchtime=1s
loadflags=(--runs "$RUNS")
if [ -n "$QUICK" ]; then
	count=1
	benchtime=100ms
	loadflags=(--quick)
fi
[ -z "$ONLY" ] || loadflags+=(--only "$ONLY")

gobench=$OUT/gobench.txt
: >"$gobench"
gotest() { go test -run '^$' -bench "$1" -benchmem -count "$count" -benchtime "$benchtime" "${@:2}" | tee -a "$gobench" >&2; }
# The state store runs on SQLite and on PostgreSQL side by side; PostgreSQL is
# a throwaway one from scripts/postgres-test.sh unless TEST_DATABASE_URL names one.
# Without one, the PostgreSQL figures (state benchmarks, two-replica writes) are skipped.
if [ -z "${TEST_DATABASE_URL:-}" ] && { [ -z "$ONLY" ] || want writes || want scale; }; then
	if pg_env="$(PG_FSYNC=on scripts/postgres-test.sh start)"; then
		eval "$pg_env"
		pg_started=1
	else
		say "no PostgreSQL could be started: the PostgreSQL benchmarks and the two-replica write phase are skipped"
	fi
fi
if [ -z "$ONLY" ]; then
	say "Go benchmarks (-count $count -benchtime $benchtime)"
	(cd mcpserver && gotest . ./internal/projection ./internal/keyring ./internal/state/sqlite ./internal/state/postgres ./internal/tools)
	(cd mockstorelink && gotest BenchmarkServe .)
	# 4 MiB bodies of every shape through the check and the proxy (ADR 0035): one
	# request per run, since one op is the figure and some take seconds.
	(cd openapi && gotest BenchmarkWideBody ./contract -benchtime 1x)
	gotest . ./bench
else
	say "BENCH_ONLY=$ONLY: the Go benchmarks and the TypeScript client comparisons are skipped"
fi

# tsfloor is the per-call overhead against the floor: the TypeScript SDK
# client (the one `make tsclient` installs) calls the bare go-sdk echo
# server, server-everything's echo when installed, and storelink-mcp's
# trivial call and risk check, in alternating rounds (bench/tsclient/floor.mjs).
tsfloor() {
	local dir=$ROOT/.tools/tsclient-1.32.2
	if [ ! -d "$dir/node_modules/@modelcontextprotocol/sdk" ] || ! command -v node >/dev/null; then
		say "the TypeScript SDK client is not installed (make tsclient): the per-call floor comparison is skipped"
		return 0
	fi
	say "TypeScript SDK client: per-call overhead against the bare go-sdk echo server"
	cp bench/tsclient/floor.mjs "$dir/floor.mjs"
	local home
	home=$(mktemp -d)
	local env
	env=$(printf '{"HOME":"%s","STATE_DB_PATH":"%s/state.db","STORELINK_MOCK_NOW":"2026-11-27T14:30:00+01:00"}' "$home" "$home")
	local servers
	servers=$(printf '[{"name":"bare go-sdk v1.8.0, echo","command":"%s","tool":"echo","arguments":{"message":"hello"}}' "$OUT/bin/echoserver")
	if [ -n "${EVERYTHING:-}" ] && [ -f "$EVERYTHING" ]; then
		servers+=$(printf ',{"name":"TS server-everything, echo","command":"%s","args":["%s","stdio"],"tool":"echo","arguments":{"message":"hello"}}' "$(command -v node)" "$EVERYTHING")
	fi
	servers+=$(printf ',{"name":"storelink-mcp, korral_list_authorized_stores","command":"%s","env":%s,"tool":"korral_list_authorized_stores","target":{"p50_ratio_max":1.15,"rate_ratio_min":0.9}}' "$OUT/bin/storelink-mcp" "$env")
	servers+=$(printf ',{"name":"storelink-mcp, korral_check_stock_risk (butter at 47)","command":"%s","env":%s,"tool":"korral_check_stock_risk","arguments":{"store_id":"47","sku":"8847291"}}]' "$OUT/bin/storelink-mcp" "$env")
	local rounds=7
	[ -z "$QUICK" ] || rounds=3
	TSFLOOR_ROUNDS=$rounds node "$dir/floor.mjs" "$servers" >"$OUT/tsfloor.json"
	{ echo; node "$dir/floor.mjs" --markdown "$OUT/tsfloor.json"; } >>"$OUT/results.md"
	rm -rf "$home"
}

# tscpu is the cpu phase's three servers with the TypeScript SDK client,
# the client of issue 44's table (bench/tsclient/floor.mjs): the echo server,
# then storelink-mcp's trivial call and risk check, each on its own process,
# against one separate mockstorelink process started here.
tscpu() {
	local dir=$ROOT/.tools/tsclient-1.32.2
	if [ ! -d "$dir/node_modules/@modelcontextprotocol/sdk" ] || ! command -v node >/dev/null; then
		say "the TypeScript SDK client is not installed (make tsclient): the cpu phase's TypeScript figures are skipped"
		return 0
	fi
	say "TypeScript SDK client: the cpu phase's servers, storelink-mcp against a separate mockstorelink"
	cp bench/tsclient/floor.mjs "$dir/floor.mjs"
	local home url=""
	home=$(mktemp -d)
	"$OUT/bin/mockstorelink" --addr 127.0.0.1:0 --no-response-validation --log-level error \
		--keyring-out "$home/keyring.json" >"$home/url" 2>/dev/null &
	mockpid=$!
	for _ in $(seq 100); do
		url=$(head -n1 "$home/url")
		[ -z "$url" ] || break
		sleep 0.1
	done
	if [ -z "$url" ]; then
		say "mockstorelink printed no URL: the cpu phase's TypeScript figures are skipped"
	else
		local servers
		tsenv() { printf '{"HOME":"%s","STATE_DB_PATH":"%s/%s.db","UPSTREAM_BASE_URL":"%s","STORELINK_KEYRING_FILE":"%s/keyring.json"}' "$home" "$home" "$1" "$url" "$home"; }
		servers=$(printf '[{"name":"bare go-sdk v1.8.0, echo","command":"%s","tool":"echo","arguments":{"message":"hello"}}' "$OUT/bin/echoserver")
		servers+=$(printf ',{"name":"storelink-mcp, korral_list_authorized_stores","command":"%s","env":%s,"tool":"korral_list_authorized_stores","target":{"p50_ratio_max":1.2,"rate_ratio_min":0.9}}' "$OUT/bin/storelink-mcp" "$(tsenv trivial)")
		servers+=$(printf ',{"name":"storelink-mcp, korral_check_stock_risk (butter at 47)","command":"%s","env":%s,"tool":"korral_check_stock_risk","arguments":{"store_id":"47","sku":"8847291"}}]' "$OUT/bin/storelink-mcp" "$(tsenv risk)")
		local rounds=5
		[ -z "$QUICK" ] || rounds=2
		{
			echo
			echo "## CPU per answer (issue 44) with the TypeScript SDK client"
			echo
			echo "The cpu phase's three servers with the client of issue 44's table; storelink-mcp against a separate \`mockstorelink\` process, both on the real clock."
			echo
		} >>"$OUT/results.md"
		# An optional column: a failure is reported, and the Go client's figures stand.
		if TSFLOOR_ROUNDS=$rounds node "$dir/floor.mjs" "$servers" >"$OUT/tscpu.json" 2>"$home/err"; then
			node "$dir/floor.mjs" --markdown "$OUT/tscpu.json" >>"$OUT/results.md"
		else
			cat "$home/err" >&2
			say "the TypeScript client's run failed: its figures are left out"
			printf 'Not measured: the run failed (%s).\n' "$(grep -m1 -o 'Error: .*' "$home/err" | tr '|' '/')" >>"$OUT/results.md"
		fi
	fi
	kill "$mockpid" 2>/dev/null || true
	wait "$mockpid" 2>/dev/null || true
	mockpid=""
	rm -rf "$home"
}

say "load driver"
"$OUT/bin/loadgen" "${loadflags[@]}" \
	--server "$OUT/bin/storelink-mcp" --release-server "$release" --mock "$OUT/bin/mockstorelink" \
	--wrk "$WRK" --prism "$PRISM" --spec openapi/storelink.yaml \
	--gobench "$gobench" --load-before "$LOAD_START" --out "$OUT" \
	--database-url "${TEST_DATABASE_URL:-}" \
	--echo-server "$echoserver" --scale-http-args "serve --http {addr} --stateless"
if [ -n "$ONLY" ]; then
	! want cpu || tscpu
	say "1-minute load average at the end: $(cut -d' ' -f1 /proc/loadavg)"
	say "written: $OUT/results.md and $OUT/results.json"
	exit 0
fi
# The client most hosts embed (the TypeScript SDK's) against this server and
# the reference @modelcontextprotocol/server-everything, in the same run: the
# time a host waits before its first call, a trivial call, and throughput.
TS_SDK_VERSION=1.32.2
EVERYTHING_VERSION=2026.8.31
TS_DIR=$ROOT/.tools/tsbench-$TS_SDK_VERSION-$EVERYTHING_VERSION
EVERYTHING=$TS_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js
if [ ! -f "$EVERYTHING" ] && command -v npm >/dev/null; then
	say "installing the TypeScript SDK $TS_SDK_VERSION and server-everything $EVERYTHING_VERSION into $TS_DIR"
	mkdir -p "$TS_DIR"
	npm install --silent --no-audit --no-fund --prefix "$TS_DIR" \
		"@modelcontextprotocol/sdk@$TS_SDK_VERSION" "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2 || true
fi
if [ -f "$EVERYTHING" ] && command -v node >/dev/null; then
	say "TypeScript SDK client: storelink-mcp beside server-everything"
	cp bench/tsclient/bench.mjs "$TS_DIR/bench.mjs"
	tshome=$(mktemp -d)
	tsruns=15 tscalls=400
	[ -z "$QUICK" ] || { tsruns=3 tscalls=50; }
	servers=$(printf '[{"name":"storelink-mcp","command":"%s","env":{"HOME":"%s","STATE_DB_PATH":"%s/state.db"},"tool":"korral_list_authorized_stores"},{"name":"server-everything","command":"%s","args":["%s","stdio"],"tool":"echo","arguments":{"message":"hello"}}]' \
		"$OUT/bin/storelink-mcp" "$tshome" "$tshome" "$(command -v node)" "$EVERYTHING")
	TSBENCH_RUNS=$tsruns TSBENCH_CALLS=$tscalls node "$TS_DIR/bench.mjs" "$servers" >"$OUT/tsclient.json"
	{ echo; node "$TS_DIR/bench.mjs" --markdown "$OUT/tsclient.json"; } >>"$OUT/results.md"
else
	say "node or npm is missing: the TypeScript SDK client comparison is skipped"
fi
tsfloor
tscpu
say "1-minute load average at the end: $(cut -d' ' -f1 /proc/loadavg)"
say "written: $OUT/results.md and $OUT/results.json"
