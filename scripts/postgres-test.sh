#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests, on 127.0.0.1 only.
#
#   scripts/postgres-test.sh start     install (Debian package) if missing, create and start a
#                                      cluster, print `export TEST_DATABASE_URL=...` on stdout
#   scripts/postgres-test.sh stop      stop it (by the postmaster's PID) and delete its files
#   scripts/postgres-test.sh restart   stop and start the same cluster on the same port
#   scripts/postgres-test.sh down|up   stop the server keeping its data / start it again
#                                      (the end-to-end tests use them for an outage)
#   scripts/postgres-test.sh run CMD…  start, run CMD with TEST_DATABASE_URL set, always stop
#
# A developer runs `eval "$(scripts/postgres-test.sh start)"`, then the tests, then `stop`.
# The cluster lives in a temporary directory named in .tools/postgres/state-<checkout>, one
# per checkout (git worktrees may share one .tools and must not share a cluster); messages go to
# stderr so that stdout can be eval'ed. initdb refuses to run as root, so as root the
# cluster belongs to the `postgres` user that the Debian package creates. Tests run with
# fsync=off (a throwaway cluster needs no durability); PG_FSYNC=on for figures that mean
# something, as `make bench` does.
set -euo pipefail
shopt -s inherit_errexit # a failing step inside $(…) stops the script too

# runuser lives in /usr/sbin, which a minimal PATH (a CI runner's, or `env -i`) may leave out.
PATH="$PATH:/usr/sbin:/sbin"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE_DIR="$ROOT/.tools/postgres"
# One cluster per checkout: its path's checksum names the state file.
STATE="$STATE_DIR/state-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
PG_VERSION="${PG_VERSION:-15}"
PG_BIN="/usr/lib/postgresql/$PG_VERSION/bin"
DB_NAME=storelink_test
DB_USER=storelink

say() { echo "postgres-test: $*" >&2; }
die() { say "$*"; exit 1; }

# as runs a command as the cluster's owner.
as() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install() {
	[ -x "$PG_BIN/initdb" ] && return
	[ "$(id -u)" = 0 ] || die "PostgreSQL $PG_VERSION is not installed in $PG_BIN; run as root once, or: sudo apt-get install postgresql-$PG_VERSION"
	say "installing postgresql-$PG_VERSION from Debian's packages"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "postgresql-$PG_VERSION" >&2
	[ -x "$PG_BIN/initdb" ] || die "installed postgresql-$PG_VERSION but $PG_BIN/initdb is missing"
}

# The cluster's ports lie below Linux's ephemeral range (32768-60999 by
# default): the tests take the server down and up again on the same port,
# and a port inside that range can meanwhile become the local end of any
# outgoing connection, so that `up` fails with "Address already in use".
PORT_LOW=25432
PORT_HIGH=25532

free_port() {
	local p
	# From a random place in the range, so that runs starting together
	# rarely reach for the same port.
	local off=$((RANDOM % (PORT_HIGH - PORT_LOW)))
	for p in $(seq $((PORT_LOW + off)) "$PORT_HIGH") $(seq "$PORT_LOW" $((PORT_LOW + off - 1))); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
	done
	die "no free port in $PORT_LOW-$PORT_HIGH"
}

load() {
	[ -f "$STATE" ] || die "no cluster is running (no $STATE); run: $0 start"
	# shellcheck disable=SC1090
	. "$STATE"
}

pg_start() {
	# -w waits until the server accepts connections; the log says why when it does not.
	as "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDIR/socket -c max_connections=200 -c fsync=${PG_FSYNC:-off}" \
		start >&2 || { cat "$PGDIR/server.log" >&2; die "the server did not start"; }
}

