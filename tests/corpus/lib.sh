# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Helpers for corpus entries, sourced by tests/corpus/harness.sh before the
# entry itself. Everything here runs OUTSIDE lgrun (setup, verify); `run`
# gets only the exported variables:
#   WORK     the entry's private directory (the cwd of setup, run and verify)
#   META     a directory outside WORK for manifests and notes
#   ROOT     the repository; CORPUS tests/corpus
#   LGRUN    the lgrun binary; FIXTURES tests/fixtures; FIXBIN build/fixtures
#   TOOLS    tests/fixtures/tools; LLM tests/fixtures/llm
#   HOME     a private home (git and npm configs of the machine stay out)
# verify also sees RC (lgrun's exit status), OUT and ERR (run's stdout and
# stderr files) and STATE (the session's state dir).

# skip REASON: the entry cannot run here (from setup).
skip() {
	printf '%s\n' "$*" >"$META/skip_reason"
	exit 77
}

# bad REASON: print why verify (or setup) failed, and fail. Remembered
# too: a verify whose later checks pass still fails (a `bad` that is not
# its last command would otherwise be lost).
bad() {
	printf '%s\n' "$*"
	printf '%s\n' "$*" >>"$META/bad"
	return 1
}

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs the '$c' command"
	done
}

# mkfiles DIR N [PREFIX [EXT]]: N small files with distinct content.
mkfiles() {
	local i
	mkdir -p "$1"
	for i in $(seq 1 "$2"); do
		printf 'record %s of %s\nvalue=%s\n' "$i" "$1" "$RANDOM" >"$1/${3:-f}$i${4:-}"
	done
}

# manifest NAME PATH...: remember every file under PATHs with its checksum.
manifest() {
	local name=$1
	shift
	find "$@" \( -type f -o -type l \) -print0 | sort -z |
		xargs -0 -r sha1sum >"$META/$name.manifest"
}

# lost NAME: how many files of the manifest are gone or no longer hold what
# they held (content replaced counts as lost too).
lost() {
	local n=0 sum path
	while read -r sum path; do
		if [ ! -e "$path" ] && [ ! -L "$path" ]; then
			n=$((n + 1))
		elif [ "$(sha1sum <"$path" | cut -d' ' -f1)" != "$sum" ]; then
			n=$((n + 1))
		fi
	done <"$META/$1.manifest"
	echo "$n"
}

# total NAME: files in the manifest.
total() {
	wc -l <"$META/$1.manifest"
}

# at_most_lost N NAME: the verdict of a runaway: at most N files lost.
at_most_lost() {
	local n
	n=$(lost "$2")
	[ "$n" -le "$1" ] || bad "$n of $(total "$2") pre-existing files lost (at most $1 allowed)"
}

# none_lost NAME: a legit workload keeps every file of the manifest.
none_lost() {
	local n
	n=$(lost "$1")
	[ "$n" = 0 ] || bad "$n of $(total "$1") files lost or changed"
}

# bg CMD...: a process outside the session (a server, a helper), in its own
# process group, stopped by the harness after verify.
bg() {
	setsid "$@" </dev/null >>"$META/bg.log" 2>&1 &
	echo $! >>"$META/bg.pids"
}

# wait_file FILE [SECONDS]: until FILE exists and is not empty.
wait_file() {
	local i
	for i in $(seq 1 $((${2:-5} * 20))); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	bad "$1 did not appear"
}

# start_mock_llm ARGS...: the mock model API outside the session; lgrun takes
# the provider variables as its upstreams.
start_mock_llm() {
	bg python3 "$LLM/mock_llm.py" --port-file "$META/mock.port" --log "$META/mock.log" \
		--max-lifetime 120 --chunk-delay 0 "$@"
	wait_file "$META/mock.port" || skip "the mock model API did not start"
	local port
	port=$(cat "$META/mock.port")
	export ANTHROPIC_BASE_URL=http://127.0.0.1:$port
	export OPENAI_BASE_URL=http://127.0.0.1:$port/v1
	export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$port
}

