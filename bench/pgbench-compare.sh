#!/usr/bin/env bash
# Head-to-head: the same single-row insert and the same insert/delete
# statements run by pgbench (the C reference client) and by ceiling against
# the local PostgreSQL, at 1, 4 and 16 connections, alternating the two tools
# in one run. Prints the throughput ratio ceiling/pgbench per case.
#
#   bench/pgbench-compare.sh                 # 10 s per measurement
#   DUR=30 ROUNDS=3 bench/pgbench-compare.sh
#   PGDSN=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable bench/pgbench-compare.sh
#
# Both tools use prepared statements and the server's default durability.
# Differences that remain, and which side they favour:
#  - pgbench's delete picks a uniform random id from the pre-populated range,
#    so as rows are deleted some of its deletes find nothing (cheaper: favours
#    pgbench); ceiling deletes only live ids from its in-memory set.
#  - pgbench sends rows built by the server (repeat()); ceiling sends a
#    generated ~400-byte row with 12 typed parameters (more client work).
set -euo pipefail
cd "$(dirname "$0")/.."
PGDSN=${PGDSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-1}
CONNS=${CONNS:-"1 4 16"}
ROWS=${ROWS:-10000}

command -v pgbench >/dev/null || { echo "pgbench not found (Debian: postgresql-client)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/ceiling" ./cmd/ceiling

cat > "$work/single.sql" <<'SQL'
INSERT INTO ceiling.single_inserts DEFAULT VALUES;
SQL
cat > "$work/insdel.sql" <<SQL
\set coin random(0, 1)
\set id random(1, $ROWS)
\if :coin = 0
INSERT INTO ceiling.rows (row_id, bit_col, tinyint_col, smallint_col, int_col, bigint_col, dt_col, float_col, money_col, vc_short, vc_mid, vc_long)
VALUES (nextval('ceiling.pgbench_ids'), true, 12, 1234, 123456, 1234567890123, now(), 3.14159, 1234.56,
        repeat('s', 30), repeat('m', 125), repeat('l', 197));
\else
DELETE FROM ceiling.rows WHERE row_id = :id;
\endif
SQL

pgbench_tps() { # script conns
  local j=$(( $2 < 2 ? $2 : 2 ))
  pgbench -n -M prepared -c "$2" -j "$j" -T "$DUR" -f "$1" "$PGDSN" 2>&1 |
    awk '/^tps = / {print $3; exit}'
}
rows_flag() { [ "$1" = inserts-deletes ] && echo "--rows $ROWS"; true; }
ceiling_tps() { # workload conns
  local out="$work/res-$1-$2-$RANDOM"
  "$work/ceiling" run "$1" --db "$PGDSN" -c "$2" -T "$DUR" $(rows_flag "$1") --out "$out" >/dev/null
  python3 -c 'import json,glob,sys; print(json.load(open(glob.glob(sys.argv[1]+"/*.json")[0]))["summary"]["requests_per_sec"])' "$out"
}
prepare() { # workload
  "$work/ceiling" prepare "$1" --db "$PGDSN" $(rows_flag "$1") >/dev/null
  if [ "$1" = inserts-deletes ]; then
    psql -q "$PGDSN" -c "DROP SEQUENCE IF EXISTS ceiling.pgbench_ids; CREATE SEQUENCE ceiling.pgbench_ids START 1000000000;" >/dev/null
  fi
}

printf "%-16s %5s %12s %12s %8s\n" case conns "pgbench/s" "ceiling/s" ratio
for wl in single-inserts inserts-deletes; do
  script="$work/single.sql"; [ "$wl" = inserts-deletes ] && script="$work/insdel.sql"
  for c in $CONNS; do
    p_sum=0; c_sum=0
    for r in $(seq 1 "$ROUNDS"); do
      # Alternate which tool goes first, each on a freshly prepared table.
      if (( r % 2 == 1 )); then
        prepare "$wl"; p=$(pgbench_tps "$script" "$c")
        c_=$(ceiling_tps "$wl" "$c")
      else
        c_=$(ceiling_tps "$wl" "$c")
        prepare "$wl"; p=$(pgbench_tps "$script" "$c")
      fi
      p_sum=$(python3 -c "print($p_sum + $p)"); c_sum=$(python3 -c "print($c_sum + $c_)")
    done
    python3 -c "p=$p_sum/$ROUNDS; c=$c_sum/$ROUNDS; print('%-16s %5d %12.0f %12.0f %8.2f' % ('$wl', $c, p, c, c/p))"
  done
done
psql -q "$PGDSN" -c "DROP SEQUENCE IF EXISTS ceiling.pgbench_ids" >/dev/null
"$work/ceiling" cleanup single-inserts --db "$PGDSN" >/dev/null
"$work/ceiling" cleanup inserts-deletes --db "$PGDSN" >/dev/null
