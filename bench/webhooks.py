#!/usr/bin/env python3
"""Webhook delivery under load (BENCHMARKS.md, "Navigation analytics").

    webhooks.py [--navd PATH] [--store memory|sqlite] [--rate 1000] [--sessions 200]
                [--duration 60] [--down-at 10] [--down 0]

Starts navd with one webhook endpoint pointed at a receiver of its own (Python standard library,
verifying every signature), drives `--rate` navigations a second over `--sessions` sessions for
`--duration` seconds, and measures each record's delivery lag: the time it arrived at the
receiver minus the record's `time` (when navd applied the change). With `--down S` the receiver
answers 503 for S seconds from `--down-at` on, as a receiver that is down does, and the report
adds how long after its return every record written before it came back had arrived (the
catch-up). Prints the lag's median and p99 over the records written while the receiver was up,
the navigations and records counted, and the catch-up. Exits 1 if a record is missing or a
signature is wrong.
"""
import argparse
import base64
import bisect
import hashlib
import hmac
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = b"bench-webhook-secret"
ADMIN = "bench-webhooks-admin-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    def __init__(self):
        self.lock = threading.Lock()
        self.arrivals = {}  # record id -> (arrived, record time)
        self.bad_signatures = 0
        self.down_until = 0.0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                now = time.time()
                if now < receiver.down_until:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                msg_id, stamp = self.headers["webhook-id"], self.headers["webhook-timestamp"]
                expected = base64.b64encode(hmac.new(SECRET, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()).decode()
                offered = [s.split(",", 1)[1] for s in self.headers["webhook-signature"].split() if s.startswith("v1,")]
                with receiver.lock:
                    if expected not in offered:
                        receiver.bad_signatures += 1
                    for event in json.loads(body):
                        if event["id"] not in receiver.arrivals:
                            written = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
                            receiver.arrivals[event["id"]] = (now, written)
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def request(connection, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    connection.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
    answer = connection.getresponse()
    return answer.status, answer.read()


def drive(port, sessions, rate, duration, counts, index, threads):
    """Navigates its share of the sessions, paced to its share of the rate."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    mine = sessions[index::threads]
    interval = threads / rate
    paths = ["^/top/list_news(category=1)/show_news(id=2)", "^/top"]
    start = time.time()
    n = 0
    while time.time() - start < duration:
        session = mine[n % len(mine)]
        try:
            status, _ = request(connection, "POST", f"/v1/sessions/{session[0]}/navigate",
                                {"path": paths[(n // len(mine)) % 2]}, session[1])
        except (http.client.HTTPException, OSError):
            # A keep-alive connection navd closed (its idle or per-connection limits): open another.
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            status = 0
        counts[index] += status == 200
        n += 1
        delay = start + n * interval - time.time()
        if delay > 0:
            time.sleep(delay)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--navd", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release", "navd"))
    parser.add_argument("--store", default="sqlite")
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--down-at", type=float, default=10)
    parser.add_argument("--down", type=float, default=0)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    receiver = Receiver()
    folder = tempfile.mkdtemp(prefix="navd-webhooks.")
    port = free_port()
    store = "memory" if args.store == "memory" else f"sqlite:{folder}/navd.db"
    graph = os.path.join(os.path.dirname(__file__), "..", "Examples", "news.json")
    log = open(os.path.join(folder, "navd.log"), "w")
    navd = subprocess.Popen([args.navd, "serve", "--listen", f"127.0.0.1:{port}", "--store", store, "--graph", graph,
                             "--admin-token", ADMIN, "--log-level", "warning",
                             "--webhook", f"bench=http://127.0.0.1:{receiver.port}/",
                             "--webhook-secret", "bench=" + SECRET.decode()], stdout=log, stderr=log)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(100):
            try:
                status, body = request(connection, "GET", "/v1/webhooks", token=ADMIN)
                if status == 200 and json.loads(body)["webhooks"][0]["position"] is not None:
                    break
            except OSError:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            time.sleep(0.1)
        sessions = []
        for _ in range(args.sessions):
            status, body = request(connection, "POST", "/v1/sessions", {})
            created = json.loads(body)
            sessions.append((created["id"], created["token"]))

        started = time.time()
        if args.down:
            down_from = started + args.down_at
            threading.Timer(args.down_at, lambda: setattr(receiver, "down_until", down_from + args.down)).start()
        counts = [0] * args.threads
        workers = [threading.Thread(target=drive, args=(port, sessions, args.rate, args.duration, counts, i, args.threads))
                   for i in range(args.threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        driven = time.time() - started

        # Every record the feed holds must arrive: wait for the last ones. (A new connection: navd
        # closed the idle one meanwhile.)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        ids = []
        after = ""
        while True:
            status, body = request(connection, "GET", f"/v1/feed?limit=1000{after}", token=ADMIN)
            page = json.loads(body)
            ids += [record["id"] for record in page["records"]]
            if not page["records"]:
                break
            after = "&after=" + page["next"]
        deadline = time.time() + 120
        while time.time() < deadline:
            with receiver.lock:
                if all(i in receiver.arrivals for i in ids):
                    break
            time.sleep(0.2)
        with receiver.lock:
            arrivals = dict(receiver.arrivals)
        missing = [i for i in ids if i not in arrivals]

        # Steady state: before the receiver went down, and once it had caught up after (the
        # records it was catching up on are the catch-up's, reported apart).
        caught_up = float("nan")
        if args.down:
            back = down_from + args.down
            before = [arrived for arrived, written in arrivals.values() if written < back]
            caught_up = max(before) - back if before else float("nan")
        up_lags = sorted(arrived - written for arrived, written in arrivals.values()
                         if not args.down or written < down_from - 2 or written > back + caught_up + 5)
        def pct(p):
            return up_lags[min(len(up_lags) - 1, int(p * len(up_lags)))] if up_lags else float("nan")
        navigations = sum(counts)
        print(f"store {args.store}: {navigations} navigations in {driven:.1f} s ({navigations / driven:.0f}/s), "
              f"{len(ids)} records in the feed, {len(arrivals)} delivered, {len(missing)} missing, "
              f"{receiver.bad_signatures} bad signatures")
        print(f"lag while the receiver was up (outside an outage and its catch-up): median {pct(0.5) * 1000:.0f} ms, p99 {pct(0.99) * 1000:.0f} ms, "
              f"max {up_lags[-1] * 1000 if up_lags else float('nan'):.0f} ms")
        if args.down:
            print(f"receiver down {args.down:.0f} s: every record written before its return arrived {caught_up:.1f} s after it")
        sys.exit(1 if missing or receiver.bad_signatures else 0)
    finally:
        navd.terminate()
        navd.wait()
        receiver.server.shutdown()


if __name__ == "__main__":
    main()
