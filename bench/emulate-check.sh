#!/usr/bin/env bash
# Does the capacity model hold against a run that really is limited? For
# each workload, runs it on SQLite unlimited, asks `ceiling predict` for
# its ceiling under each profile, then runs it again with `--emulate
# PROFILE` (the VFS holds the files to the profile's log and data-file
# limits) and prints measured ÷ predicted. The model is "limit ÷ cost per
# request", so a ratio near 1 means the costs measured unlimited are the
# costs under the limit, and the limit binds as predicted. Timing, so a
# benchmark, not a test.
#
#   bench/emulate-check.sh                                   # 10 s runs
#   DUR=20 PROFILES="azure-2014-basic azure-2014-p1" bench/emulate-check.sh
#   CASES="single-inserts:-c1 inserts-deletes:-c4" bench/emulate-check.sh
#
# CASES are WORKLOAD:FLAGS (flags comma-separated); PROFILES apply to every
# case, and a profile whose binding limit ceiling cannot emulate (cores)
# is reported as such.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-10}
PROFILES=${PROFILES:-"azure-2014-basic azure-2014-s1 azure-2014-p1 azure-2014-web-business azure-sql-gp-2 azure-mi-gp-file-128g"}
CASES=${CASES:-"single-inserts:-c,1 inserts-deletes:-c,4 direct-selects:-c,2,--rows,300000"}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/ceiling" ./cmd/ceiling
db="sqlite:$work/bench.db"

field() { # field FILE PYTHON-EXPR: a figure of a JSON document
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v='"$2"'; print("" if v is None else v)' "$1"
}

printf '%-30s %-26s %-10s %12s %12s %10s  %s\n' workload profile binding predicted measured meas/pred "emulated run's verdict"
n=0
for c in $CASES; do
  wl=${c%%:*}
  IFS=, read -r -a flags <<<"${c#*:}"
  n=$((n + 1)) # a directory per case: two cases may run one workload
  "$work/ceiling" run "$wl" "${flags[@]}" -T "${DUR}s" --db "$db" --no-probe --out "$work/base-$n" >/dev/null
  base=$(ls "$work/base-$n"/*.json)
  label="$wl ${flags[*]}" # the case, as the table names it
  for p in $PROFILES; do
    "$work/ceiling" predict "$base" --profile "$p" --json >"$work/pred.json"
    pred=$(field "$work/pred.json" 'd[0]["requests_per_sec"]')
    binding=$(field "$work/pred.json" 'd[0]["binding"]')
    unlimited=$(field "$base" 'd["summary"]["requests_per_sec"]')
    if [[ -z $pred ]]; then
      printf '%-30s %-26s %-10s %12s %12s %10s  %s\n' "$label" "$p" - - - - "no limit of the profile applies to this workload's costs"
      continue
    fi
    if [[ $binding == cpu ]]; then
      printf '%-30s %-26s %-10s %12.1f %12s %10s  %s\n' "$label" "$p" "$binding" "$pred" - - "cores are not emulated"
      continue
    fi
    if python3 -c "import sys; sys.exit(0 if $pred < $unlimited else 1)"; then :; else
      printf '%-30s %-26s %-10s %12.1f %12s %10s  %s\n' "$label" "$p" "$binding" "$pred" - - "above the unlimited run's $(printf %.0f "$unlimited") req/s: the profile does not bind here"
      continue
    fi
    rm -rf "$work/emu"
    "$work/ceiling" run "$wl" "${flags[@]}" -T "${DUR}s" --db "$db" --no-probe --emulate "$p" --out "$work/emu" >/dev/null
    res=$(ls "$work/emu"/*.json)
    meas=$(field "$res" 'd["summary"]["requests_per_sec"]')
    verdict=$(field "$res" 'd["verdict"]["bottleneck"]')
    printf '%-30s %-26s %-10s %12.1f %12.1f %10.2f  %s\n' "$label" "$p" "$binding" "$pred" "$meas" "$(python3 -c "print($meas/$pred)")" "$verdict"
  done
done
