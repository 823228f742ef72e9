#!/usr/bin/env python3
"""Reading a session at a past version (BENCHMARKS.md, the goals' table).

    versions.py [--navd PATH] [--store memory|sqlite] [--versions 1000]

Starts navd, makes one session and navigates it to `--versions` versions, then times
`GET /v1/sessions/{id}?version=V` over one keep-alive connection: reads spread over every version,
then among the newest. With the SQLite store it then restarts navd on the same file (the checkpoints
the store keeps are then the only ones) and times the first reads again. Python standard library only.
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time

PATHS = ["^/top/list_news(category=1)/show_news(id=2)", "^/top"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(navd, store, port, log):
    graph = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Examples", "news.json")
    process = subprocess.Popen([navd, "serve", "--listen", f"127.0.0.1:{port}", "--store", store, "--graph", graph,
                                "--log-level", "warning"], stdout=log, stderr=log)
    for _ in range(100):
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/healthz")
            connection.getresponse().read()
            return process, connection
        except OSError:
            time.sleep(0.1)
    raise SystemExit("navd did not start")


def request(connection, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    answer = connection.getresponse()
    return answer.status, answer.read()


def timed(connection, session, token, versions):
    times = []
    for version in versions:
        began = time.perf_counter()
        status, _ = request(connection, "GET", f"/v1/sessions/{session}?version={version}", token=token)
        times.append((time.perf_counter() - began) * 1000)
        if status != 200:
            raise SystemExit(f"version {version}: {status}")
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--navd", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release", "navd"))
    parser.add_argument("--store", default="sqlite")
    parser.add_argument("--versions", type=int, default=1000)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="navd-versions.")
    store = "memory" if args.store == "memory" else f"sqlite:{folder}/navd.db"
    port = free_port()
    log = open(os.path.join(folder, "navd.log"), "w")
    process, connection = start(args.navd, store, port, log)
    try:
        _, body = request(connection, "POST", "/v1/sessions", {})
        created = json.loads(body)
        session, token = created["id"], created["token"]
        for index in range(args.versions - 1):
            status, _ = request(connection, "POST", f"/v1/sessions/{session}/navigate", {"path": PATHS[index % 2]}, token)
            if status != 200:
                raise SystemExit(f"navigate: {status}")
        n = args.versions
        for label, versions in [("spread", list(range(1, n + 1, max(1, n // 27)))), ("newest", list(range(max(1, n - 63), n + 1, 3)))]:
            times = timed(connection, session, token, versions)
            print(f"{args.store} {label}: median {statistics.median(times):.2f} ms, max {max(times):.2f} ms over {len(times)} reads")
        if args.store != "memory":
            process.terminate()
            process.wait()
            process, connection = start(args.navd, store, port, log)
            for version in [n - 1, n // 2, 2]:
                print(f"{args.store} after a restart, version {version}: {timed(connection, session, token, [version])[0]:.2f} ms")
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
