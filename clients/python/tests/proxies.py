"""Proxies the tests put between the client and navd, to lose answers and cut streams."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Callable

import httpx


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    status: int | None = None


@dataclass
class Fault:
    """What the proxy does to the next request that `matches`, `times` times."""

    matches: Callable[[str, str], bool]
    kind: str  # "drop-answer": forwarded, then the connection closed unanswered; "status": answered by the proxy
    times: int = 1
    status: int = 503
    retry_after: str | None = "0"
    body: bytes = b'{"type":"urn:navd:problem:shutting_down","title":"Shutting down","status":503,"detail":"a test","code":"shutting_down"}'


@dataclass
class HTTPProxy:
    """An HTTP proxy of whole requests (no streams) that records each request and applies faults."""

    upstream: str
    faults: list[Fault] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.http = httpx.Client(timeout=10)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.listener.close()
        self.http.close()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(connection,), daemon=True).start()

    def _handle(self, connection: socket.socket) -> None:
        with connection:
            reader = connection.makefile("rb")
            while True:
                request_line = reader.readline().decode()
                if not request_line.strip():
                    return
                method, path, _ = request_line.split(" ", 2)
                headers: dict[str, str] = {}
                while (line := reader.readline().decode()).strip():
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length", "0")))
                seen = Seen(method, path, headers)
                self.seen.append(seen)
                fault = next((f for f in self.faults if f.times > 0 and f.matches(method, path)), None)
                if fault is not None:
                    fault.times -= 1
                if fault is not None and fault.kind == "status":
                    seen.status = fault.status
                    extra = f"Retry-After: {fault.retry_after}\r\n" if fault.retry_after is not None else ""
                    connection.sendall(
                        f"HTTP/1.1 {fault.status} Refused\r\nContent-Type: application/problem+json\r\n{extra}"
                        f"Content-Length: {len(fault.body)}\r\n\r\n".encode() + fault.body
                    )
                    continue
                forwarded = {k: v for k, v in headers.items() if k not in ("host", "content-length", "connection")}
                answer = self.http.request(method, self.upstream + path, headers=forwarded, content=body)
                seen.status = answer.status_code
                if fault is not None and fault.kind == "drop-answer":
                    return  # applied upstream; the client never hears of it
                head = f"HTTP/1.1 {answer.status_code} X\r\n"
                for name, value in answer.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        head += f"{name}: {value}\r\n"
                connection.sendall((head + f"Content-Length: {len(answer.content)}\r\n\r\n").encode() + answer.content)


class TCPProxy:
    """A byte proxy for streams. `cut_inside(marker)`: the next upstream chunk holding `marker` is
    passed on only up to the middle of it, then every connection is closed. `hold()` refuses new
    connections (closing them at once) until `release()`."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()
        self.marker: bytes | None = None
        self.cut_done = threading.Event()
        self.held = False
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut_inside(self, marker: bytes) -> None:
        self.cut_done.clear()
        self.marker = marker

    def hold(self) -> None:
        self.held = True

    def release(self) -> None:
        self.held = False

    def close(self) -> None:
        self.listener.close()
        self.cut()

    def cut(self) -> None:
        with self.lock:
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                connection.close()
            self.connections.clear()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.held:
                client.close()
                continue
            self.accepted += 1
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.connections += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket, downstream: bool) -> None:
        while True:
            try:
                chunk = source.recv(65536)
            except OSError:
                return
            if not chunk:
                for s in (source, target):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            marker = self.marker
            if downstream and marker is not None and marker in chunk:
                self.marker = None
                middle = chunk.index(marker) + len(marker) // 2 + 1
                try:
                    target.sendall(chunk[:middle])
                except OSError:
                    pass
                self.cut()
                self.cut_done.set()
                return
            try:
                target.sendall(chunk)
            except OSError:
                return
