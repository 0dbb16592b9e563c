#!/usr/bin/env bash
# Alternates pgbench and ceiling on the same single-row insert against the
# local PostgreSQL and measures each in a window in the middle of its run
# with bench/pg-window.py: per transaction, the client's CPU, the server's
# CPU, the host's idle time and the context switches. Where
# bench/pgbench-compare.sh says which tool is faster, this says where the
# difference comes from (client work, server work, idle cores).
#
#   bench/pg-window-ab.sh                       # 4 connections, 3 rounds, server durability
#   CONNS=8 ROUNDS=5 DURABILITY=relaxed bench/pg-window-ab.sh
#   VARIANTS="default CEILING_MUX_GROUPS=1" bench/pg-window-ab.sh   # ceiling settings to compare
#
# Each run lasts 3 s + WINDOW (default 6 s) + 3 s; the window starts 3 s in
# (the slack covers psql's connections on a loaded machine).
set -euo pipefail
cd "$(dirname "$0")/.."
PGDSN=${PGDSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
CONNS=${CONNS:-4}
ROUNDS=${ROUNDS:-3}
WINDOW=${WINDOW:-6}
DURABILITY=${DURABILITY:-server}
VARIANTS=${VARIANTS:-default}
case $DURABILITY in
  server) pg_opts='' ;;
  relaxed) pg_opts='-c synchronous_commit=off' ;;
  *) echo "DURABILITY must be server or relaxed" >&2; exit 2 ;;
esac
command -v pgbench >/dev/null || { echo "pgbench not found (Debian: postgresql-client)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/ceiling" ./cmd/ceiling   # the static binary the README builds
echo 'INSERT INTO ceiling.single_inserts DEFAULT VALUES;' >"$work/single.sql"
"$work/ceiling" prepare single-inserts --db "$PGDSN" >/dev/null
dur=$((WINDOW + 6))
j=$(( CONNS < 2 ? CONNS : 2 ))

window() { # label pid: waits 3 s, then measures the process
  python3 bench/pg-window.py --delay 3 --label "$(printf '%-22s' "$1")" --pid "$2" --seconds "$WINDOW" --dsn "$PGDSN" \
    --count-sql "SELECT last_value FROM ceiling.single_inserts_id_seq"
}
echo "single-row inserts, $CONNS connections, $DURABILITY durability, window ${WINDOW}s"
for r in $(seq 1 "$ROUNDS"); do
  PGOPTIONS="$pg_opts" pgbench -n -M prepared -c "$CONNS" -j "$j" -T "$dur" -f "$work/single.sql" "$PGDSN" >"$work/pgbench.out" 2>&1 &
  window pgbench $!; wait $! || { cat "$work/pgbench.out" >&2; exit 1; }
  for v in $VARIANTS; do
    envs=(); [ "$v" != default ] && envs=("$v")
    env "${envs[@]}" "$work/ceiling" run single-inserts --db "$PGDSN" -c "$CONNS" -T "${dur}s" \
      --durability "$DURABILITY" --no-probe --out "$work/res" >"$work/ceiling.out" 2>&1 &
    window "ceiling $v" $!; wait $! || { cat "$work/ceiling.out" >&2; exit 1; }
  done
done
"$work/ceiling" cleanup single-inserts --db "$PGDSN" >/dev/null
