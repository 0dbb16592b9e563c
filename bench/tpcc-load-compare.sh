#!/usr/bin/env bash
# TPC-C load speed: ceiling's loader against go-tpc's (the common Go TPC-C
# kit) and HammerDB's (the common Tcl kit) on the same machine, per engine,
# for the same warehouse count. Prints each load's seconds, and per engine
# the median seconds per warehouse of each tool and how many times as fast
# ceiling's loader was: go-tpc's seconds over ceiling's in each round, the
# median and range of those ratios, and whether every round reached the
# target of 2x.
#
#   bench/tpcc-load-compare.sh                   # 2 warehouses, 2 rounds, PostgreSQL and MariaDB
#   W=4 THREADS=4 ROUNDS=3 bench/tpcc-load-compare.sh
#   ENGINES=mysql bench/tpcc-load-compare.sh
#   GOTPC=/path/to/go-tpc bench/tpcc-load-compare.sh
#
# Each load goes into a database of its own, created empty just before and
# dropped at the end: ceiling into ceiling_tpcc_bench (its tables in
# ceiling's namespace there), go-tpc into gotpc. The rounds alternate which
# tool loads first. After every load the script counts the rows of the nine
# tables and compares them with the specification's cardinalities (clause
# 4.3.3.1; order_line between 5 and 15 lines per order): a load that left
# other counts is reported as failed, not timed, since go-tpc can exit 0
# after an error.
#
# go-tpc is taken from $GOTPC, else installed with `go install` at
# GOTPC_VERSION (default v1.0.9, the newest the Go module proxy served on
# 2026-11-25; v1.0.7 has no PostgreSQL) into a temporary directory, never
# into this module's go.mod; when that fails the script says so and
# measures ceiling alone. go-tpc runs with --no-check, so that its time is the load alone (by
# default it also checks the data after loading; ceiling's prepare does not).
# HammerDB is used when hammerdbcli is on PATH (not measured by this script
# yet; it says so).
#
# Both loaders use the same number of threads (THREADS, default the number
# of cores) and the servers' default durability. ceiling's figure includes
# creating the secondary indexes and gathering statistics; go-tpc creates
# its indexes with the tables, before loading, and commits every batch of
# 1024 rows.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${W:-2}
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-2}
GOTPC_VERSION=${GOTPC_VERSION:-v1.0.9}
PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
MYHOST=${MYHOST:-127.0.0.1} MYPORT=${MYPORT:-3306} MYUSER=${MYUSER:-root}
ENGINES=${ENGINES:-"postgres mysql"}

work=$(mktemp -d)
pg() { PGOPTIONS="-c client_min_messages=warning" psql -qAt -v ON_ERROR_STOP=1 -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$@"; }
my() { mysql -N -B -h "$MYHOST" -P "$MYPORT" -u "$MYUSER" "$@"; }
cleanup() {
	pg -d postgres -c "DROP DATABASE IF EXISTS ceiling_tpcc_bench" -c "DROP DATABASE IF EXISTS gotpc" >/dev/null 2>&1 || true
	my -e "DROP DATABASE IF EXISTS ceiling_tpcc_bench; DROP DATABASE IF EXISTS gotpc" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/ceiling" ./cmd/ceiling   # the static binary the README builds

gotpc=${GOTPC:-}
if [[ -z $gotpc ]]; then
	if GOFLAGS=-mod=mod GOBIN="$work" go install "github.com/pingcap/go-tpc/cmd/go-tpc@$GOTPC_VERSION" >"$work/gotpc-install.log" 2>&1; then
		gotpc=$work/go-tpc
	else
		echo "go-tpc $GOTPC_VERSION: not available ($(head -c 300 "$work/gotpc-install.log" | tr '\n' ' '))" >&2
	fi
fi
command -v hammerdbcli >/dev/null && echo "HammerDB: found, but this script does not drive it yet" >&2 ||
	echo "HammerDB: hammerdbcli not on PATH, not measured" >&2

# fresh engine db: drops and creates database db on the engine.
fresh() {
	case $1 in
	postgres) pg -d postgres -c "DROP DATABASE IF EXISTS $2" -c "CREATE DATABASE $2" >/dev/null ;;
	mysql) my -e "DROP DATABASE IF EXISTS $2; CREATE DATABASE $2" ;;
	esac
}

# verify engine db prefix: checks the nine tables' row counts against the
# specification's cardinalities for W warehouses; prints what is wrong.
verify() {
	local q="" t sep=""
	for t in warehouse district customer history orders new_order item stock order_line; do
		q+="${sep}(SELECT count(*) FROM $3$t)"
		sep=", "
	done
	local counts
	case $1 in
	postgres) counts=$(pg -d "$2" -F ' ' -c "SELECT $q" 2>&1) ;;
	mysql) counts=$(my "$2" -e "SELECT $q" 2>&1 | tr '\t' ' ') ;;
	esac || { echo "could not count the rows: $counts" | tr '\n' ' '; return; }
	python3 - "$W" $counts <<'PY'
