#!/bin/sh
# Produce a pg_waldump dump of a pgbench run on a scratch PostgreSQL cluster.
# Usage: tools/pgbench-wal.sh OUT_FILE [TRANSACTIONS [SCALE [MIN_WAL_BYTES [SEED]]]]
#
# Runs TRANSACTIONS pgbench transactions (one client, pgbench's random seed SEED,
# default 1) at scale SCALE. With MIN_WAL_BYTES, runs TRANSACTIONS more at a time
# (pgbench -n: no vacuum, the history table kept; at most 1,000 runs) until the
# WAL inserted since the first run began holds at least that many bytes.
#
# The server runs with fsync and synchronous_commit off: they decide when WAL
# reaches the disk, not which records it holds, and with them on a commit waits
# for this machine's disk. Autovacuum is off and checkpoints never come due, so
# the WAL is what the transactions write: the same from run to run for a seed,
# but for the standby snapshots the server logs on a timer (no block references,
# so no records for the study). With autovacuum on, when its passes fall among the
# transactions depends on the machine's load: dr-pgbench's R_apl/R_gen was
# 19.3-19.6 alone and 29.4 beside reproduce --all's other work; with it off, the
# same alone and beside other work.
#
# Runs as an unprivileged user (nobody) when started as root. Exits 77 (skip)
# with a message on stderr when PostgreSQL is not installed or will not start;
# exits 1 with a message when pg_waldump gives no records (never an empty dump)
# or the WAL's position cannot be read.
set -eu
out=$1
transactions=${2:-3000}
scale=${3:-1}
min_wal_bytes=${4:-0}
seed=${5:-1}
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
sql() {
    as "$bin/psql" -h "$dir" -p "$port" -U postgres -Atc "$1" postgres 2>/dev/null || true
}
as "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1 \
    || { echo "SKIP: initdb failed: $(tail -n 3 "$dir/initdb.log")" >&2; exit 77; }
as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-k $dir -p $port -c listen_addresses='' -c shared_buffers=16MB -c checkpoint_timeout=1d -c max_wal_size=16GB -c fsync=off -c synchronous_commit=off -c autovacuum=off" start >/dev/null \
    || { echo "SKIP: the server did not start: $(tail -n 3 "$dir/server.log")" >&2; exit 77; }
as "$bin/pgbench" -h "$dir" -p "$port" -U postgres -i -s "$scale" postgres >"$dir/init.log" 2>&1
# Insert positions, not write positions: with synchronous_commit off the WAL
# writer trails the commits, so the write position would cut the last ones off.
start_lsn=$(sql "select pg_current_wal_insert_lsn()")
as "$bin/pgbench" -h "$dir" -p "$port" -U postgres -M prepared --random-seed="$seed" -t "$transactions" -c 1 postgres >"$dir/bench.log" 2>&1
runs=1
if [ "$min_wal_bytes" -gt 0 ]; then
    if [ -z "$start_lsn" ]; then
        echo "pg_current_wal_insert_lsn() gave no start LSN: cannot measure the WAL against $min_wal_bytes bytes" >&2
        exit 1
    fi
    while :; do
        written=$(sql "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$start_lsn')::bigint")
        if [ -z "$written" ]; then
            echo "the WAL's insert position could not be read after $runs pgbench runs" >&2
            exit 1
        fi
        [ "$written" -lt "$min_wal_bytes" ] || break
        if [ "$runs" -ge 1000 ]; then
            echo "$written bytes of WAL after $runs pgbench runs of $transactions transactions, short of $min_wal_bytes" >&2
            exit 1
        fi
        as "$bin/pgbench" -h "$dir" -p "$port" -U postgres -n -M prepared --random-seed="$((seed + runs))" -t "$transactions" -c 1 postgres >>"$dir/bench.log" 2>&1
        runs=$((runs + 1))
    done
fi
end_lsn=$(sql "select pg_current_wal_insert_lsn()")
# A segment switch writes every record before it out to the segment files, where
# pg_waldump reads them (no checkpoint, which could recycle the first segments).
sql "select pg_switch_wal()" >/dev/null
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
