#!/usr/bin/env bash
# The reference web client in a real browser: headless Chromium (Debian's `chromium` and
# `chromium-driver`) driven by Selenium from the virtual environment `make test-deps` makes
# (.build/venv), against the built navd on a free loopback port (memory store, the news example).
#
# Tests/Browser/web_client_test.py holds the steps. SCREENSHOTS=DIR saves the client's
# screenshots there (`make ui-screenshots` writes docs/ui-*.png); a failure saves
# .build/browser-test/browser-test-failure.png and prints navd's log.
set -euo pipefail
cd "$(dirname "$0")/.."

BINARY=${NAVD_BINARY:-.build/debug/navd}
PYTHON=${BROWSER_TEST_PYTHON:-.build/venv/bin/python}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
ARTIFACTS=.build/browser-test
[ -x "$BINARY" ] || { echo "browser-test: $BINARY is not built (run swift build)" >&2; exit 1; }
[ -x "$CHROMIUM" ] && [ -x "$CHROMEDRIVER" ] || { echo "browser-test: $CHROMIUM or $CHROMEDRIVER is missing (make test-deps)" >&2; exit 1; }
"$PYTHON" -c 'import selenium' 2>/dev/null || { echo "browser-test: selenium is not installed in $PYTHON (make test-deps)" >&2; exit 1; }

# shellcheck source=scripts/lib/navd.sh
source scripts/lib/navd.sh
start_navd browser-test --store memory --graph Examples/news.json --admin-token browser-test-admin-token

STATUS=0
"$PYTHON" Tests/Browser/web_client_test.py --url "http://127.0.0.1:$PORT" --artifacts "$ARTIFACTS" \
    --chromium "$CHROMIUM" --chromedriver "$CHROMEDRIVER" ${SCREENSHOTS:+--screenshots "$SCREENSHOTS"} || STATUS=$?
navd_survived browser-test
if [ "$STATUS" -ne 0 ]; then
    echo "browser-test: failed; navd's log:" >&2
    tail -20 "$LOG" >&2
fi
exit "$STATUS"
