#!/usr/bin/env bash
# Does the verdict's prediction hold? For each engine and connection count,
# runs single inserts at full durability, then at relaxed durability, and
# lets `ceiling compare` set the full run's predicted gain for relaxed
# durability against the measured one ("within a factor of 2" for a point
# prediction; "the lower bound held" or "under the predicted lower bound"
# for one marked "(at least)"). Prints one line per case: the full run's
# verdict, what it predicted and what relaxed durability gave; with BATCH=1
# also a full-durability run with --batch 10 and a second line for the
# batching prediction (rows/s). Timing, so a benchmark, not a test: on a
# shared VM one round says little; use ROUNDS.
#
#   bench/verdict-check.sh                             # 1 round of 10 s
#   ENGINES="postgres mysql" CONNS="1 4" ROUNDS=3 bench/verdict-check.sh
#   BATCH=1 ENGINES=sqlite CONNS=1 bench/verdict-check.sh
#   PGDSN=... MYDSN=... SQLITE=/path/bench.db bench/verdict-check.sh
#
# Engines: sqlite (a file under a temporary directory, or SQLITE), postgres
# (PGDSN) and mysql (MYDSN, MySQL or MariaDB). On MariaDB relaxed durability
# is innodb_flush_log_at_trx_commit=2, a global setting: ceiling sets it and
# puts it back after each run.
set -euo pipefail
cd "$(dirname "$0")/.."
PGDSN=${PGDSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
MYDSN=${MYDSN:-mysql://root@127.0.0.1:3306/test}
ENGINES=${ENGINES:-"sqlite postgres mysql"}
CONNS=${CONNS:-"1 4 16"}
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-1}
BATCH=${BATCH:-0}

dsn() {
  case $1 in
    sqlite) echo "sqlite:${SQLITE:-$work/bench.db}" ;;
    postgres) echo "$PGDSN" ;;
    mysql) echo "$MYDSN" ;;
    *) echo "unknown engine $1 (sqlite, postgres, mysql)" >&2; exit 2 ;;
  esac
}

work=$(mktemp -d)
# The servers' single_inserts tables go at the end, also on failure or
# Ctrl-C: a table left behind is in the way of the next test's cleanup.
cleanup() {
  for eng in $ENGINES; do
    case $eng in
      postgres|mysql) "$work/ceiling" cleanup single-inserts --db "$(dsn "$eng")" >/dev/null 2>&1 || true ;;
    esac
  done
  rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/ceiling" ./cmd/ceiling

printf '%-8s %5s %5s  %-14s %-44s %s\n' engine conns round "verdict (full)" "prediction for relaxed" "measured, and how it compares"
for eng in $ENGINES; do
  db=$(dsn "$eng")
  for c in $CONNS; do
    for r in $(seq 1 "$ROUNDS"); do
      modes="full relaxed"
      [ "$BATCH" = 1 ] && modes="$modes batch"
      for mode in $modes; do
        args=(--durability "$mode")
        [ "$mode" = batch ] && args=(--durability full --batch 10)
        "$work/ceiling" run single-inserts --db "$db" -c "$c" "${args[@]}" -T "${DUR}s" \
          --out "$work/$eng-$c-$r-$mode.json" >"$work/$eng-$c-$r-$mode.log" 2>&1 ||
          { echo "$eng -c $c $mode failed:"; tail -5 "$work/$eng-$c-$r-$mode.log"; exit 1; }
      done
      verdict=$(sed -n 's/^verdict: \([a-z-]*\).*/\1/p' "$work/$eng-$c-$r-full.log")
      check=$("$work/ceiling" compare "$work/$eng-$c-$r-full.json" "$work/$eng-$c-$r-relaxed.json" |
        sed -n 's/^ *A → B (durability full → relaxed): //p' | head -1 || true)
      if [ -z "$check" ]; then
        meas=$("$work/ceiling" compare "$work/$eng-$c-$r-full.json" "$work/$eng-$c-$r-relaxed.json" |
          awk '$1 == "req/s" { print $4; exit }' || true)
        printf '%-8s %5s %5s  %-14s %-44s %s\n' "$eng" "$c" "$r" "$verdict" "-" "no prediction for relaxed; measured $meas"
      else
        # A suggestion without a predicted gain ("to measure what … cost
        # here") reads "no gain predicted"; the pair measures it.
        pred=$(echo "$check" | sed -n 's/^predicted \(×[0-9.]*\) by A.s verdict (try \(.*\)), measured.*/\1 (\2)/p')
        meas=$(echo "$check" | sed -n 's/.*measured \(×[0-9.]*\) (req\/s B ÷ A)\(.*\)/\1\2/p')
        printf '%-8s %5s %5s  %-14s %-44s %s\n' "$eng" "$c" "$r" "$verdict" "${pred:-no gain predicted}" "$meas"
      fi
      if [ "$BATCH" = 1 ]; then
        bcheck=$("$work/ceiling" compare "$work/$eng-$c-$r-full.json" "$work/$eng-$c-$r-batch.json" |
          sed -n 's/^ *A → B (rows_per_transaction 1 → 10): //p' | head -1 || true)
        bpred=$(echo "$bcheck" | sed -n 's/^predicted \(×[0-9.]*\) by A.s verdict (try \(.*\)), measured.*/\1 (\2)/p')
        bmeas=$(echo "$bcheck" | sed -n 's/.*measured \(×[0-9.]*\) (rows\/s B ÷ A) — \(.*\)/\1 — \2/p')
        printf '%-8s %5s %5s  %-14s %-44s %s\n' "$eng" "$c" "$r" "(batch 10)" "${bpred:--}" "${bmeas:-no batching suggested}"
      fi
    done
  done
done
