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
#   CONNS=8 ROUNDS=10 WINDOW=4 DURABILITY=relaxed bench/pg-window-ab.sh  # a few % apart
#
# Each run lasts 3 s + WINDOW (default 6 s) + 3 s; the window starts 3 s in
# (the slack covers psql's connections on a loaded machine).
#
# At the end it summarises the rounds: per tool, the median tx/s and the
# mean client CPU, server CPU and idle time per transaction; per ceiling
# variant, the geometric mean of its rounds' tx/s over pgbench's in the
# same round, with a paired 95% interval (Student's t over the log
# ratios). Rounds of the same tool stray by ±10% minutes apart on the
# shared development VM, so a difference of a few percent needs 10 rounds
# or more; short windows (WINDOW=4) make those affordable.
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
# ceiling's table goes at the end, also on failure or Ctrl-C.
cleanup() {
  "$work/ceiling" cleanup single-inserts --db "$PGDSN" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
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
run_one() { # pgbench | a ceiling variant
  if [ "$1" = pgbench ]; then
    PGOPTIONS="$pg_opts" pgbench -n -M prepared -c "$CONNS" -j "$j" -T "$dur" -f "$work/single.sql" "$PGDSN" >"$work/pgbench.out" 2>&1 &
    window pgbench $! | tee -a "$work/windows"; wait $! || { cat "$work/pgbench.out" >&2; exit 1; }
    return
  fi
  local envs=(); [ "$1" != default ] && envs=("$1")
  env "${envs[@]}" "$work/ceiling" run single-inserts --db "$PGDSN" -c "$CONNS" -T "${dur}s" \
    --durability "$DURABILITY" --no-probe --out "$work/res" >"$work/ceiling.out" 2>&1 &
  window "ceiling $1" $! | tee -a "$work/windows"; wait $! || { cat "$work/ceiling.out" >&2; exit 1; }
}
# Odd rounds run pgbench first and the variants in the order given, even
# rounds the reverse, so that neither a tool's place in the round nor a
# drift of the machine within a round favours one side.
order=(pgbench $VARIANTS)
for r in $(seq 1 "$ROUNDS"); do
  if (( r % 2 == 1 )); then
    for t in "${order[@]}"; do run_one "$t"; done
  else
    for (( i = ${#order[@]} - 1; i >= 0; i-- )); do run_one "${order[i]}"; done
  fi
done
python3 - "$work/windows" <<'PY'
import math, re, statistics as st, sys
T95 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14,
       2.13, 2.12, 2.11, 2.10, 2.09]  # Student's t, two-sided 95%, by degrees of freedom
runs = {}
for line in open(sys.argv[1]):
    label, _, rest = line.partition("tx/s")
    def num(key):  # "n/a" where the window could not measure it
        m = re.search(key + r" ([0-9.]+)", rest)
        return float(m.group(1)) if m else math.nan
    runs.setdefault(label.strip(), []).append(
        (float(rest.split()[0]), num("client us/tx"), num("server us/tx"), num("idle us/tx")))
base = runs.pop("pgbench")
print(f"\nsummary over {len(base)} rounds: median tx/s; mean client, server and idle us/tx")
for label, r in [("pgbench", base)] + list(runs.items()):
    print(f"{label:<22} tx/s {st.median(x[0] for x in r):.0f}  client {st.mean(x[1] for x in r):.2f}  "
          f"server {st.mean(x[2] for x in r):.2f}  idle {st.mean(x[3] for x in r):.2f}")
for label, r in runs.items():
    logs = [math.log(a[0] / b[0]) for a, b in zip(r, base)]
    if len(logs) < 2:
        continue
    m, half = st.mean(logs), T95[min(len(logs) - 2, len(T95) - 1)] * st.stdev(logs) / math.sqrt(len(logs))
    print(f"{label} / pgbench: geomean {math.exp(m):.3f} [95% CI {math.exp(m - half):.3f}-{math.exp(m + half):.3f}], "
          f"rounds {' '.join(f'{math.exp(x):.2f}' for x in logs)}")
PY