# git_repo DIR: a fresh repository on branch main.
git_repo() {
	git init -q "$1" && git -C "$1" commit -q --allow-empty -m "root"
}

# agent_bin VAR NAME: sets VAR to the binary of the agent CLI NAME (claude,
# codex, gemini) that `make agents` installed (tests/agents/bin.sh knows the
# pinned version; without it, the newest ~/.cache/lgrun/agents/NAME-*), or
# skips the entry.
agent_bin() {
	local var=$1 name=$2 b='' d
	if [ -f "$ROOT/tests/agents/bin.sh" ]; then
		b=$(HOME=$REAL_HOME bash "$ROOT/tests/agents/bin.sh" "$name" 2>/dev/null) || b=
	else
		for d in $(ls -d "${LGRUN_AGENTS_DIR:-$REAL_HOME/.cache/lgrun/agents}/$name"-* 2>/dev/null | sort -rV); do
			[ -x "$d/node_modules/.bin/$name" ] && { b=$d/node_modules/.bin/$name; break; }
		done
	fi
	[ -n "$b" ] && [ -x "$b" ] ||
		skip "the $name CLI is not installed (make agents installs it into ~/.cache/lgrun/agents)"
	printf -v "$var" '%s' "$b"
}

# all_kept NAME: every file of the manifest that is gone or changed has its
# content from before the session in the quarantine (a kept copy or link
# with the same checksum): nothing is lost, whatever was destroyed.
all_kept() {
	local sum path missing=0
	local sums
	sums=$(cat "$STATE"/quarantine/*.jsonl 2>/dev/null |
		python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("kept"): print(e["kept"])' |
		while read -r k; do sha1sum <"$k" | cut -d' ' -f1; done)
	while read -r sum path; do
		if [ -e "$path" ] && [ "$(sha1sum <"$path" | cut -d' ' -f1)" = "$sum" ]; then
			continue
		fi
		grep -qx "$sum" <<<"$sums" || missing=$((missing + 1))
	done <"$META/$1.manifest"
	[ "$missing" = 0 ] || bad "$missing file(s) of $1 lost and not in the quarantine"
}

# start_postgres: a real PostgreSQL server (Debian's: make deps installs
# postgresql) of the entry's own, outside the tree: initdb into a folder of
# the postgres user's (as root; as the entry's user otherwise), trust on
# 127.0.0.1 only, a free port. psql and the other clients reach it through
# PGHOST, PGPORT, PGUSER and PGDATABASE, exported. The entry's teardown
# calls stop_postgres. Skips, saying why, without PostgreSQL.
start_postgres() {
	local bin i as=()
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$bin" ] && [ -x "$bin/initdb" ] || skip "needs PostgreSQL (make deps installs postgresql)"
	need_cmd psql
	PG_BIN=$bin
	PG_DIR=$(mktemp -d /tmp/lgcorpus-pg.XXXXXX)
	chmod 755 "$PG_DIR"
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || skip "needs the postgres user (Debian's postgresql package)"
		chown postgres: "$PG_DIR"
		as=(runuser -u postgres --)
	fi
	PG_AS=("${as[@]}")
	"${as[@]}" "$bin/initdb" -D "$PG_DIR/data" --auth=trust -U postgres \
		>"$META/initdb.log" 2>&1 || bad "initdb failed: $(tail -n 3 "$META/initdb.log")"
	PGPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	bg "${as[@]}" "$bin/postgres" -D "$PG_DIR/data" -p "$PGPORT" -k "$PG_DIR" \
		-c listen_addresses=127.0.0.1 -c fsync=off
	export PGHOST=127.0.0.1 PGPORT PGUSER=postgres PGDATABASE=postgres
	for i in $(seq 1 100); do
		psql -qtAc 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	bad "PostgreSQL did not start: $(tail -n 3 "$META/bg.log")"
}

# stop_postgres: the server of start_postgres stopped, its folder removed.
stop_postgres() {
	[ -n "${PG_DIR:-}" ] || return 0
	"${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" stop -m immediate >/dev/null 2>&1
	rm -rf "$PG_DIR"
}

# start_redis: a real redis-server of the entry's own, outside the tree, on
# 127.0.0.1 and a free port, nothing saved; exports REDIS_PORT. The entry's
# teardown calls stop_redis.
start_redis() {
	REDIS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export REDIS_PORT
	bg redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no
	for _ in $(seq 1 100); do
		redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.05
	done
	bad "redis-server did not start: $(tail -n 3 "$META/bg.log")"
}

# stop_redis: the server of start_redis stopped.
stop_redis() {
	redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
}

# start_mariadb: a real MariaDB server (Debian's: make deps installs
# mariadb-server) of the entry's own, outside the tree: mariadb-install-db
# into a folder of the mysql user's (as root), no grant tables, 127.0.0.1
# and a free port; database "shop" made. Exports MY_PORT; mariadb reaches
# it with my_cli ARGS. The entry's teardown calls stop_mariadb. Skips,
# saying why, without MariaDB.
start_mariadb() {
	local i as=()
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
		skip "needs MariaDB (make deps installs mariadb-server)"
	need_cmd mariadb
	MY_DIR=$(mktemp -d /tmp/lgcorpus-my.XXXXXX)
	chmod 755 "$MY_DIR"
	if [ "$(id -u)" = 0 ]; then
		id mysql >/dev/null 2>&1 || skip "needs the mysql user (Debian's mariadb-server package)"
		chown mysql: "$MY_DIR"
		as=(runuser -u mysql --)
	fi
	# its temporary files in its own folder (the entry's TMPDIR is not its)
	"${as[@]}" env TMPDIR="$MY_DIR" mariadb-install-db --no-defaults --datadir="$MY_DIR/data" --skip-test-db \
		--auth-root-authentication-method=normal >"$META/mariadb-install.log" 2>&1 ||
		bad "mariadb-install-db failed: $(tail -n 3 "$META/mariadb-install.log")"
	MY_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export MY_PORT
	bg "${as[@]}" /usr/sbin/mariadbd --no-defaults --datadir="$MY_DIR/data" --tmpdir="$MY_DIR" --port="$MY_PORT" \
		--bind-address=127.0.0.1 --socket="$MY_DIR/sock" --pid-file="$MY_DIR/pid" \
		--skip-grant-tables --skip-log-bin
	for i in $(seq 1 100); do
		my_cli -e 'SELECT 1' >/dev/null 2>&1 && { my_cli -e 'CREATE DATABASE shop'; return 0; }
		sleep 0.1
	done
	bad "MariaDB did not start: $(tail -n 3 "$META/bg.log")"
}

# my_cli ARGS: the mariadb client, on the server of start_mariadb.
my_cli() {
	mariadb -h 127.0.0.1 -P "$MY_PORT" -u root "$@"
}

# stop_mariadb: the server of start_mariadb stopped, its folder removed.
stop_mariadb() {
	[ -n "${MY_DIR:-}" ] || return 0
	[ -f "$MY_DIR/pid" ] && kill -9 "$(cat "$MY_DIR/pid")" 2>/dev/null
	rm -rf "$MY_DIR"
}

# pg_tables_left PREFIX: how many tables named PREFIX<digits> the server has.
pg_tables_left() {
	psql -qtAc "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename ~ '^$1[0-9]+\$'"
}

# start_items [N]: the items service (tests/fixtures/tools/items_server.py)
# outside the tree, with N records made before the session (ids 1..N);
# exports API_PORT.
start_items() {
	local i
	bg python3 "$TOOLS/items_server.py" --port-file "$META/items.port" --ready-after 0 --max-lifetime 120
	wait_file "$META/items.port"
	export API_PORT=$(cat "$META/items.port")
	for i in $(seq 1 "${1:-0}"); do
		curl -sf -X POST -H 'Content-Type: application/json' -d "{\"name\": \"rec$i\"}" \
			"http://127.0.0.1:$API_PORT/items" >/dev/null || bad "cannot make record $i"
	done
}

# items_left: how many records the items service holds.
items_left() {
	curl -s "http://127.0.0.1:$API_PORT/items" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}
