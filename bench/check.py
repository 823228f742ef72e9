#!/usr/bin/env python3
"""How long `navd check` takes over a large feed dump (BENCHMARKS.md; the goal: 10,000 sessions
of 20 changes in under 60 s on a 2-core machine).

    check.py [--navd PATH] [--sessions 10000] [--procs 4] [--keep DIR]

Starts navd (memory store, Examples/news.json, an admin token) and records real sessions on it
over HTTP, each the same journey of 20 changes with its own parameters: a creation, links with
parameters, back, params, a state patch, a context change, exits, a command, a confirmation
(asked for with a 409, then given), a batch, and navigations. Then dumps the full-form feed with
`navd feed --full` into a file and times one `navd check Examples/news.json --journeys FILE`,
checking that it reports every session replayed and none diverging. Prints the command, the
records, the seconds and the peak memory. --keep DIR keeps the feed dump there. Python standard
library only.
"""
import argparse
import http.client
import json
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GRAPH = os.path.join(ROOT, "Examples", "news.json")
TOKEN = "check-bench-admin-token"
CHANGES = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(navd, port, log):
    process = subprocess.Popen([navd, "serve", "--listen", f"127.0.0.1:{port}", "--store", "memory", "--graph", GRAPH,
                                "--admin-token", TOKEN, "--max-feed-bytes", "4G", "--log-level", "warning"],
                               stdout=log, stderr=log)
    for _ in range(100):
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/healthz")
            connection.getresponse().read()
            connection.close()
            return process
        except OSError:
            time.sleep(0.1)
    raise SystemExit("check.py: navd did not start")


class Session:
    def __init__(self, connection, context):
        self.connection = connection
        created = self.send("POST", "/v1/sessions", {"context": context}, expect=201)
        self.id, self.token = created["id"], created["token"]
        self.top = created["screens"][-1]["id"]

    def send(self, method, path, body=None, expect=200, content_type="application/json"):
        headers = {"Content-Type": content_type}
        if getattr(self, "token", None):
            headers["Authorization"] = "Bearer " + self.token
        self.connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        answer = self.connection.getresponse()
        payload = answer.read()
        if answer.status != expect:
            raise SystemExit(f"check.py: {method} {path} answered {answer.status}: {payload[:300]!r}")
        value = json.loads(payload) if payload else {}
        if answer.status == 200 and value.get("screens"):
            self.top = value["screens"][-1]["id"]
        return value

    def change(self, method, suffix, body=None, **options):
        return self.send(method, f"/v1/sessions/{self.id}{suffix}", body, **options)


def journey(connection, rng):
    """One session of CHANGES changes (each one feed record)."""
    category, item = rng.randrange(5), rng.randrange(1, 10_000)
    session = Session(connection, {"user": f"u{item}"})
    session.change("POST", "/transitions", {"name": "news", "params": {"category": category}})
    session.change("POST", "/transitions", {"name": "show", "params": {"id": item}})
    session.change("POST", "/back", {})
    session.change("PUT", f"/screens/{session.top}/params", {"category": (category + 1) % 5})
    session.change("POST", "/navigate", {"path": "^/top/help"})
    session.change("PATCH", "/screens/e1/state", {"editing": True}, content_type="application/merge-patch+json")
    session.change("POST", "/transitions", {"name": "top"})
    session.change("PATCH", "/context", {"locale": f"l{item % 3}"}, content_type="application/merge-patch+json")
    session.change("POST", "/navigate", {"path": f"list_news(category=2)/show_news(id={item})"})
    session.change("POST", "/exit", {})
    session.change("POST", "/navigate", {"path": "^/top/edit_profile"})
    session.change("POST", f"/screens/{session.top}/commands", {"name": "type", "args": {"text": f"t{item}"}})
    asked = session.change("POST", "/navigate", {"path": "^/top"}, expect=409)
    session.change("POST", "/confirm", {"token": asked["confirmation"]["token"]})
    session.change("POST", "/intents", {"intents": [{"navigate": "^/top/help"}, {"link": "top"}]})
    session.change("POST", "/transitions", {"name": "coupons"})
    session.change("POST", "/navigate", {"path": "^/top"})
    session.change("POST", "/transitions", {"name": "news", "params": {"category": category}})
    session.change("PATCH", "/screens/e1/state", {"editing": False}, content_type="application/merge-patch+json")
    session.change("POST", "/back", {})


def drive(job):
    port, first, count = job
    rng = random.Random(first)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(count):
        journey(connection, rng)
    connection.close()
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--navd", default=os.path.join(ROOT, ".build", "release", "navd"))
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--keep", default=None, help="a directory to keep the feed dump in")
    arguments = parser.parse_args()
    if not os.access(arguments.navd, os.X_OK):
        raise SystemExit(f"check.py: {arguments.navd} is missing: run 'swift build -c release --product navd'")
    work = tempfile.mkdtemp(prefix="navd-check.")
    navd = os.path.join(work, "navd")
    shutil.copy(arguments.navd, navd)  # others may rebuild .build/release/navd meanwhile
    port = free_port()
    with open(os.path.join(work, "navd.log"), "w") as log:
        daemon = start(navd, port, log)
        try:
            began = time.perf_counter()
            share = arguments.sessions // arguments.procs
            jobs = [(port, index * share, share + (arguments.sessions % arguments.procs if index == 0 else 0))
                    for index in range(arguments.procs)]
            with multiprocessing.Pool(arguments.procs) as pool:
                made = sum(pool.map(drive, jobs))
            print(f"recorded {made} sessions of {CHANGES} changes in {time.perf_counter() - began:.1f} s", flush=True)
            if arguments.keep:
                os.makedirs(arguments.keep, exist_ok=True)
            feed = os.path.join(arguments.keep or work, "feed.jsonl")
            with open(feed, "w") as out:
                subprocess.run([navd, "feed", "--full", "--url", f"http://127.0.0.1:{port}", "--token", TOKEN],
                               stdout=out, stderr=subprocess.DEVNULL, check=True)
        finally:
            daemon.terminate()
            daemon.wait()
    with open(feed, "rb") as dump:
        records = sum(1 for _ in dump)
    print(f"dumped {records} records ({os.path.getsize(feed) / 1e6:.0f} MB) with navd feed --full", flush=True)
    command = [navd, "check", GRAPH, "--journeys", feed]
    began = time.perf_counter()
    with open(os.path.join(work, "check.out"), "w+") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - began
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().strip().splitlines()
    peak = usage.ru_maxrss / 1024
    summary = lines[-1] if lines else ""
    print(f"command: navd check Examples/news.json --journeys feed.jsonl ({records} records)")
    print(f"answer:  {summary} (exit {process.returncode})")
    print(f"time:    {seconds:.1f} s, peak memory {peak:.0f} MiB, {records / seconds:,.0f} records/s")
    if not arguments.keep:
        shutil.rmtree(work, ignore_errors=True)
    expected = f"checked {arguments.sessions} sessions, 0 diverge, 0 not replayed"
    if process.returncode != 0 or summary != expected:
        print(f"check.py: expected '{expected}' and exit 0", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
