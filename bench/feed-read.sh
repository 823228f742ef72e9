#!/usr/bin/env bash
# bench/feed-read.sh: how fast GET /v1/feed is read (BENCHMARKS.md, "Navigation analytics"; the
# goal: at least 100,000 records/s). For each store in STORES (default: memory sqlite) it starts
# navd, fills its feed with RECORDS records (default 200,000) by navigating 1,000 sessions with
# wrk (navigate.lua: one record a navigation), then each round reads the whole feed from the
# oldest record:
#
#   pages   one keep-alive connection paging with `limit=1000` and `after=<next>` (a Python
#           client that counts records without parsing them);
#   stream  one `Accept: text/event-stream` request (curl), until every record has come;
#   cli     `navd feed` (which pages with limit=1000 and prints a JSON line a record) into wc -l.
#
# and prints records/s and navd's CPU per record for each, then the medians per store.
#
#   ROUNDS=3 RECORDS=200000 bench/feed-read.sh
#
# NAVD (default .build/release/navd) is the binary; MODES (default: pages stream cli).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

ROUNDS=${ROUNDS:-3}
RECORDS=${RECORDS:-200000}
STORES=${STORES:-memory sqlite}
MODES=${MODES:-pages stream cli}
THREADS=${THREADS:-$(nproc)}
TOKEN=feed-read-bench-admin-token

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init feed-read

ensure_wrk
private_navd
OUT=$TMP/results.txt
log "$(machine_info)"

cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

# retained URL: the records the daemon keeps (navd_feed_retained_records at /metrics).
retained() {
    python3 - "$1" <<'PY'
import sys, urllib.request
for line in urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=10).read().decode().splitlines():
    if line.startswith("navd_feed_retained_records "):
        print(int(float(line.split()[1])))
        break
else:
    print(0)
PY
}

# read_feed MODE URL: reads the whole feed once; prints "RECORDS SECONDS".
read_feed() {
    local mode=$1 url=$2 start end count
    case $mode in
    cli)
        start=$(date +%s.%N)
        count=$(NAVD_URL=$url NAVD_ADMIN_TOKEN=$TOKEN "$NAVD" feed 2>/dev/null | wc -l)
        end=$(date +%s.%N)
        python3 -c "print($count, $end - $start)"
        ;;
    stream)
        # curl takes the chunks apart; the counter reads what it passes on in large blocks.
        curl -sN --max-time 120 "$url/v1/feed" -H "Authorization: Bearer $TOKEN" -H "Accept: text/event-stream" |
            python3 -c '
import os, sys, time
expected, count, tail, marker = int(sys.argv[1]), 0, b"", b"\nevent: record"
start = time.perf_counter()
while count < expected:
    chunk = os.read(0, 1 << 20)
    if not chunk:
        break
    # The last 16 bytes go round again, so a marker cut by a block end is found; those found
    # inside them were counted the time before.
    data = tail + chunk
    count += data.count(marker) - tail.count(marker)
    tail = data[-16:]
print(count, time.perf_counter() - start)
' "$EXPECTED" || true
        ;;
    pages)
        python3 - "$url" "$TOKEN" <<'PY'
import http.client, sys, time, urllib.parse
url, token = sys.argv[1], sys.argv[2]
address = urllib.parse.urlparse(url)
connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
auth = {"Authorization": "Bearer " + token}
count, after = 0, None
start = time.perf_counter()
while True:
    connection.request("GET", "/v1/feed?limit=1000" + (f"&after={after}" if after else ""), headers=auth)
    answer = connection.getresponse()
    body = answer.read()
    if answer.status != 200:
        sys.exit(f"GET /v1/feed answered {answer.status}: {body[:200]!r}")
    records = body.count(b',"cursor":')
    if records == 0:
        break
    count += records
    at = body.rindex(b'"next":"') + 8
    after = body[at:body.index(b'"', at)].decode()
print(count, time.perf_counter() - start)
PY
        ;;
    esac
}

for store in $STORES; do
    port=$(free_port)
    url=http://127.0.0.1:$port
    spec=$store
    [[ $store == sqlite ]] && spec="sqlite:$TMP/navd.db"
    rm -f "$TMP"/navd.db*
    start_server "$TMP/$store.log" "$url/healthz" "$NAVD" serve --graph "$GRAPH" --store "$spec" \
        --listen "127.0.0.1:$port" --threads "$THREADS" --admin-token "$TOKEN" --max-feed-bytes 4G
    python3 "$BENCH/sessions.py" --url "$url" --count 1000 --procs 2 --out "$TMP/sessions.txt" 2>/dev/null
    while (($(retained "$url") < RECORDS)); do
        run_wrk "$TMP/fill.txt" 32 5s "$BENCH/navigate.lua" "$url" "$TMP/sessions.txt" >/dev/null
    done
    sleep 2
    EXPECTED=$(retained "$url")
    log "$store: $EXPECTED records"
    for round in $(seq 1 "$ROUNDS"); do
        for mode in $MODES; do
            before=$(cpu_ticks "$SERVER_PID")
            read -r count seconds < <(read_feed "$mode" "$url")
            after=$(cpu_ticks "$SERVER_PID")
            [[ $count == "$EXPECTED" ]] || log "$store $mode: read $count records of $EXPECTED"
            python3 - "$store" "$mode" "$round" "$count" "$seconds" "$before" "$after" "$(getconf CLK_TCK)" <<'PY' | tee -a "$OUT"
import sys
store, mode, round_, count, seconds, before, after, hz = sys.argv[1:]
count, seconds = int(count), float(seconds)
cpu = (int(after) - int(before)) / int(hz) * 1e6 / max(count, 1)
print(f"{store} {mode} round {round_}: {count} records in {seconds:.3f} s = {count / seconds:,.0f} records/s, navd CPU {cpu:.2f} us/record")
PY
        done
    done
    stop_server "$SERVER_PID"
done

python3 - "$OUT" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    store, mode = line.split()[:2]
    rate = float(re.search(r"= ([0-9,]+) records/s", line).group(1).replace(",", ""))
    cpu = float(re.search(r"CPU ([0-9.]+) us", line).group(1))
    rows.setdefault((store, mode), []).append((rate, cpu))
for (store, mode), values in rows.items():
    print(f"{store} {mode}: median {statistics.median(r for r, _ in values):,.0f} records/s, "
          f"navd CPU {statistics.median(c for _, c in values):.2f} us/record ({len(values)} rounds)")
PY
