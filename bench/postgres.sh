#!/usr/bin/env bash
# bench/postgres.sh: durable navigations/s on the PostgreSQL store against what the database
# itself sustains for the same write (docs/design.md, "PostgreSQL"), measured side by side on one cluster.
#
# Starts a throwaway PostgreSQL cluster (initdb/pg_ctl as the postgres user, fsync and
# synchronous_commit on, as shipped; like bench/durable.sh). Each round, interleaved:
#   pgbench  a custom one-statement script, `UPDATE bench SET snapshot = <1.5 KB>, version =
#            version + 1 WHERE id = random(1, ROWS)` (prepared), CLIENTS clients, DURATION;
#   navd×N   for each N in PROCS: N navd processes (release) on one fresh database, SESSIONS
#            fresh sessions (each process creates and drives its own share), and N wrk -t1
#            (bench/navigate.lua) with CONNECTIONS spread over them, for DURATION; the rate is
#            their sum. Every answer is a change committed before it was sent.
#   navd×1 without NOTIFY (NAVD_PG_NOTIFY=off) when NOTIFY_OFF=1: what cross-process event
#            delivery costs.
#   baseline with BASELINE=PATH: navd×1 of another build (e.g. main's, before group commit) with
#            its defaults, in the same rounds.
# With PIN=1, PostgreSQL runs on CPU 0 and everything else (pgbench, navd, wrk) on CPU 1: the
# database with a core of its own, as where it has its own machine, instead of sharing both.
# Prints every run, then medians per configuration and the ratio of medians to pgbench.
#
# Environment: ROUNDS=3 DURATION=8s CLIENTS=32 CONNECTIONS=32 SESSIONS=200 ROWS=200 PROCS="1 2 3"
#   NOTIFY_OFF=1 PIN=0 BASELINE NAVD GRAPH NAVD_FLAGS (e.g. "--pg-connections 8") BENCH_OUT KEEP_TMP as for bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
CLIENTS=${CLIENTS:-32}
CONNECTIONS=${CONNECTIONS:-32}
SESSIONS=${SESSIONS:-200}
ROWS=${ROWS:-200}
PROCS=${PROCS:-1 2 3}
NOTIFY_OFF=${NOTIFY_OFF:-1}
BASELINE=${BASELINE:-}
PIN=${PIN:-0}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init postgres
ensure_wrk
private_navd
mkdir -p "$BENCH_OUT"
log "machine: $(machine_info)"
if [[ -n $BASELINE ]]; then
    cp "$BASELINE" "$TMP/navd-baseline"
    BASELINE=$TMP/navd-baseline
fi
postgres_start postgres
if [[ $PIN == 1 ]]; then
    (($(nproc) >= 2)) || die "PIN=1 needs two CPUs"
    command -v taskset >/dev/null && command -v pgrep >/dev/null || die "PIN=1 needs taskset and pgrep (util-linux, procps)"
    # The postmaster and its processes on CPU 0 (the backends it forks later inherit it); this
    # script, and so every client it starts, on CPU 1.
    postmaster=$(head -n1 "$PG_DIR/data/postmaster.pid")
    for pid in "$postmaster" $(pgrep -P "$postmaster"); do taskset -pc 0 "$pid" >/dev/null; done
    taskset -pc 1 $$ >/dev/null
    log "pinned: PostgreSQL on CPU 0, pgbench, navd and wrk on CPU 1"
fi
[[ -x $PG_BIN/pgbench ]] || die "pgbench is missing (make test-deps installs PostgreSQL's client programs)"

# pgbench's table and script: the same row size as a navd session's snapshot (~1.5 KB).
SNAPSHOT=$(python3 -c 'print("x" * 1536)')
runuser -u postgres -- "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres pgbench_one
psql_run -d pgbench_one -c "CREATE TABLE bench (id INTEGER PRIMARY KEY, version BIGINT NOT NULL, snapshot TEXT NOT NULL);
    INSERT INTO bench SELECT i, 1, '$SNAPSHOT' FROM generate_series(1, $ROWS) i;"
SCRIPT=$PG_DIR/update.sql
printf '\\set id random(1, %s)\nUPDATE bench SET snapshot = '"'"'%s'"'"', version = version + 1 WHERE id = :id;\n' "$ROWS" "$SNAPSHOT" >"$SCRIPT"
chown postgres "$SCRIPT"

RESULTS=$BENCH_OUT/postgres-results.tsv
printf 'config\tround\trate\tnon2xx\n' >"$RESULTS"

