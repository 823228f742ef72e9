"""Following a session live: navd's event stream as typed messages, resumed across drops.

The stream (docs/design.md, "Event stream") sends the view on connecting, then each change's
lifecycle events (`id:` their `seq`) and the view after them, `: ping` comments, and `end` as its
last message. `Watch` opens it with the session's token in the `Authorization` header and:

- after a dropped connection, a silent one (nothing for `idle_timeout`, well above navd's 15 s
  heartbeat) or an `end` of `lagging` or `shutdown`, waits the daemon's `retry` and opens it
  again with `Last-Event-ID`, the last `seq` it yielded, so navd replays what came after;
  before any event was yielded it asks for every retained event and skips those of changes the
  view it yielded already showed. navd opens a resumed stream with the view as it is now and
  replays the missed events after it; the watcher reads those events from the log first
  (`GET …/events`) and yields them before that view, so events always come before the view
  they lead to;
- never yields an event twice (a `seq` at or below the last yielded is dropped), and yields a
  view only when its version is newer than the last view yielded;
- stops after yielding `end` with `deleted` or `expired` (or a reason it does not know);
- raises the refusal when reconnecting is refused (`unauthorized` once the session is gone),
  `NavTransportError` after `max_failures` failed connections in a row, and `StreamError` for a
  line over `max_line` bytes or a message that is not JSON.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Union

import httpx

from .errors import NavTransportError, StreamError, retry_after_seconds
from .models import Event, View
from .sse import MAX_LINE, Comment, Retry, ServerSentEvent, ServerSentEventParser
from .transport import refusal

if TYPE_CHECKING:
    from .client import Session


@dataclass(frozen=True)
class ViewMessage:
    """The session as it is: on connecting, and after each change's events."""

    view: View


@dataclass(frozen=True)
class LifecycleMessage:
    """One lifecycle event, in `seq` order, each once."""

    event: Event


@dataclass(frozen=True)
class EndMessage:
    """The stream's last message: `deleted`, `expired`, or a reason navd added since (kept as sent)."""

    reason: str


Message = Union[ViewMessage, LifecycleMessage, EndMessage]

# Ends after which navd may well serve the session again: the watcher reconnects.
RESUMABLE_ENDS = frozenset({"lagging", "shutdown"})


class _Dropped(Exception):
    """The connection ended without a final `end`; `delivered` says whether it brought anything."""

    def __init__(self, delivered: bool) -> None:
        self.delivered = delivered


class Watch:
    """An iterable over a session's stream (`Session.watch`); each iteration opens it afresh."""

    def __init__(
        self,
        session: Session,
        after: int | None = None,
        *,
        idle_timeout: float = 45.0,
        max_failures: int = 5,
        max_line: int = MAX_LINE,
    ) -> None:
        self.session = session
        self.after = after
        self.idle_timeout = idle_timeout
        self.max_failures = max_failures
        self.max_line = max_line
        self.last_seq: int | None = after
        self.last_version: int | None = None
        self.retry_seconds = 2.0
        self.connections = 0

    def __iter__(self) -> Iterator[Message]:
        failures = 0
        while True:
            try:
                yield from self._connection()
                return
            except _Dropped as dropped:
                failures = 0 if dropped.delivered else failures + 1
            except httpx.TransportError as error:
                failures += 1
                if failures >= self.max_failures:
                    raise NavTransportError(f"the event stream of session {self.session.id}: {error!r}", failures) from error
            if failures >= self.max_failures:
                raise NavTransportError(f"the event stream of session {self.session.id} kept closing", failures)
            time.sleep(self.retry_seconds)

    def _connection(self) -> Iterator[Message]:
        transport = self.session.client.transport
        headers = {"Accept": "text/event-stream"}
        token = self.session.watch_token or self.session.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        resuming = self.connections > 0
        skip_up_to_version: int | None = None
        if self.last_seq is not None:
            headers["Last-Event-ID"] = str(self.last_seq)
        elif resuming:
            # Nothing yielded yet but the view: every retained event, less those the view showed.
            headers["Last-Event-ID"] = "0"
            skip_up_to_version = self.last_version
        self.connections += 1
        timeout = httpx.Timeout(5.0, read=self.idle_timeout)
        url = f"{transport.url}/v1/sessions/{self.session.id}/events"
        parser = ServerSentEventParser(self.max_line)
        delivered = False
        with transport.http.stream("GET", url, headers=headers, timeout=timeout) as response:
            if response.status_code != 200:
                response.read()
                retry_after = retry_after_seconds(response.headers.get("retry-after"))
                if response.status_code in (429, 503) and retry_after is not None:
                    self.retry_seconds = max(self.retry_seconds, min(retry_after, 30.0))
                    raise httpx.TransportError(f"HTTP {response.status_code}, retry after {retry_after} s")
                raise refusal(response)
            for chunk in response.iter_raw():
                for item in parser.feed(chunk):
                    if isinstance(item, Retry):
                        self.retry_seconds = item.milliseconds / 1000
                    elif isinstance(item, ServerSentEvent):
                        delivered = True
                        message = self._message(item, skip_up_to_version)
                        if message is None:
                            continue
                        if resuming and isinstance(message, ViewMessage):
                            resuming = False
                            # navd sends the view as it is now first, then replays what was
                            # missed: the missed events are read first, so that they come before it.
                            yield from self._missed(message.view.version, skip_up_to_version)
                        if isinstance(message, EndMessage):
                            if message.reason in RESUMABLE_ENDS:
                                raise _Dropped(True)
                            yield message
                            return
                        yield message
                    elif isinstance(item, Comment):
                        delivered = True
        raise _Dropped(delivered)

    def _missed(self, version: int, skip_up_to_version: int | None) -> Iterator[Message]:
        """The retained events after the last one yielded, up to those of `version`, from the log's pages."""
        while True:
            page = self.session.events(after=self.last_seq or 0, limit=1000)
            fresh = [e for e in page.events if e.transition <= version]
            for event in fresh:
                if skip_up_to_version is None or event.transition > skip_up_to_version:
                    self.last_seq = event.seq
                    yield LifecycleMessage(event)
                else:
                    self.last_seq = max(self.last_seq or 0, event.seq)
            if len(fresh) < len(page.events) or not page.events:
                return

    def _message(self, item: ServerSentEvent, skip_up_to_version: int | None) -> Message | None:
        try:
            data: Any = json.loads(item.data)
        except ValueError:
            raise StreamError(f"an event stream message that is not JSON: {item.data[:200]!r}") from None
        if not isinstance(data, dict):
            raise StreamError(f"an event stream message that is not a JSON object: {item.data[:200]!r}")
        if item.event == "view":
            view = View.from_json(data)
            if self.last_version is not None and view.version <= self.last_version:
                return None
            self.last_version = view.version
            return ViewMessage(view)
        if item.event == "lifecycle":
            event = Event.from_json(data)
            if self.last_seq is not None and event.seq <= self.last_seq:
                return None
            if skip_up_to_version is not None and event.transition <= skip_up_to_version:
                return None
            self.last_seq = event.seq
            return LifecycleMessage(event)
        if item.event == "end":
            return EndMessage(str(data.get("reason", "")))
        return None  # a message type this version does not know
