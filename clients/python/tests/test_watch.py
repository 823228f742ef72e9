"""`Session.watch`: another client's changes followed live, across a cut and a daemon restart."""

from __future__ import annotations

import queue
import threading
import time
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
    Watch,
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


VIEW = '{"id":"s","graph":{"name":"g","version":1},"version":%d,"path":"/a","screens":[],"context":{},"actions":{"links":[],"exit":false,"back":0}}'
EVENT = '{"seq":%d,"type":"stateChanged","screen":"e1","scene":"a","transition":%d}'


class StandIn:
    """A stand-in event stream: connection N gets `bodies[N]`, then is held open `hold` seconds (0: closed)."""

    def __init__(self, bodies: list[str], hold: float = 0.0) -> None:
        import http.server

        self.connections: list[tuple[float, str | None]] = []
        stand_in = self

        class Stream(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                stand_in.connections.append((time.monotonic(), self.headers.get("Last-Event-ID")))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(bodies[min(len(stand_in.connections), len(bodies)) - 1].encode())
                self.wfile.flush()
                time.sleep(hold if len(stand_in.connections) == 1 else 0)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stream)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def session(self) -> Session:
        session = Client(f"http://127.0.0.1:{self.server.server_address[1]}").session("s", "token")
        session.events = lambda **_: pytest.fail("nothing was missed: the log is not read")  # type: ignore[method-assign]
        return session

    def close(self) -> None:
        self.server.shutdown()


def ended(version: int) -> str:
    return f"event: view\ndata: {VIEW % version}\n\nevent: end\ndata: {{\"reason\":\"deleted\"}}\n\n"


def test_retry_is_honoured_and_last_event_id_sent() -> None:
    first = f"retry: 50\n\nevent: view\ndata: {VIEW % 1}\n\nid: 1\nevent: lifecycle\ndata: {EVENT % (1, 2)}\n\nevent: view\ndata: {VIEW % 2}\n\n"
    stand_in = StandIn([first, ended(2)])
    try:
        messages = list(stand_in.session().watch())
        assert [type(m).__name__ for m in messages] == ["ViewMessage", "LifecycleMessage", "ViewMessage", "EndMessage"]
        assert [c[1] for c in stand_in.connections] == [None, "1"]
        assert stand_in.connections[1][0] - stand_in.connections[0][0] < 1.0
    finally:
        stand_in.close()


def test_a_silent_stream_is_replaced_after_the_idle_timeout() -> None:
    stand_in = StandIn([f"retry: 10\n\nevent: view\ndata: {VIEW % 1}\n\n", ended(1)], hold=5.0)
    try:
        started = time.monotonic()
        messages = list(Watch(stand_in.session(), idle_timeout=0.3))
        assert [type(m).__name__ for m in messages] == ["ViewMessage", "EndMessage"]  # the same view not twice
        assert len(stand_in.connections) == 2 and time.monotonic() - started < 3
    finally:
        stand_in.close()
