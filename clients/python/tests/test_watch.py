"""`Session.watch`: another client's changes followed live, across a cut and a daemon restart."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Iterator

import pytest

from navd_client import (
    Client,
    EndMessage,
    Event,
    LifecycleMessage,
    Message,
    NavDaemon,
    NavProblem,
    Session,
    StreamError,
    ViewMessage,
)
from navd_client.sse import Comment, Retry, ServerSentEvent, ServerSentEventParser, parse

from proxies import TCPProxy

EXAMPLES = Path(__file__).resolve().parents[3] / "Examples"


class Follower:
    """Reads a watch on a thread of its own, so the test can change the session meanwhile."""

    def __init__(self, messages: Iterator[Message]) -> None:
        self.queue: queue.Queue[Message | BaseException] = queue.Queue()
        self.thread = threading.Thread(target=self._run, args=(messages,), daemon=True)
        self.thread.start()

    def _run(self, messages: Iterator[Message]) -> None:
        try:
            for message in messages:
                self.queue.put(message)
        except BaseException as error:  # handed to the test
            self.queue.put(error)

    def next(self, timeout: float = 15.0) -> Message:
        item = self.queue.get(timeout=timeout)
        if isinstance(item, BaseException):
            raise item
        return item

    def events_until_view(self, version: int) -> list[Event]:
        """The lifecycle events up to the view of `version`."""
        events: list[Event] = []
        while True:
            message = self.next()
            if isinstance(message, LifecycleMessage):
                events.append(message.event)
            elif isinstance(message, ViewMessage) and message.view.version >= version:
                return events


def watcher_of(url: str, session: Session) -> Session:
    """The same session seen through another client, with its watch token only."""
    return Client(url).session(session.id, None, session.watch_token)


def test_a_watcher_follows_another_clients_changes_and_its_end(navd_client: Client, navd_server: NavDaemon) -> None:
    session = navd_client.create_session()
    follower = Follower(watcher_of(navd_server.url, session).watch())
    first = follower.next()
    assert isinstance(first, ViewMessage) and first.view.version == 1
    moved = session.navigate("list_news")
    assert follower.events_until_view(moved.version) == moved.events
    linked = session.link("show", {"id": 1})
    assert follower.events_until_view(linked.version) == linked.events
    session.delete()
    end = follower.next()
    assert end == EndMessage("deleted")
    follower.thread.join(5)
    assert not follower.thread.is_alive()


def test_after_replays_the_retained_events(navd_client: Client) -> None:
    session = navd_client.create_session()
    moved = session.navigate("list_news")
    assert session.created is not None
    messages = session.watch(after=session.created.events[-1].seq)
    assert isinstance(next(messages), ViewMessage)
    replayed = [next(messages) for _ in moved.events]
    assert [m.event for m in replayed if isinstance(m, LifecycleMessage)] == moved.events


def test_a_watch_cut_mid_message_resumes_without_a_gap_or_a_repeat(navd_client: Client, navd_server: NavDaemon) -> None:
    proxy = TCPProxy(navd_server.port)
    session = navd_client.create_session()
    follower = Follower(watcher_of(proxy.url, session).watch())
    assert isinstance(follower.next(), ViewMessage)
    applied = session.navigate("list_news").events
    seen = follower.events_until_view(2)
    # The next change's first message is cut in its middle; two more changes come while no
    # connection is let through, then the watcher may come back.
    proxy.hold()
    proxy.cut_inside(b"event: lifecycle")
    applied += session.link("show", {"id": 5}).events
    assert proxy.cut_done.wait(10)
    applied += session.back().events
    applied += session.navigate("help").events
    proxy.release()
    version = session.view().version
    seen += follower.events_until_view(version)
    # And live again after it: what navd replays on the new connection is not yielded again.
    applied += session.navigate("^/top").events
    seen += follower.events_until_view(version + 1)
    assert [e.seq for e in seen] == [e.seq for e in applied]
    assert seen == applied
    assert proxy.accepted >= 2
    proxy.close()


def test_a_watch_resumes_across_a_restart_on_sqlite(tmp_path: Path) -> None:
    daemon = NavDaemon([EXAMPLES / "news.json"], store=f"sqlite:{tmp_path / 'navd.db'}")
    daemon.start()
    try:
        client = Client(daemon.url)
        session = client.create_session()
        follower = Follower(watcher_of(daemon.url, session).watch())
        assert isinstance(follower.next(), ViewMessage)
        applied = session.navigate("list_news").events
        seen = follower.events_until_view(2)
        daemon.stop()
        assert follower.queue.empty()  # `end: shutdown` is not passed on
        daemon.start()  # the same port
        applied += session.link("show", {"id": 2}).events
        seen += follower.events_until_view(3)
        assert seen == applied
        session.delete()
        assert follower.next() == EndMessage("deleted")
    finally:
        daemon.stop()


def test_a_resume_of_a_deleted_session_raises_unauthorized(navd_client: Client, navd_server: NavDaemon) -> None:
    proxy = TCPProxy(navd_server.port)
    session = navd_client.create_session()
    follower = Follower(watcher_of(proxy.url, session).watch())
    assert isinstance(follower.next(), ViewMessage)
    proxy.hold()
    proxy.cut()
    session.delete()
    proxy.release()
    with pytest.raises(NavProblem) as refused:
        follower.next()
    assert refused.value.code == "unauthorized"
    proxy.close()


def test_the_parser_reads_navds_messages_in_any_chunks() -> None:
    stream = (
        b"retry: 2000\r\n\r\nevent: view\ndata: {\"version\": 1}\n\n: ping\r"
        b"id: 7\revent: lifecycle\rdata: {\"seq\": 7}\r\r"
        b"data: a\ndata: b\n\n"
    )
    expected = [
        Retry(2000),
        ServerSentEvent("view", '{"version": 1}', None),
        Comment("ping"),
        ServerSentEvent("lifecycle", '{"seq": 7}', "7"),
        ServerSentEvent("message", "a\nb", "7"),
    ]
    for size in (1, 2, 3, 7, 64):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert list(parse(chunks)) == expected


def test_a_line_over_the_bound_is_an_error_not_a_buffer() -> None:
    parser = ServerSentEventParser(max_line=1024)
    with pytest.raises(StreamError):
        for _ in range(100):
            list(parser.feed(b"data: " + b"x" * 100))
    assert len(parser._buffer) == 0
    assert list(ServerSentEventParser(max_line=1024).feed(b"data: " + b"x" * 1000 + b"\n\n"))


def test_retry_is_honoured_and_last_event_id_sent(tmp_path: Path) -> None:
    """A stand-in server: the first connection asks `retry: 50` and drops after one event; the second ends."""
    import http.server
    import time

    view = '{"id":"s","graph":{"name":"g","version":1},"version":%d,"path":"/a","screens":[],"context":{},"actions":{"links":[],"exit":false,"back":0}}'
    event = '{"seq":%d,"type":"stateChanged","screen":"e1","scene":"a","transition":%d}'
    connections: list[tuple[float, str | None]] = []

    class Stream(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            connections.append((time.monotonic(), self.headers.get("Last-Event-ID")))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            if len(connections) == 1:
                body = f"retry: 50\n\nevent: view\ndata: {view % 1}\n\nid: 1\nevent: lifecycle\ndata: {event % (1, 2)}\n\nevent: view\ndata: {view % 2}\n\n"
            else:
                body = f"event: view\ndata: {view % 2}\n\nevent: end\ndata: {{\"reason\":\"deleted\"}}\n\n"
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with Client(f"http://127.0.0.1:{server.server_address[1]}") as client:
            session = client.session("s", "token")
            session.events = lambda **_: pytest.fail("nothing was missed: the log is not read")  # type: ignore[method-assign]
            messages = list(session.watch())
        kinds = [type(m).__name__ for m in messages]
        assert kinds == ["ViewMessage", "LifecycleMessage", "ViewMessage", "EndMessage"]
        assert [c[1] for c in connections] == [None, "1"]
        assert connections[1][0] - connections[0][0] < 1.0
    finally:
        server.shutdown()