run_pgbench() {
    local round=$1 out=$TMP/pgbench-$1.txt seconds=${DURATION%s}
    runuser -u postgres -- "$PG_BIN/pgbench" -h 127.0.0.1 -p "$PG_PORT" -U postgres -n -M prepared -f "$SCRIPT" \
        -c "$CLIENTS" -j 2 -T "$seconds" pgbench_one >"$out" 2>&1 || { cat "$out" >&2; die "pgbench failed"; }
    local tps
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | head -n1)
    printf 'pgbench\t%s\t%s\t0\n' "$round" "$tps" >>"$RESULTS"
    log "round $round pgbench: $tps transactions/s ($CLIENTS clients)"
}

# run_navd ROUND PROCESSES CONFIG [ENV=VALUE…]: N navd ($RUN_NAVD, else $NAVD) on a fresh
# database, wrk spread over them.
run_navd() {
    local round=$1 procs=$2 config=$3
    shift 3
    local db=navd_${config//[^a-z0-9]/_}_$round spec pids=() urls=() i
    runuser -u postgres -- "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$db"
    spec=postgres://postgres@127.0.0.1:$PG_PORT/$db
    for ((i = 0; i < procs; i++)); do
        local port url
        port=$(free_port)
        url=http://127.0.0.1:$port
        # shellcheck disable=SC2086
        start_server "$TMP/navd-$config-$round-$i.log" "$url/healthz" env "$@" "${RUN_NAVD:-$NAVD}" serve --graph "$GRAPH" --store "$spec" \
            --listen "127.0.0.1:$port" $NAVD_FLAGS
        pids+=("$SERVER_PID")
        urls+=("$url")
        python3 "$BENCH/sessions.py" --url "$url" --count $((SESSIONS / procs)) --procs 2 --out "$TMP/sessions-$i.txt" 2>/dev/null
    done
    local wrk_pids=() conns
    for ((i = 0; i < procs; i++)); do
        # CONNECTIONS spread over the processes (the first ones take the remainder).
        conns=$((CONNECTIONS / procs + (i < CONNECTIONS % procs ? 1 : 0)))
        run_wrk "$TMP/wrk-$config-$round-$i.txt" "$conns" "$DURATION" "$BENCH/navigate.lua" "${urls[i]}" "$TMP/sessions-$i.txt" \
            >"$TMP/result-$config-$round-$i.txt" &
        wrk_pids+=($!)
    done
    for pid in "${wrk_pids[@]}"; do wait "$pid"; done
    for pid in "${pids[@]}"; do stop_server "$pid"; done
    local rate=0 non2xx=0 line
    for ((i = 0; i < procs; i++)); do
        line=$(cat "$TMP/result-$config-$round-$i.txt")
        rate=$(python3 -c "print(f'{${rate} + float(\"$(field rps "$line")\" or 0):.1f}')")
        non2xx=$((non2xx + $(field non2xx "$line" || echo 0)))
    done
    printf '%s\t%s\t%s\t%s\n' "$config" "$round" "$rate" "$non2xx" >>"$RESULTS"
    log "round $round $config: $rate navigations/s, non-2xx $non2xx"
}

for round in $(seq 1 "$ROUNDS"); do
    run_pgbench "$round"
    for procs in $PROCS; do run_navd "$round" "$procs" "navd x$procs"; done
    if [[ $NOTIFY_OFF == 1 ]]; then run_navd "$round" 1 "navd x1 no NOTIFY" NAVD_PG_NOTIFY=off; fi
    if [[ -n $BASELINE ]]; then RUN_NAVD=$BASELINE run_navd "$round" 1 "baseline x1"; fi
done

python3 - "$RESULTS" "$CLIENTS" "$CONNECTIONS" <<'PY' | tee "$BENCH_OUT/postgres-summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
configs = list(dict.fromkeys(r["config"] for r in rows))
pgbench = {r["round"]: float(r["rate"]) for r in rows if r["config"] == "pgbench"}
base = statistics.median(pgbench.values())
print(f"| run | per second (median) | rounds | ratio to pgbench: of medians (median of per-round) | non-2xx |  (pgbench -c{sys.argv[2]}, wrk -c{sys.argv[3]} in all)")
print("| --- | ---: | --- | ---: | ---: |")
for config in configs:
    mine = [r for r in rows if r["config"] == config and r["rate"]]
    rates = [float(r["rate"]) for r in mine]
    median = statistics.median(rates)
    per_round = statistics.median(float(r["rate"]) / pgbench[r["round"]] for r in mine)
    print(f"| {config} | {median:,.0f} | {', '.join(f'{x:,.0f}' for x in rates)} | {median / base:.2f} ({per_round:.2f}) "
          f"| {sum(int(r['non2xx'] or 0) for r in mine)} |")
PY
