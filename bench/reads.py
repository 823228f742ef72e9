#!/usr/bin/env python3
"""Times reads of two sessions of its own, one request at a time over one keep-alive connection.

    reads.py --url http://127.0.0.1:PORT --seconds S [--delay D]

Creates two sessions and navigates each once, waits D seconds (so that the load the caller
starts meanwhile is running), then for S seconds takes turns at GET /v1/sessions/{a}/events?after=0
(always read from the SQLite store's tables and change log), GET /v1/sessions/{b} (read from
the tables when the cache no longer holds it), and creating a session and deleting it (both
written with the store's one writing connection, which a fold takes a chunk at a time). Prints one line per kind: how many, p50, p99,
p99.9, the longest, and how many took over 5 and over 20 ms. Exits 1 on an answer that is not
2xx. Python standard library only.
"""
import argparse
import http.client
import json
import sys
import time
import urllib.parse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--delay", type=float, default=0)
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

    def call(method, path, token=None, body=None):
        headers = {"Authorization": "Bearer " + token} if token else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        if response.status >= 300:
            sys.exit(f"{method} {path}: {response.status} {payload[:200]!r}")
        return json.loads(payload) if payload else None

    sessions = []
    for _ in range(2):
        session = call("POST", "/v1/sessions", body=b"{}")
        call("POST", f"/v1/sessions/{session['id']}/navigate", session["token"],
             b'{"path":"^/top/list_news(category=1)/show_news(id=2)"}')
        sessions.append(session)
    time.sleep(args.delay)
    reads = [("events", sessions[0], f"/v1/sessions/{sessions[0]['id']}/events?after=0"),
             ("session", sessions[1], f"/v1/sessions/{sessions[1]['id']}")]
    took = {kind: [] for kind in ["events", "session", "create", "delete"]}

    def timed(kind, method, path, token=None, body=None):
        start = time.monotonic()
        answer = call(method, path, token, body)
        took[kind].append((time.monotonic() - start) * 1000)
        return answer

    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for kind, session, path in reads:
            timed(kind, "GET", path, session["token"])
        created = timed("create", "POST", "/v1/sessions", body=b"{}")
        timed("delete", "DELETE", f"/v1/sessions/{created['id']}", created["token"])
    for kind, values in took.items():
        values.sort()
        count = len(values)
        at = lambda q: values[min(count - 1, int(q * count))]
        print(f"{kind}: n={count} p50_ms={at(0.5):.2f} p99_ms={at(0.99):.2f} p999_ms={at(0.999):.2f} "
              f"max_ms={values[-1]:.2f} over5ms={sum(v > 5 for v in values)} over20ms={sum(v > 20 for v in values)}")


if __name__ == "__main__":
    main()
