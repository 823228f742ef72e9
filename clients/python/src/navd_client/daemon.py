"""A `navd serve` process for tests: started on a port of its own, read from its own log, stopped.

The port is the one navd logs in its `navd listening` line (`address`), so `--listen
127.0.0.1:0` lets the kernel choose and nothing races for a port. A daemon that exits while
starting (a graph that does not validate, a port in use, a bad option) fails at once with its
own message, not after a timeout.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import httpx


class DaemonError(Exception):
    """navd could not be started: not found, or it exited or stayed silent while starting."""


def find_binary() -> str:
    """`NAVD_BINARY`, or `navd` on `PATH`."""
    configured = os.environ.get("NAVD_BINARY")
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise DaemonError(f"NAVD_BINARY={configured} is not an executable file")
        return configured
    found = shutil.which("navd")
    if found is None:
        raise DaemonError("no navd binary: set NAVD_BINARY to its path, or put navd on PATH")
    return found


class NavDaemon:
    """One `navd serve`. `url`, `port` and `admin_token` are known once `start()` returns."""

    def __init__(
        self,
        graphs: Sequence[str | os.PathLike[str]] = (),
        *,
        binary: str | None = None,
        store: str = "memory",
        host: str = "127.0.0.1",
        port: int = 0,
        admin_token: str | None = None,
        args: Sequence[str] = (),
        start_timeout: float = 30.0,
    ) -> None:
        self.graphs = [str(g) for g in graphs]
        self.binary = binary
        self.store = store
        self.host = host
        self.port = port
        self.admin_token = admin_token or "navd-test-admin-" + secrets.token_hex(12)
        self.args = list(args)
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: list[str] = []
        self.graph_names: list[str] = []
        self._changed = threading.Condition()
        self._reader: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> NavDaemon:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def command(self) -> list[str]:
        command = [self.binary or find_binary(), "serve", "--listen", f"{self.host}:{self.port}", "--store", self.store]
        command += ["--admin-token", self.admin_token, "--log-format", "json", "--drain", "0"]
        for graph in self.graphs:
            command += ["--graph", graph]
        return command + self.args

    def start(self) -> None:
        """Starts navd and returns once `/healthz` answers; raises `DaemonError` with navd's own words otherwise."""
        command = self.command()
        for graph in self.graphs:
            if not Path(graph).is_file():
                raise DaemonError(f"no graph file {graph}")
        self.lines = []
        self.graph_names = []
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
        except OSError as error:
            raise DaemonError(f"cannot run {command[0]}: {error}") from error
        self._reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.start_timeout
        address = self._wait_for_address(deadline)
        self.port = int(address.rsplit(":", 1)[1])
        self._wait_healthy(deadline)

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            record = _record(line)
            with self._changed:
                self.lines.append(line)
                if record.get("msg") == "graph loaded" and isinstance(record.get("graph"), str):
                    self.graph_names.append(record["graph"])
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _wait_for_address(self, deadline: float) -> str:
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    record = _record(line)
                    if record.get("msg") == "navd listening" and isinstance(record.get("address"), str):
                        return str(record["address"])
                seen = len(self.lines)
                if self.process is not None and self.process.poll() is not None and not self._reading():
                    raise DaemonError(self._exit_message())
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.kill()
                    raise DaemonError(f"navd did not log 'navd listening' in {self.start_timeout:.0f} s:\n" + self.log())
                self._changed.wait(min(remaining, 0.2))

    def _reading(self) -> bool:
        return self._reader is not None and self._reader.is_alive()

    def _wait_healthy(self, deadline: float) -> None:
        while True:
            if self.process is not None and self.process.poll() is not None:
                if self._reader is not None:
                    self._reader.join(2)
                raise DaemonError(self._exit_message())
            try:
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise DaemonError(f"navd's /healthz did not answer 200 in {self.start_timeout:.0f} s:\n" + self.log())
            time.sleep(0.05)

    def _exit_message(self) -> str:
        code = self.process.returncode if self.process is not None else None
        said = [str(r.get("msg")) for r in map(_record, self.lines) if r.get("level") in ("critical", "error")]
        reason = "; ".join(said) if said else (self.log() or "(it logged nothing)")
        return f"navd exited with status {code} while starting: {reason}"

    def log(self, since: int = 0) -> str:
        """The daemon's log lines from line `since` on."""
        with self._changed:
            return "\n".join(self.lines[since:])

    def settle(self, quiet: float = 0.1, limit: float = 1.0) -> None:
        """Waits until nothing was logged for `quiet` seconds (navd logs a request after answering it)."""
        deadline = time.monotonic() + limit
        with self._changed:
            while time.monotonic() < deadline:
                count = len(self.lines)
                self._changed.wait(quiet)
                if len(self.lines) == count:
                    return

    def mark(self) -> int:
        """A position in the log, for `log(since=...)`."""
        with self._changed:
            return len(self.lines)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL if navd is still there after `timeout`; answers its exit status."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._reader is not None:
            self._reader.join(2)
        return process.returncode

    def kill(self) -> None:
        """SIGKILL: the daemon stops without a word, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self._reader is not None:
            self._reader.join(2)


def _record(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
