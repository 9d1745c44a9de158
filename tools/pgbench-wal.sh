#!/bin/sh
# Produce a pg_waldump dump of a short pgbench run on a scratch PostgreSQL cluster.
# Usage: tools/pgbench-wal.sh OUT_FILE [TRANSACTIONS [SCALE]]
# Runs as an unprivileged user (nobody) when started as root. Exits 77 (skip)
# with a message on stderr when PostgreSQL is not installed or will not start;
# exits 1 with a message when pg_waldump gives no records (never an empty dump).
set -eu
out=$1
transactions=${2:-3000}
scale=${3:-1}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_waldump" ]; then
    echo "SKIP: PostgreSQL (initdb, pgbench, pg_waldump) not installed under /usr/lib/postgresql" >&2
    exit 77
fi
dir=$(mktemp -d /tmp/spinstack-pg.XXXXXX)
chmod 777 "$dir"
as() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
cleanup() {
    as "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
port=$(( 20000 + $$ % 20000 ))
as "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1 \
    || { echo "SKIP: initdb failed: $(tail -n 3 "$dir/initdb.log")" >&2; exit 77; }
as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-k $dir -p $port -c listen_addresses='' -c shared_buffers=16MB -c checkpoint_timeout=1d -c max_wal_size=16GB" start >/dev/null \
    || { echo "SKIP: the server did not start: $(tail -n 3 "$dir/server.log")" >&2; exit 77; }
as "$bin/pgbench" -h "$dir" -p "$port" -U postgres -i -s "$scale" postgres >"$dir/init.log" 2>&1
start_lsn=$(as "$bin/psql" -h "$dir" -p "$port" -U postgres -Atc "select pg_current_wal_lsn()" postgres 2>/dev/null || true)
as "$bin/pgbench" -h "$dir" -p "$port" -U postgres -t "$transactions" -c 1 postgres >"$dir/bench.log" 2>&1
end_lsn=$(as "$bin/psql" -h "$dir" -p "$port" -U postgres -Atc "select pg_current_wal_lsn()" postgres 2>/dev/null || true)
# Dump before stopping: the shutdown checkpoint recycles the segments behind it,
# and no checkpoint runs during the benchmark (checkpoint_timeout and
# max_wal_size above), so every segment from start_lsn on is still there.
if [ -n "$start_lsn" ] && [ -n "$end_lsn" ]; then
    as "$bin/pg_waldump" -p "$dir/data/pg_wal" -s "$start_lsn" -e "$end_lsn" >"$dir/dump.txt" 2>"$dir/dump.err" || true
else
    as "$bin/pg_waldump" -p "$dir/data/pg_wal" >"$dir/dump.txt" 2>"$dir/dump.err" || true
fi
as "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null
# pg_waldump ends with an error at the end of the WAL when no end LSN is given,
# so its status is not the test: an empty dump is.
if [ ! -s "$dir/dump.txt" ]; then
    echo "pg_waldump produced no records ($transactions transactions, scale $scale): $(tail -n 3 "$dir/dump.err")" >&2
    exit 1
fi
cp "$dir/dump.txt" "$out"
