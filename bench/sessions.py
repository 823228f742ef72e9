#!/usr/bin/env python3
"""Create navd sessions over HTTP and write "id token" lines for the wrk scripts.

    sessions.py --url http://127.0.0.1:PORT --count N --out FILE
                [--start PATH] [--procs P] [--keep K]

Each of P processes holds one keep-alive connection (http.client) and creates
its share of the N sessions with POST /v1/sessions. --keep K writes only K of
the ids and tokens, spread evenly over the creation order (for 1,000,000
sessions the benchmarks need a sample, not all of them). Exits 1 on the first
answer that is not 201. Python standard library only.
"""
import argparse
import http.client
import json
import multiprocessing
import sys
import time
import urllib.parse


def create(job):
    """Creates `count` sessions; returns the (id, token) of those whose
    global index is in the kept set, as a list of (index, id, token)."""
    host, port, start, first, count, stride = job
    body = json.dumps({"start": start} if start else {}).encode()
    headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
    connection = http.client.HTTPConnection(host, port, timeout=60)
    kept = []
    for index in range(first, first + count):
        for attempt in range(3):
            try:
                connection.request("POST", "/v1/sessions", body=body, headers=headers)
                response = connection.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, OSError):
                if attempt == 2:
                    raise
                connection.close()
                connection = http.client.HTTPConnection(host, port, timeout=60)
                time.sleep(0.1)
        if response.status != 201:
            raise SystemExit(
                f"sessions.py: POST /v1/sessions answered {response.status}: {payload[:300]!r}")
        if index % stride == 0:
            created = json.loads(payload)
            kept.append((index, created["id"], created["token"]))
    connection.close()
    return kept


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--start", default=None, help="start path (default: the graph's)")
    parser.add_argument("--procs", type=int, default=1)
    parser.add_argument("--keep", type=int, default=0, help="ids to write (default: all)")
    args = parser.parse_args()

    url = urllib.parse.urlsplit(args.url)
    keep = args.keep if 0 < args.keep < args.count else args.count
    stride = max(1, args.count // keep)
    procs = max(1, min(args.procs, args.count))
    # Chunks of at most 10,000 so that progress shows and the pool balances.
    chunk = max(1, min(10_000, -(-args.count // procs)))
    jobs = [(url.hostname, url.port or 80, args.start, first, min(chunk, args.count - first), stride)
            for first in range(0, args.count, chunk)]

    began = time.monotonic()
    rows = []
    if procs == 1:
        for job in jobs:
            rows += create(job)
    else:
        with multiprocessing.Pool(procs) as pool:
            done = 0
            for kept in pool.imap_unordered(create, jobs):
                rows += kept
                done += 1
                if len(jobs) >= 20 and done % max(1, len(jobs) // 10) == 0:
                    print(f"  created ~{done * chunk:,} of {args.count:,} sessions "
                          f"({time.monotonic() - began:.0f}s)", file=sys.stderr)
    rows.sort()
    rows = rows[:keep]
    with open(args.out, "w") as out:
        for _, session_id, token in rows:
            out.write(f"{session_id} {token}\n")
    elapsed = time.monotonic() - began
    print(f"created {args.count:,} sessions in {elapsed:.1f}s "
          f"({args.count / max(elapsed, 1e-9):,.0f}/s), wrote {len(rows):,} to {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
