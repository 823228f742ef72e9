#!/usr/bin/env bash
# bench/durable.sh: acknowledged navigations per second by store (issue: durable sessions).
#
# For each round, starts navd (release, Examples/news.json) on each store in turn —
# memory, sqlite:$TMP/…db (a fresh file), and postgres:// on a throwaway PostgreSQL
# cluster it creates (initdb/pg_ctl as the postgres user, fsync and synchronous_commit
# on, as shipped) — creates SESSIONS fresh sessions, and drives POST …/navigate with
# bench/navigate.lua (wrk -t1 -cCONNECTIONS for DURATION). Every answer is a change
# committed by the store before it was sent. Prints a table of medians.
#
# Environment: ROUNDS=3 DURATION=8s CONNECTIONS=32 SESSIONS=1000 STORES="memory sqlite postgres"
#   NAVD GRAPH NAVD_FLAGS (e.g. "--threads 8") BENCH_OUT KEEP_TMP as for bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-32}
SESSIONS=${SESSIONS:-1000}
STORES=${STORES:-memory sqlite postgres}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init durable
ensure_wrk
private_navd
mkdir -p "$BENCH_OUT"
log "machine: $(machine_info)"

if [[ " $STORES " == *" postgres "* ]]; then postgres_start durable; fi

RESULTS=$BENCH_OUT/durable-results.tsv
printf 'store\tround\trps\tp50_us\tp99_us\tnon2xx\n' >"$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
    for store in $STORES; do
        case $store in
        memory) spec=memory ;;
        sqlite) spec=sqlite:$TMP/navd-$round.db ;;
        postgres)
            db=navd_$round
            runuser -u postgres -- "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$db"
            spec=postgres://postgres@127.0.0.1:$PG_PORT/$db
            ;;
        *) die "unknown store $store" ;;
        esac
        port=$(free_port)
        url=http://127.0.0.1:$port
        # shellcheck disable=SC2086
        start_server "$TMP/navd-$store-$round.log" "$url/healthz" "$NAVD" serve --graph "$GRAPH" --store "$spec" \
            --listen "127.0.0.1:$port" $NAVD_FLAGS
        python3 "$BENCH/sessions.py" --url "$url" --count "$SESSIONS" --procs 2 --out "$TMP/sessions.txt" 2>/dev/null
        line=$(run_wrk "$TMP/wrk-$store-$round.txt" "$CONNECTIONS" "$DURATION" "$BENCH/navigate.lua" "$url" "$TMP/sessions.txt")
        stop_server "$SERVER_PID"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$store" "$round" "$(field rps "$line")" "$(field p50_us "$line")" \
            "$(field p99_us "$line")" "$(field non2xx "$line")" >>"$RESULTS"
        log "round $round $store: $(field rps "$line") navigations/s, p50 $(field p50_us "$line") us, p99 $(field p99_us "$line") us, non-2xx $(field non2xx "$line")"
    done
done

python3 - "$RESULTS" "$CONNECTIONS" <<'PY' | tee "$BENCH_OUT/durable-summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
stores = list(dict.fromkeys(r["store"] for r in rows))
print(f"| store | navigations/s (median) | rounds | p50 ms | p99 ms | non-2xx |  (wrk -t1 -c{sys.argv[2]})")
print("| --- | ---: | --- | ---: | ---: | ---: |")
for store in stores:
    mine = [r for r in rows if r["store"] == store]
    rps = [float(r["rps"]) for r in mine if r["rps"]]
    med = lambda key: statistics.median(float(r[key]) for r in mine if r[key]) / 1000
    print(f"| {store} | {statistics.median(rps):,.0f} | {', '.join(f'{x:,.0f}' for x in rps)} | {med('p50_us'):.2f} | {med('p99_us'):.2f} "
          f"| {sum(int(r['non2xx'] or 0) for r in mine)} |")
PY
