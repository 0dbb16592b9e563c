#!/usr/bin/env bash
# Head-to-head: the same single-row insert and the same insert/delete
# statements run by pgbench (the C reference client) and by ceiling against
# the local PostgreSQL, at 1, 4, 8 and 16 connections, alternating the two
# tools in one run. Prints the throughput ratio ceiling/pgbench per case and
# each tool's client CPU (user+system) per request.
#
#   bench/pgbench-compare.sh                 # 3 rounds of 10 s per tool and case
#   DUR=30 ROUNDS=5 bench/pgbench-compare.sh
#   DURABILITY=relaxed bench/pgbench-compare.sh  # synchronous_commit off on both
#                                            # sides: CPU-bound, no flush waits
#   PGDSN=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable bench/pgbench-compare.sh
#   CEILING_MUX_GROUPS=0 bench/pgbench-compare.sh   # ceiling: a thread per worker
#   CEILING_PG_IO=raw|poll|netpoll bench/pgbench-compare.sh  # ceiling's I/O mode
#
# Both tools use prepared statements and the server's default durability
# (DURABILITY=relaxed: synchronous_commit off for both), and each
# transaction is one statement and one commit on both sides.
#
# Each round runs both tools back to back, alternating which goes first; the
# ratio printed is the median of the rounds' ratios, so that a slow spell of
# the machine (at default durability, every commit waits for a flush, and a
# shared VM's disk stalls now and then) hits both sides of a round. The
# req/s and CPU columns are medians over the rounds too, and "ratio range"
# gives the lowest and highest round. "geomean [95% CI]" is the geometric
# mean of the rounds' ratios with a paired Student's t interval, and
# "verdict" calls a cell for one tool only when that interval leaves 1.0
# out ("no difference" otherwise; on a shared 2-core VM single rounds stray
# by ±10% with pgbench on both sides, SELF=1, so use ROUNDS=6 or more for
# verdicts that can resolve a few percent; the rounds of a cell drift
# together, so the interval is too narrow: an A/A run of 6 rounds called
# 2 of 16 cells on a slow spell of the VM although nothing differed, none
# on a fast one). Differences
# that remain, and which side they favour:
#  - ceiling deletes random live ids (pre-populated or inserted in the run);
#    pgbench deletes the ROWS pre-populated ids in a pseudorandom order, each
#    once, so every delete finds its row until ROWS deletes were done (a miss
#    would be cheaper and favour pgbench). The script prints the share of
#    pgbench's deletes that found their row (column "pgb del hit%"); raise
#    ROWS (default 100,000; 400,000 with DURABILITY=relaxed) if it is
#    below 100.
#  - both send the inserted row as 11 text parameters (see insdel.sql
#    below), but ceiling varies the date and the strings' lengths and text
#    from row to row, and sends the id; pgbench sends a fixed date and fixed
#    strings of ceiling's mean lengths, and takes the id from a sequence.
#    ceiling generates more per row (a little more client work).
#
#   WORKLOADS=inserts-deletes bench/pgbench-compare.sh   # one of the two
#   SELF=1 bench/pgbench-compare.sh   # A/A: pgbench in ceiling's column too,
#                                     # the ratio's spread when nothing differs
set -euo pipefail
cd "$(dirname "$0")/.."
PGDSN=${PGDSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-3}
DURABILITY=${DURABILITY:-server}
case $DURABILITY in
  server) pg_opts='' ;;
  relaxed) pg_opts='-c synchronous_commit=off' ;;
  *) echo "DURABILITY must be server or relaxed" >&2; exit 2 ;;
esac
CONNS=${CONNS:-"1 4 8 16"}
WORKLOADS=${WORKLOADS:-"single-inserts inserts-deletes"}
SELF=${SELF:-0}
# Enough pre-populated rows that pgbench's deletes all find one (at relaxed
# durability a 10 s run deletes over 100,000).
ROWS=${ROWS:-$([ "$DURABILITY" = relaxed ] && echo 400000 || echo 100000)}

