#!/usr/bin/env bash
# bench/feed.sh: what writing a feed record with every change costs (BENCHMARKS.md,
# "Navigation analytics"). Interleaves rounds of bench/quick.sh with the feed on (the default)
# and off (--feed-retention 0), on the stores in SERVERS (default: memory sqlite), and prints
# each round's navigations/s and navd CPU per request, then per store the ratio of the medians
# (feed on / feed off) of navigations/s and of CPU per request.
#
#   ROUNDS=3 DURATION=5s bench/feed.sh [CONNECTIONS]
#
# NAVD (default .build/release/navd) is the binary. The machine is shared: read the ratios of
# medians from one run, never a single round.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${1:-32}
SERVERS=${SERVERS:-memory sqlite}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

for round in $(seq 1 "$ROUNDS"); do
    for mode in on off; do
        flags=""
        [[ $mode == off ]] && flags="--feed-retention 0"
        SERVERS="$SERVERS" NAVD_FLAGS="$flags" "$ROOT/bench/quick.sh" navigate "$CONNECTIONS" 2>/dev/null |
            awk -v mode="$mode" -v round="$round" '$1 == "memory" || $1 == "sqlite" { print mode, round, $0 }' | tee -a "$OUT"
    done
done

python3 - "$OUT" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    mode, store = parts[0], parts[2]
    rps = float(re.search(r"([0-9.]+) req/s", line).group(1))
    cpu = re.search(r"user ([0-9.]+) us\s+sys ([0-9.]+) us", line)
    rows.setdefault((store, mode), []).append((rps, float(cpu.group(1)) + float(cpu.group(2)) if cpu else None))
for store in sorted({store for store, _ in rows}):
    on, off = rows.get((store, "on"), []), rows.get((store, "off"), [])
    if not on or not off:
        continue
    rps = statistics.median(r for r, _ in on) / statistics.median(r for r, _ in off)
    line = f"{store}: navigations/s feed on / off = {rps:.2f} (medians of {len(on)} and {len(off)} rounds)"
    cpu_on = [c for _, c in on if c is not None]
    cpu_off = [c for _, c in off if c is not None]
    if cpu_on and cpu_off:
        line += f"; navd CPU per request on / off = {statistics.median(cpu_on) / statistics.median(cpu_off):.2f}"
    print(line)
EOF