# pg_first_start picks a free port and starts the new cluster on it. Another
# process may take the port between the check and the bind; then it tries
# the next free one, a few times.
pg_first_start() {
	local attempt
	for attempt in 1 2 3 4 5; do
		PGPORT="$(free_port)"
		if as "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDIR/socket -c max_connections=200 -c fsync=${PG_FSYNC:-off}" \
			start >&2; then
			return
		fi
		grep -q "Address already in use" "$PGDIR/server.log" || break
		say "port $PGPORT was taken before the server bound it (attempt $attempt); trying another"
		as rm -f "$PGDIR/server.log"
	done
	cat "$PGDIR/server.log" >&2
	die "the server did not start"
}

start() {
	install
	if [ -f "$STATE" ]; then
		load
		if [ -f "$PGDIR/data/postmaster.pid" ] && kill -0 "$(head -1 "$PGDIR/data/postmaster.pid")" 2>/dev/null; then
			say "already running on port $PGPORT"
			echo "export TEST_DATABASE_URL='$URL'"
			echo "export TEST_POSTGRES_SCRIPT='$ROOT/scripts/postgres-test.sh'"
			return
		fi
		rm -rf "$PGDIR" "$STATE"
	fi
	mkdir -p "$STATE_DIR"
	PGDIR="$(mktemp -d "${TMPDIR:-/tmp}/storelink-pg.XXXXXX")"
	mkdir -p "$PGDIR/socket"
	local pw
	pw="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
	echo "$pw" >"$PGDIR/pwfile"
	chmod 600 "$PGDIR/pwfile"
	if [ "$(id -u)" = 0 ]; then chown -R postgres: "$PGDIR"; fi
	as "$PG_BIN/initdb" -D "$PGDIR/data" -U "$DB_USER" --pwfile="$PGDIR/pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$PGDIR/initdb.log" 2>&1 \
		|| { cat "$PGDIR/initdb.log" >&2; die "initdb failed"; }
	pg_first_start
	as "$PG_BIN/createdb" -h "$PGDIR/socket" -p "$PGPORT" -U "$DB_USER" "$DB_NAME"
	URL="postgres://$DB_USER:$pw@127.0.0.1:$PGPORT/$DB_NAME?sslmode=disable"
	umask 077
	printf 'PGDIR=%q\nPGPORT=%q\nURL=%q\n' "$PGDIR" "$PGPORT" "$URL" >"$STATE"
	say "running on 127.0.0.1:$PGPORT, data in $PGDIR"
	echo "export TEST_DATABASE_URL='$URL'"
	echo "export TEST_POSTGRES_SCRIPT='$ROOT/scripts/postgres-test.sh'"
}

# stop_server stops the postmaster by the PID in its pid file and waits for it to go.
stop_server() {
	local pidfile="$PGDIR/data/postmaster.pid" pid i
	[ -f "$pidfile" ] || return 0
	pid="$(head -1 "$pidfile")"
	kill -INT "$pid" 2>/dev/null || return 0 # SIGINT: PostgreSQL's fast shutdown
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	say "PID $pid did not stop in 10s; killing it"
	kill -KILL "$pid" 2>/dev/null || true
}

stop() {
	[ -f "$STATE" ] || { say "nothing to stop"; return; }
	load
	stop_server
	rm -rf "$PGDIR" "$STATE"
	say "stopped"
}

restart() {
	load
	stop_server
	pg_start
	say "restarted on port $PGPORT"
}

case "${1:-}" in
start) start ;;
down)
	load
	stop_server
	say "down (data kept; \`$0 up\` starts it again)"
	;;
up)
	load
	if [ -f "$PGDIR/data/postmaster.pid" ] && kill -0 "$(head -1 "$PGDIR/data/postmaster.pid")" 2>/dev/null; then
		say "already up"
	else
		pg_start
	fi
	;;
stop) stop ;;
restart) restart ;;
run)
	shift
	[ $# -gt 0 ] || die "usage: $0 run COMMAND [ARGS…]"
	trap stop EXIT
	env_lines="$(start)"
	eval "$env_lines"
	"$@"
	;;
-h | --help | help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" ;;
*) die "usage: $0 start|stop|restart|down|up|run COMMAND…" ;;
esac