command -v pgbench >/dev/null || { echo "pgbench not found (Debian: postgresql-client)" >&2; exit 1; }
work=$(mktemp -d)
# ceiling's tables and pgbench's id sequence go at the end, also on
# failure or Ctrl-C: left behind, they are in the way of the next test.
cleanup() {
  psql -q "$PGDSN" -c "SET client_min_messages = warning; DROP SEQUENCE IF EXISTS ceiling.pgbench_ids" >/dev/null 2>&1 || true
  for wl in single-inserts inserts-deletes; do
    "$work/ceiling" cleanup "$wl" --db "$PGDSN" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/ceiling" ./cmd/ceiling   # the static binary the README builds

cat > "$work/single.sql" <<'SQL'
INSERT INTO ceiling.single_inserts DEFAULT VALUES;
SQL
# Each pgbench client deletes distinct pre-populated ids in a pseudorandom
# order (permute() over a per-client counter k, kept across transactions),
# so its deletes find their row, like ceiling's deletes of live ids.
#
# Its insert is ceiling's statement: the row goes as text parameters (with
# -M prepared, pgbench sends each :variable as a parameter of the prepared
# statement), which the server parses at every execution as it does
# ceiling's: random numbers drawn per insert like ceiling's, and the date
# and the three strings as fixed -D values of ceiling's mean lengths (30,
# 125 and 197 characters). Only the id comes from a sequence.
cat > "$work/insdel.sql" <<SQL
\\set coin random(0, 1)
\\if :coin = 0
\\set bit random(0, 1)
\\set ti random(0, 255)
\\set si random(-32768, 32767)
\\set i random(-2147483648, 2147483647)
\\set bi random(-2305843009213693952, 2305843009213693951)
\\set fl random(0, 999999999) / 1000.0
\\set mo random(0, 99999999) / 100.0
INSERT INTO ceiling.rows (row_id, bit_col, tinyint_col, smallint_col, int_col, bigint_col, dt_col, float_col, money_col, vc_short, vc_mid, vc_long)
VALUES (nextval('ceiling.pgbench_ids'), :bit, :ti, :si, :i, :bi, :dt, :fl, :mo, :vs, :vm, :vl);
\\else
\\set k :k + 1
\\set id permute(:k * :nc + :client_id, $ROWS) + 1
DELETE FROM ceiling.rows WHERE row_id = :id;
\\endif
SQL
row_vars=(-D "dt=2019-03-14 12:34:56.789" -D "vs=$(printf 's%.0s' {1..30})"
  -D "vm=$(printf 'm%.0s' {1..125})" -D "vl=$(printf 'l%.0s' {1..197})")

pgbench_tps() { # script conns; prints tps and CPU µs per transaction, and for
  # the insert/delete script also records the share of deletes that found
  # their row in $work/hits.
  local j=$(( $2 < 2 ? $2 : 2 )) out="$work/pgbench.out" cpu
  cpu=$( { TIMEFORMAT='%U %S'; time PGOPTIONS="$pg_opts" pgbench -n -M prepared -c "$2" -j "$j" -T "$DUR" -D k=-1 -D nc="$2" "${row_vars[@]}" -f "$1" "$PGDSN" >"$out" 2>&1; } 2>&1 ) ||
    { cat "$out" >&2; return 1; }
  if [ "$1" = "$work/insdel.sql" ]; then
    local tx left ins
    tx=$(awk '/^number of transactions actually processed:/ {print $6; exit}' "$out")
    read -r left ins < <(psql -qAtF ' ' "$PGDSN" -c \
      "SELECT count(*) FILTER (WHERE row_id <= $ROWS), count(*) FILTER (WHERE row_id >= 1000000000) FROM ceiling.rows")
    python3 -c "d=$tx-$ins; print(100.0*($ROWS-$left)/d if d else 100.0)" >>"$work/hits"
  fi
  local tps tx
  tps=$(awk '/^tps = / {print $3; exit}' "$out")
  tx=$(awk '/^number of transactions actually processed:/ {print $6; exit}' "$out")
  python3 -c "u, s = map(float, '$cpu'.split()); print($tps, 1e6 * (u + s) / $tx)"
}
rows_flag() { [ "$1" = inserts-deletes ] && echo "--rows $ROWS"; true; }
ceiling_tps() { # workload conns; prints requests/s and CPU µs per request
  if [ "$SELF" = 1 ]; then # A/A: pgbench again in ceiling's place, on a fresh table too
    local s="$work/single.sql"; [ "$1" = inserts-deletes ] && s="$work/insdel.sql"
    prepare "$1"; pgbench_tps "$s" "$2"; return
  fi
  local out="$work/res-$1-$2-$RANDOM"
  "$work/ceiling" run "$1" --db "$PGDSN" -c "$2" -T "$DUR" --durability "$DURABILITY" $(rows_flag "$1") --out "$out" >/dev/null
  python3 -c '
import json, glob, sys
d = json.load(open(glob.glob(sys.argv[1] + "/*.json")[0]))
s, c = d["summary"], d["client"]
print(s["requests_per_sec"], 1e6 * c["cpu_seconds"] / s["requests"])' "$out"
}
prepare() { # workload
  "$work/ceiling" prepare "$1" --db "$PGDSN" $(rows_flag "$1") >/dev/null
  if [ "$1" = inserts-deletes ]; then
    psql -q "$PGDSN" -c "SET client_min_messages = warning; DROP SEQUENCE IF EXISTS ceiling.pgbench_ids; CREATE SEQUENCE ceiling.pgbench_ids START 1000000000;" >/dev/null
  fi
}

echo "durability $DURABILITY, $ROUNDS rounds of ${DUR}s per tool and case; medians over the rounds"
[ "$SELF" = 1 ] && echo "SELF=1: pgbench in both columns (an A/A run: how far the ratio strays when nothing differs)"
printf "%-16s %5s %12s %12s %8s %13s %18s %-15s %10s %10s %13s\n" case conns "pgbench/s" "ceiling/s" ratio "ratio range" "geomean [95% CI]" "verdict" "pgb us/tx" "ceil us/rq" "pgb del hit%"
: >"$work/verdicts"
for wl in $WORKLOADS; do
  script="$work/single.sql"; [ "$wl" = inserts-deletes ] && script="$work/insdel.sql"
  for c in $CONNS; do
    : >"$work/hits"; : >"$work/rounds"
    for r in $(seq 1 "$ROUNDS"); do
      # Alternate which tool goes first, each on a freshly prepared table.
      if (( r % 2 == 1 )); then
        prepare "$wl"; read -r p pu < <(pgbench_tps "$script" "$c")
        read -r c_ cu < <(ceiling_tps "$wl" "$c")
      else
        read -r c_ cu < <(ceiling_tps "$wl" "$c")
        prepare "$wl"; read -r p pu < <(pgbench_tps "$script" "$c")
      fi
      echo "$p $c_ $pu $cu" >>"$work/rounds"
    done
    python3 - "$wl" "$c" "$work/rounds" "$work/hits" "$work/verdicts" <<'PY'
import math, statistics as st, sys
wl, c, rounds, hits, verdicts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = [list(map(float, l.split())) for l in open(rounds) if l.strip()]
p, cc, pu, cu = (st.median(col) for col in zip(*rows))
ratios = [r[1] / r[0] for r in rows]
# Paired rounds: the mean of the rounds' log ratios and Student's t 95%
# interval around it (two-sided), so that a cell is called for one tool
# only when the rounds' spread leaves 1.0 outside the interval.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]
logs = [math.log(x) for x in ratios]
m = st.mean(logs)
if len(logs) > 1:
    hw = T975[min(len(logs) - 2, len(T975) - 1)] * st.stdev(logs) / math.sqrt(len(logs))
    lo, hi = math.exp(m - hw), math.exp(m + hw)
    ci = '%.2f [%.2f-%.2f]' % (math.exp(m), lo, hi)
    verdict = 'pgbench faster' if hi < 1 else 'ceiling faster' if lo > 1 else 'no difference'
else:
    ci, verdict = '%.2f' % math.exp(m), 'one round'
open(verdicts, 'a').write(verdict + '\n')
h = [float(x) for x in open(hits).read().split()]
print('%-16s %5d %12.0f %12.0f %8.2f %13s %18s %-15s %10.1f %10.1f %13s' % (
    wl, c, p, cc, st.median(ratios), '%.2f-%.2f' % (min(ratios), max(ratios)),
    ci, verdict, pu, cu, '%.0f' % (sum(h) / len(h)) if h else '-'))
PY
  done
done
echo "verdicts (95% paired interval of the rounds' ratios): $(sort "$work/verdicts" | uniq -c | awk '{n=$1; $1=""; sub(/^ /, ""); printf "%s%s: %d", sep, $0, n; sep=", "}')"
