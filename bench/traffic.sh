#!/usr/bin/env bash
# bench/traffic.sh: traffic and funnels over a million retained feed records, per store
# (BENCHMARKS.md, "Traffic and funnels"; docs/design.md, "Traffic and funnels").
#
# Builds the release navd-traffic-bench (bench/TrafficBench), which fills each store's feed
# directly with RECORDS synthetic records of the news graph (a thousand sessions at a time, ten
# records each, over six days; about four in five records are views) and prints the median of
# RUNS timings of the store's traffic query over all of them and of a three-step funnel (top,
# list_news, show_news within 30 minutes). For postgres it starts a throwaway cluster as
# bench/postgres.sh does (bench/lib.sh).
#
#   RECORDS=1000000 RUNS=5 STORES="memory sqlite postgres" bench/traffic.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RECORDS=${RECORDS:-1000000}
RUNS=${RUNS:-5}
STORES=${STORES:-memory sqlite postgres}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
bench_init traffic

swift build -c release --product navd-traffic-bench >/dev/null
BENCH=$ROOT/.build/release/navd-traffic-bench
machine_info
for store in $STORES; do
    case $store in
    memory) "$BENCH" memory "$RECORDS" "$RUNS" ;;
    sqlite) "$BENCH" "sqlite:$TMP/feed.db" "$RECORDS" "$RUNS" ;;
    postgres)
        postgres_start traffic
        runuser -u postgres -- "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres traffic
        "$BENCH" "postgres://postgres@127.0.0.1:$PG_PORT/traffic" "$RECORDS" "$RUNS"
        postgres_stop
        ;;
    esac
done
