#!/usr/bin/env bash
# /metrics as Prometheus reads it: starts the debug navd (NAVD_BINARY, else .build/debug/navd) on a
# free port with an SQLite store in a temporary folder, and runs scripts/metrics_check.py, which
# drives a few requests and parses every scrape with prometheus_client's own parser (from the
# virtual environment `make test-deps` makes). About 2 s.
set -euo pipefail
cd "$(dirname "$0")/.."

BINARY=${NAVD_BINARY:-.build/debug/navd}
PYTHON=${METRICS_CHECK_PYTHON:-.build/venv/bin/python}
[ -x "$BINARY" ] || { echo "metrics-check: $BINARY is not built (run swift build)" >&2; exit 1; }
"$PYTHON" -c 'import prometheus_client' 2>/dev/null || { echo "metrics-check: prometheus_client is not installed in $PYTHON (make test-deps)" >&2; exit 1; }

# shellcheck source=scripts/lib/navd.sh
source scripts/lib/navd.sh
WORK=$(mktemp -d)
start_navd metrics-check --store "sqlite:$WORK/navd.db?compact=5" --graph Examples/news.json

STATUS=0
"$PYTHON" scripts/metrics_check.py "http://127.0.0.1:$PORT" || STATUS=$?
[ "$STATUS" -eq 0 ] || { echo "metrics-check: navd's log:" >&2; tail -20 "$WORK/navd.log" >&2; }
exit "$STATUS"
