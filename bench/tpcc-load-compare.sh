#!/usr/bin/env bash
# TPC-C load speed: ceiling's loader against go-tpc's (the common Go TPC-C
# kit) and HammerDB's (the common Tcl kit) on the same machine, per engine,
# for the same warehouse count. Prints seconds and seconds per warehouse.
#
#   bench/tpcc-load-compare.sh                   # 2 warehouses, PostgreSQL and MariaDB
#   W=4 THREADS=4 bench/tpcc-load-compare.sh
#   GOTPC=/path/to/go-tpc bench/tpcc-load-compare.sh
#
# Each tool loads into a database of its own, created here and dropped at
# the end: ceiling into ceiling_tpcc_bench (its tables in ceiling's
# namespace there), go-tpc into gotpc. go-tpc is taken from $GOTPC or PATH,
# else installed with `go install` into a temporary directory (never into
# this module's go.mod); when that fails the script says so and measures
# ceiling alone. HammerDB is used when hammerdbcli is on PATH.
#
# Both loaders use the same number of threads (THREADS, default the number
# of cores) and the servers' default durability. ceiling's figure includes
# creating the secondary indexes and gathering statistics; go-tpc creates its
# indexes with the tables, before loading.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${W:-2}
THREADS=${THREADS:-$(nproc)}
PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
MYHOST=${MYHOST:-127.0.0.1} MYPORT=${MYPORT:-3306} MYUSER=${MYUSER:-root}
ENGINES=${ENGINES:-"postgres mysql"}

work=$(mktemp -d)
cleanup() {
	psql -q -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -c "DROP DATABASE IF EXISTS ceiling_tpcc_bench" -c "DROP DATABASE IF EXISTS gotpc" >/dev/null 2>&1 || true
	mysql -h "$MYHOST" -P "$MYPORT" -u "$MYUSER" -e "DROP DATABASE IF EXISTS ceiling_tpcc_bench; DROP DATABASE IF EXISTS gotpc" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/ceiling" ./cmd/ceiling

gotpc=${GOTPC:-$(command -v go-tpc || true)}
if [[ -z $gotpc ]]; then
	if GOFLAGS=-mod=mod GOBIN="$work" go install github.com/pingcap/go-tpc/cmd/go-tpc@latest >"$work/gotpc-install.log" 2>&1; then
		gotpc=$work/go-tpc
	else
		echo "go-tpc: not available ($(head -c 300 "$work/gotpc-install.log" | tr '\n' ' '))" >&2
	fi
fi
command -v hammerdbcli >/dev/null || echo "HammerDB: hammerdbcli not on PATH, not measured" >&2

printf '%-9s %-8s %10s %9s %14s\n' engine tool warehouses seconds "s/warehouse"
row() { printf '%-9s %-8s %10d %9.1f %14.1f\n' "$1" "$2" "$W" "$3" "$(echo "$3 / $W" | bc -l)"; }
secs() { local s=$(date +%s.%N); "$@" >"$work/out.log" 2>&1 || { cat "$work/out.log" >&2; return 1; }; echo "$(date +%s.%N) - $s" | bc -l; }

for eng in $ENGINES; do
	case $eng in
	postgres)
		psql -q -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -c "DROP DATABASE IF EXISTS ceiling_tpcc_bench" -c "CREATE DATABASE ceiling_tpcc_bench" -c "DROP DATABASE IF EXISTS gotpc" -c "CREATE DATABASE gotpc"
		dsn="postgres://$PGUSER@$PGHOST:$PGPORT/ceiling_tpcc_bench?sslmode=disable"
		gargs=(-d postgres -H "$PGHOST" -P "$PGPORT" -U "$PGUSER" -D gotpc --conn-params sslmode=disable)
		;;
	mysql)
		mysql -h "$MYHOST" -P "$MYPORT" -u "$MYUSER" -e "DROP DATABASE IF EXISTS ceiling_tpcc_bench; CREATE DATABASE ceiling_tpcc_bench; DROP DATABASE IF EXISTS gotpc; CREATE DATABASE gotpc"
		dsn="mysql://$MYUSER@$MYHOST:$MYPORT/ceiling_tpcc_bench"
		gargs=(-d mysql -H "$MYHOST" -P "$MYPORT" -U "$MYUSER" -D gotpc)
		;;
	esac
	t=$(secs "$work/ceiling" prepare tpcc --db "$dsn" --warehouses "$W" --load-threads "$THREADS" --force)
	grep "  loaded " "$work/out.log" >&2 || true
	row "$eng" ceiling "$t"
	"$work/ceiling" cleanup tpcc --db "$dsn" >/dev/null
	if [[ -n $gotpc ]]; then
		t=$(secs "$gotpc" tpcc "${gargs[@]}" --warehouses "$W" -T "$THREADS" prepare)
		row "$eng" go-tpc "$t"
		"$gotpc" tpcc "${gargs[@]}" --warehouses "$W" cleanup >/dev/null 2>&1 || true
	fi
done
