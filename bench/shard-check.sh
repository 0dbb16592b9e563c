#!/usr/bin/env bash
# Does a run split over several load generators (run --shard, then
# ceiling merge) measure what one generator with the same workers does?
# Runs each case unsharded, then as N shards at once on this machine
# (processes standing in for clients), alternating ROUNDS times, and prints
# the requests/s of both, the merged ÷ unsharded ratio, the p99 of each and
# the verdict of each. On one machine the shards share its cores, so a
# ratio near 1 says the split and the merge add nothing and lose nothing;
# above 1 would say one process was the bottleneck. Timing, so a
# benchmark, not a test.
#
#   bench/shard-check.sh                                     # SQLite, 10 s runs
#   DB=postgres://postgres@127.0.0.1:5432/postgres bench/shard-check.sh
#   SHARDS=4 CASES="single-inserts:-c,8,--durability,relaxed" bench/shard-check.sh
#
# CASES are WORKLOAD:FLAGS (flags comma-separated; -c is the whole run's).
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-2}
SHARDS=${SHARDS:-2}
CASES=${CASES:-"inserts-deletes:-c,4 direct-selects:-c,4,--rows,100000"}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/ceiling" ./cmd/ceiling
DB=${DB:-"sqlite:$work/bench.db"}

prepflags() { # the data flags among a case's flags, for prepare
  local out=() k=0 a=("$@")
  while [ $k -lt ${#a[@]} ]; do
    case "${a[$k]}" in
      --rows|--tables|--warehouses|--file|--scale|--seed) out+=("${a[$k]}" "${a[$((k + 1))]}"); k=$((k + 2)) ;;
      *) k=$((k + 1)) ;;
    esac
  done
  echo "${out[@]}"
}

field() { # field FILE PYTHON-EXPR: a figure of a JSON document
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v='"$2"'; print("" if v is None else v)' "$1"
}

printf '%-44s %5s %12s %12s %7s %10s %10s  %s\n' case round unsharded merged ratio "p99 one" "p99 merged" "verdicts (one / merged)"
n=0
for c in $CASES; do
  wl=${c%%:*}
  IFS=, read -r -a flags <<<"${c#*:}"
  for r in $(seq 1 "$ROUNDS"); do
    n=$((n + 1))
    read -r -a pflags <<<"$(prepflags "${flags[@]}")"
    "$work/ceiling" run "$wl" "${flags[@]}" -T "${DUR}s" --db "$DB" --no-probe --out "$work/one-$n" >/dev/null
    one=$(ls "$work/one-$n"/*.json)
    # The unsharded run loads its own copy and changes it: the shards
    # start from a fresh prepare.
    "$work/ceiling" prepare "$wl" ${pflags[@]+"${pflags[@]}"} --db "$DB" >/dev/null
    for i in $(seq 0 $((SHARDS - 1))); do
      "$work/ceiling" run "$wl" "${flags[@]}" -T "${DUR}s" --db "$DB" --no-probe --shard "$i/$SHARDS" --shard-wait 60s --out "$work/shards-$n" >"$work/shard-$n-$i.log" 2>&1 &
    done
    wait
    "$work/ceiling" merge "$work/shards-$n" --out "$work/merged-$n.json" >/dev/null
    m="$work/merged-$n.json"
    a=$(field "$one" 'd["summary"]["requests_per_sec"]')
    b=$(field "$m" 'd["summary"]["requests_per_sec"]')
    printf '%-44s %5s %12.1f %12.1f %7.2f %10s %10s  %s / %s\n' "$c" "$r" "$a" "$b" "$(python3 -c "print($b/$a)")" \
      "$(field "$one" 'round(d["summary"]["latency_ms"]["p99"],3)')" "$(field "$m" 'round(d["summary"]["latency_ms"]["p99"],3)')" \
      "$(field "$one" 'd["verdict"]["bottleneck"]')" "$(field "$m" 'd["verdict"]["bottleneck"]')"
  done
  "$work/ceiling" cleanup "$wl" --db "$DB" >/dev/null 2>&1 || true
done