import sys
w = int(sys.argv[1])
got = list(map(int, sys.argv[2:]))
names = "warehouse district customer history orders new_order item stock order_line".split()
want = [w, 10 * w, 30000 * w, 30000 * w, 30000 * w, 9000 * w, 100000, 100000 * w]
bad = [f"{n} {g} (want {x})" for n, g, x in zip(names, got, want) if g != x]
if not 5 * 30000 * w <= got[8] <= 15 * 30000 * w:
    bad.append(f"order_line {got[8]} (want 5 to 15 per order)")
print("; ".join(bad))
PY
}

# load engine tool: one timed load into a fresh database; prints seconds,
# or "failed" with the reason on stderr.
load() {
	local eng=$1 tool=$2 db args=() prefix s e
	case $tool in
	ceiling)
		db=ceiling_tpcc_bench
		case $eng in
		postgres) args=("$work/ceiling" prepare tpcc --db "postgres://$PGUSER@$PGHOST:$PGPORT/$db?sslmode=disable") prefix=ceiling. ;;
		mysql) args=("$work/ceiling" prepare tpcc --db "mysql://$MYUSER@$MYHOST:$MYPORT/$db") prefix=ceiling_ ;;
		esac
		args+=(--warehouses "$W" --load-threads "$THREADS")
		;;
	go-tpc)
		db=gotpc prefix=""
		case $eng in
		postgres) args=("$gotpc" tpcc -d postgres -H "$PGHOST" -P "$PGPORT" -U "$PGUSER" -D "$db" --conn-params sslmode=disable) ;;
		mysql) args=("$gotpc" tpcc -d mysql -H "$MYHOST" -P "$MYPORT" -U "$MYUSER" -D "$db") ;;
		esac
		args+=(--warehouses "$W" -T "$THREADS" prepare --no-check)
		;;
	esac
	fresh "$eng" "$db"
	s=$(date +%s.%N)
	if ! "${args[@]}" >"$work/out-$tool.log" 2>&1; then
		echo "$eng $tool: the load failed: $(tail -3 "$work/out-$tool.log" | tr '\n' ' ')" >&2
		echo failed
		return
	fi
	e=$(date +%s.%N)
	local bad
	bad=$(verify "$eng" "$db" "$prefix")
	if [[ -n $bad ]]; then
		echo "$eng $tool: the load left wrong row counts: $bad; its last output: $(tail -3 "$work/out-$tool.log" | tr '\n' ' ')" >&2
		echo failed
		return
	fi
	if [[ $tool == ceiling ]]; then grep "  loaded " "$work/out-$tool.log" | sed "s/^/  $eng ceiling:/" >&2 || true; fi
	echo "$e - $s" | bc -l
}

tools=(ceiling)
[[ -n $gotpc ]] && tools+=(go-tpc)
echo "W=$W THREADS=$THREADS ROUNDS=$ROUNDS go-tpc=${gotpc:+$GOTPC_VERSION} ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
printf '%-9s %-6s %-8s %9s %12s\n' engine round tool seconds s/warehouse
declare -A times
for eng in $ENGINES; do
	for ((r = 1; r <= ROUNDS; r++)); do
		order=("${tools[@]}")
		((r % 2 == 0)) && order=($(printf '%s\n' "${tools[@]}" | tac))
		for tool in "${order[@]}"; do
			t=$(load "$eng" "$tool")
			if [[ $t == failed ]]; then
				printf '%-9s %-6s %-8s %9s %12s\n' "$eng" "$r" "$tool" failed -
			else
				printf '%-9s %-6s %-8s %9.1f %12.1f\n' "$eng" "$r" "$tool" "$t" "$(echo "$t / $W" | bc -l)"
				times[$eng.$tool]+="$t "
			fi
		done
	done
done

echo
echo "per engine: median seconds per warehouse of each tool, and how many times as fast ceiling's loader was"
echo "(go-tpc's seconds / ceiling's in the same round; target: at least 2x in every round):"
for eng in $ENGINES; do
	python3 - "$eng" "$W" "${times[$eng.ceiling]:-}" "${times[$eng.go-tpc]:-}" <<'PY'
import statistics, sys
eng, w = sys.argv[1], int(sys.argv[2])
c = [float(x) for x in sys.argv[3].split()]
g = [float(x) for x in sys.argv[4].split()]
med = lambda v: statistics.median(v) / w
line = f"{eng:9s} ceiling {med(c):.1f} s/W" if c else f"{eng:9s} ceiling: no successful load"
if c and g and len(c) == len(g):
    r = sorted(gi / ci for ci, gi in zip(c, g))
    verdict = "target met" if r[0] >= 2 else ("target met in the median only" if statistics.median(r) >= 2 else "target NOT met")
    line += (f", go-tpc {med(g):.1f} s/W: ceiling {statistics.median(r):.2f}x as fast"
             f" (rounds {r[0]:.2f}-{r[-1]:.2f}x; {verdict})")
elif c and g:
    line += f", go-tpc {med(g):.1f} s/W (a load failed, so rounds are not paired)"
elif c:
    line += ", go-tpc: not measured"
print(line)
PY
done
