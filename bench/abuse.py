#!/usr/bin/env python3
"""bench/abuse.py: navd under attack, timed (BENCHMARKS.md, "Under attack").

Each attack runs against a fresh release navd (SQLite store in a temporary directory, the
example graph, an admin token) while a prober opens a new connection for `GET /healthz` every
20 ms and a sampler reads the daemon's resident memory every 100 ms. One line per attack:
/healthz p50, p99 and worst latency during the attack, failed probes, RSS before and at its
peak, and the budgets navd reported at the end (navd_budget_used / navd_budget_limit).

    bench/abuse.py [ATTACK ...]     ATTACK: longpolls streams buffers idempotency fat graphs
                                    diagrams framing (default: all of them)

Environment: NAVD (default .build/release/navd), SCALE (default 1.0: multiplies every count).
The goal is /healthz p99 <= 50 ms during each attack and RSS within the documented budgets.
Only loopback addresses are used; every loop is bounded in count and time.
"""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAVD = os.environ.get("NAVD", os.path.join(ROOT, ".build/release/navd"))
SCALE = float(os.environ.get("SCALE", "1.0"))
ADMIN = "abuse-bench-admin-token-0123456789"


def scaled(count):
    return max(1, int(count * SCALE))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Daemon:
    """A release navd on a free loopback port, stopped with SIGTERM."""

    def __init__(self, extra=()):
        self.directory = tempfile.mkdtemp(prefix="navd-abuse-")
        self.port = free_port()
        self.log = open(os.path.join(self.directory, "navd.log"), "w")
        self.process = subprocess.Popen(
            [NAVD, "serve", "--graph", os.path.join(ROOT, "Examples/news.json"),
             "--listen", f"127.0.0.1:{self.port}", "--store", f"sqlite:{self.directory}/navd.db",
             "--admin-token", ADMIN, "--log-level", "warning", "--drain", "0", *extra],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("navd did not start: see " + self.log.name)

    def request(self, method, path, body=None, headers=None, timeout=30):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
            fields = dict(headers or {})
            if data is not None and "Content-Type" not in fields:
                fields["Content-Type"] = "application/json"
            connection.request(method, path, body=data, headers=fields)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def session(self):
        status, body = self.request("POST", "/v1/sessions", {})
        assert status == 201, body
        made = json.loads(body)
        return made["id"], made["token"], made["watchToken"]

    def rss(self):
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def budgets(self):
        _, body = self.request("GET", "/metrics")
        used, limit = {}, {}
        for line in body.decode().splitlines():
            for name, table in (("navd_budget_used{", used), ("navd_budget_limit{", limit)):
                if line.startswith(name):
                    resource = line.split('resource="', 1)[1].split('"', 1)[0]
                    table[resource] = int(float(line.rsplit(" ", 1)[1]))
        return {resource: (used.get(resource, 0), limit[resource]) for resource in limit}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        subprocess.run(["rm", "-rf", self.directory])


class Watch:
    """Probes /healthz on a new connection every 20 ms and samples RSS every 100 ms."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.latencies = []
        self.failures = 0
        self.peak = daemon.rss()
        self.before = self.peak
        self.running = True
        self.threads = [threading.Thread(target=self.probe), threading.Thread(target=self.sample)]
        for thread in self.threads:
            thread.start()

    def probe(self):
        while self.running:
            started = time.perf_counter()
            try:
                status, _ = self.daemon.request("GET", "/healthz", timeout=10)
                if status != 200:
                    self.failures += 1
            except OSError:
                self.failures += 1
            self.latencies.append(time.perf_counter() - started)
            time.sleep(0.02)

    def sample(self):
        while self.running:
            self.peak = max(self.peak, self.daemon.rss())
            time.sleep(0.1)

    def finish(self):
        self.running = False
        for thread in self.threads:
            thread.join()
        ordered = sorted(self.latencies) or [0.0]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return {"probes": len(ordered), "p50_ms": statistics.median(ordered) * 1000, "p99_ms": p99 * 1000,
                "max_ms": ordered[-1] * 1000, "failed": self.failures,
                "rss_before_mb": self.before / 2**20, "rss_peak_mb": self.peak / 2**20}


def in_parallel(workers, body):
    threads = [threading.Thread(target=body, args=(index,)) for index in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def raw(daemon, text, read=True, hold=0.0):
    """Sends raw bytes on a new connection; returns what came back (up to 64 KiB, 5 s)."""
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=5) as connection:
        connection.sendall(text if isinstance(text, bytes) else text.encode())
        if hold:
            time.sleep(hold)
        if not read:
            return b""
        received = b""
        try:
            while len(received) < 65536:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                received += chunk
        except OSError:
            pass
        return received


# Attacks. Each returns a short note on what it did.

def attack_longpolls(daemon):
    """Long polls with a watch token, each hung up after 0.3 s."""
    session, _, watch = daemon.session()
    total, workers = scaled(8300), 200

    def worker(index):
        for _ in range(index, total, workers):
            try:
                with socket.create_connection(("127.0.0.1", daemon.port), timeout=5) as connection:
                    connection.sendall(
                        f"GET /v1/sessions/{session}/events?access_token={watch}&after=0&wait=60 HTTP/1.1\r\n"
                        f"Host: 127.0.0.1\r\n\r\n".encode())
                    time.sleep(0.3)
            except OSError:
                pass
    in_parallel(workers, worker)
    return f"{total} long polls hung up after 0.3 s"


def attack_streams(daemon):
    """Event streams opened, read once and hung up, in waves."""
    session, _, watch = daemon.session()
    waves, per_wave = scaled(10), 300

    def worker(index):
        for _ in range(waves):
            try:
                raw(daemon, f"GET /v1/sessions/{session}/events?access_token={watch} HTTP/1.1\r\n"
                            f"Host: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", read=False, hold=0.1)
            except OSError:
                pass
    in_parallel(per_wave, worker)
    return f"{waves * per_wave} streams read once and hung up"


def attack_buffers(daemon):
    """Watchers that never read (15 a session, under the per-session bound), then large changes."""
    sessions = [daemon.session() for _ in range(scaled(14))]
    sockets = []
    for session, _, watch in sessions:
        for _ in range(15):
            connection = socket.socket()
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            connection.connect(("127.0.0.1", daemon.port))
            connection.sendall(f"GET /v1/sessions/{session}/events?access_token={watch} HTTP/1.1\r\n"
                               f"Host: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
            sockets.append(connection)
    big = "x" * 60000
    changed = 0

    def worker(index):
        nonlocal changed
        session, token, _ = sessions[index]
        for change in range(60):
            status, _ = daemon.request(
                "PATCH", f"/v1/sessions/{session}/screens/e1/state", {"blob": big + str(change)},
                {"Authorization": f"Bearer {token}", "Content-Type": "application/merge-patch+json"})
            changed += status == 200
    in_parallel(len(sessions), worker)
    for connection in sockets:
        connection.close()
    return f"{len(sockets)} non-reading watchers of {len(sessions)} sessions, {changed} changes of 60 KB"


def attack_idempotency(daemon):
    """Keyed changes with a large state and fresh keys: one token, then many sessions at once."""
    sessions = [daemon.session() for _ in range(scaled(100))]
    for session, token, _ in sessions:
        daemon.request("PATCH", f"/v1/sessions/{session}/screens/e1/state", {"blob": "y" * 60000},
                       {"Authorization": f"Bearer {token}", "Content-Type": "application/merge-patch+json"})
    total, workers = scaled(12000), 4
    answered = {}
    lock = threading.Lock()

    def worker(index):
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
        for number in range(index, total, workers):
            # The first half from one token, the rest spread over every session.
            session, token, _ = sessions[0] if number < total // 2 else sessions[number % len(sessions)]
            path = "list_news" if number % 2 else "^/top"
            connection.request("POST", f"/v1/sessions/{session}/navigate", body=json.dumps({"path": path}),
                               headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                                        "Idempotency-Key": f"k{number}"})
            response = connection.getresponse()
            response.read()
            with lock:
                answered[response.status] = answered.get(response.status, 0) + 1
        connection.close()
    in_parallel(workers, worker)
    return f"{total} keyed navigations with a 60 KB state: " + \
        ", ".join(f"{count}x{status}" for status, count in sorted(answered.items()))


def attack_fat(daemon):
    """Small patches to sessions of 32 screens of 60 KB of state each: every change logs the whole
    2 MB snapshot, so the SQLite change log must end its generations by their bytes."""
    sessions = []
    path = "/top" + "".join(f"/show_news(id={index})" for index in range(30))
    for _ in range(scaled(4)):
        session, token, _ = daemon.session()
        auth = {"Authorization": f"Bearer {token}"}
        status, body = daemon.request("POST", f"/v1/sessions/{session}/navigate", {"path": path}, auth)
        assert status == 200, body
        screens = [screen["id"] for screen in json.loads(body)["screens"]]
        patch = dict(auth, **{"Content-Type": "application/merge-patch+json"})
        for screen in screens:
            daemon.request("PATCH", f"/v1/sessions/{session}/screens/{screen}/state", {"blob": "z" * 60000}, patch)
        sessions.append((session, patch, screens[-1]))
    peak = [0]
    running = [True]

    def sample_log():
        while running[0]:
            logged = 0
            for name in os.listdir(daemon.directory):
                if "-changes-" in name:
                    try:
                        logged += os.path.getsize(os.path.join(daemon.directory, name))
                    except OSError:
                        pass  # folded and removed meanwhile
            peak[0] = max(peak[0], logged)
            time.sleep(0.05)
    sampler = threading.Thread(target=sample_log)
    sampler.start()
    changes = scaled(3000)
    changed = 0

    def worker(index):
        nonlocal changed
        session, patch, top = sessions[index]
        for number in range(changes // len(sessions)):
            status, _ = daemon.request("PATCH", f"/v1/sessions/{session}/screens/{top}/state", {"n": number}, patch)
            changed += status == 200
    in_parallel(len(sessions), worker)
    running[0] = False
    sampler.join()
    return f"{changed} patches of a few bytes to {len(sessions)} sessions of 2 MB; change log peak {peak[0] / 2**20:.0f} MB"


def big_graph(name, scenes, global_links):
    document = {"name": name, "start": "/s0", "scenes": {f"s{i}": {} for i in range(scenes)},
                "links": {f"g{i}": {"path": f"^/s{i % scenes}"} for i in range(global_links)}}
    return json.dumps(document).encode()


def attack_graphs(daemon):
    """Versions of a graph with 1,500 scenes and 1,500 global links uploaded one after another."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    statuses = []
    for version in range(scaled(20)):
        body = big_graph("wide", 1500, 1500 + version)
        statuses.append(daemon.request("PUT", "/v1/graphs/wide", body, admin, timeout=60)[0])
    return f"{len(statuses)} uploads of a {len(big_graph('wide', 1500, 1500)) // 1024} KB graph: " + \
        ", ".join(f"{statuses.count(s)}x{s}" for s in sorted(set(statuses)))


def attack_diagrams(daemon):
    """Unauthenticated SVG diagrams of the largest graph navd draws (2,500 scenes, 2,500 links),
    four at a time; and an upload of a 30,000-scene graph, which is refused."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    huge = {"name": "huge", "start": "/s0", "scenes": {f"s{i}": {} for i in range(30000)}}
    refused, _ = daemon.request("PUT", "/v1/graphs/huge", json.dumps(huge).encode(), admin, timeout=120)
    scenes = scaled(2500)
    document = {"name": "huge", "start": "/s0",
                "scenes": {f"s{i}": {"links": {"next": {"path": f"^/s{(i + 1) % scenes}"}}} for i in range(scenes)}}
    status, _ = daemon.request("PUT", "/v1/graphs/huge", json.dumps(document).encode(), admin, timeout=120)
    answers = []
    deadline = time.time() + 15

    def worker(index):
        while time.time() < deadline:
            try:
                answers.append(daemon.request("GET", "/v1/graphs/huge/diagram?format=svg", timeout=60)[0])
            except OSError:
                answers.append(0)
    in_parallel(4, worker)
    return f"30,000 scenes: {refused}; 2,500: {status}; {len(answers)} diagrams in 15 s: " + \
        ", ".join(f"{answers.count(s)}x{s}" for s in sorted(set(answers)))


FRAMING = [
    "POST /v1/sessions HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "POST /v1/sessions HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "POST /v1/sessions HTTP/1.1\r\nHost: a\r\nContent-Length : 2\r\n\r\n{}",
    "POST /v1/sessions HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
    "GET /healthz HTTP/1.1\r\n\r\n",
    "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "POST /v1/sessions HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n{}",
]


def attack_framing(daemon):
    """Request-smuggling shapes on raw connections, each followed by a smuggled request."""
    total = scaled(2000)
    answered = {}
    lock = threading.Lock()

    def worker(index):
        for number in range(index, total, 20):
            text = FRAMING[number % len(FRAMING)] + "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
            try:
                reply = raw(daemon, text)
            except OSError:
                reply = b""
            status = reply[9:12].decode(errors="replace") if reply.startswith(b"HTTP/1.1 ") else "none"
            # The request behind the attack asks for /metrics: its text in the reply is a smuggle.
            smuggled = b"# HELP" in reply
            with lock:
                key = status + (" +smuggled" if smuggled else "")
                answered[key] = answered.get(key, 0) + 1
    in_parallel(20, worker)
    return f"{total} framing attacks: " + ", ".join(f"{count}x{key}" for key, count in sorted(answered.items()))


ATTACKS = {
    "longpolls": (attack_longpolls, ()),
    "streams": (attack_streams, ()),
    "buffers": (attack_buffers, ()),
    "idempotency": (attack_idempotency, ()),
    "fat": (attack_fat, ()),
    "graphs": (attack_graphs, ()),
    "diagrams": (attack_diagrams, ("--max-body", "33554432")),
    "framing": (attack_framing, ()),
}


def main():
    chosen = sys.argv[1:] or list(ATTACKS)
    unknown = [name for name in chosen if name not in ATTACKS]
    if unknown:
        sys.exit(f"unknown attack: {', '.join(unknown)} (known: {', '.join(ATTACKS)})")
    print(f"navd {NAVD}, {os.cpu_count()} cores, scale {SCALE}")
    print(f"{'attack':<12} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'failed':>6} {'rss MB':>13}  what")
    for name in chosen:
        attack, flags = ATTACKS[name]
        daemon = Daemon(flags)
        try:
            watch = Watch(daemon)
            started = time.time()
            note = attack(daemon)
            seconds = time.time() - started
            result = watch.finish()
            time.sleep(1.5)  # hang-ups are noticed within a second: budgets should have fallen back
            budgets = daemon.budgets()
            alive = daemon.process.poll() is None
        finally:
            daemon.stop()
        held = " ".join(f"{resource}={used}/{limit}" for resource, (used, limit) in budgets.items())
        print(f"{name:<12} {result['p50_ms']:7.1f} {result['p99_ms']:7.1f} {result['max_ms']:7.0f} "
              f"{result['failed']:6d} {result['rss_before_mb']:5.0f} -> {result['rss_peak_mb']:5.0f}  "
              f"{note}; {seconds:.0f} s{'' if alive else '; NAVD DIED'}")
        print(f"{'':<12} budgets after: {held}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
