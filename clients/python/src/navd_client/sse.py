"""A `text/event-stream` parser (the WHATWG rules) with a bound on a line's length.

Lines end with CR, LF or CRLF, split anywhere between chunks; a line starting with `:` is a
comment (navd's `: ping`); `data` lines join with LF; a blank line dispatches the message; a
`retry` of digits only sets the reconnection delay; an `id` with a NUL is ignored. A line longer
than `max_line` bytes raises `StreamError` instead of growing a buffer without end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from .errors import StreamError

MAX_LINE = 1 << 20


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str
    id: str | None


@dataclass(frozen=True)
class Retry:
    """A `retry:` field: the reconnection delay in milliseconds."""

    milliseconds: int


@dataclass(frozen=True)
class Comment:
    text: str


class ServerSentEventParser:
    """Feed it bytes as they come; it yields messages, retries and comments as they complete."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._after_cr = False
        self._event = ""
        self._data: list[str] = []
        self._has_data = False
        self._id: str | None = None
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> Iterator[ServerSentEvent | Retry | Comment]:
        start = 0
        for position, byte in enumerate(chunk):
            if byte == 0x0A and self._after_cr:
                # The LF of a CRLF whose CR ended the line already.
                self._after_cr = False
                start = position + 1
                continue
            self._after_cr = False
            if byte in (0x0A, 0x0D):
                self._append(chunk[start:position])
                line = bytes(self._buffer)
                self._buffer.clear()
                self._after_cr = byte == 0x0D
                start = position + 1
                item = self._line(line.decode("utf-8", errors="replace"))
                if item is not None:
                    yield item
        self._append(chunk[start:])

    def _append(self, piece: bytes) -> None:
        if len(self._buffer) + len(piece) > self.max_line:
            self._buffer.clear()
            raise StreamError(f"an event stream line longer than {self.max_line} bytes")
        self._buffer += piece

    def _line(self, line: str) -> ServerSentEvent | Retry | Comment | None:
        if line == "":
            if not self._has_data:
                self._event = ""
                return None
            message = ServerSentEvent(event=self._event or "message", data="\n".join(self._data), id=self.last_event_id)
            self._event, self._data, self._has_data = "", [], False
            return message
        if line.startswith(":"):
            return Comment(line[1:].lstrip(" "))
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                return Retry(int(value))
        return None

    def reset(self) -> None:
        """Forgets a half-read message (after the connection broke)."""
        self._buffer.clear()
        self._after_cr = False
        self._event, self._data, self._has_data = "", [], False


def parse(chunks: Iterable[bytes], max_line: int = MAX_LINE) -> Iterator[ServerSentEvent | Retry | Comment]:
    """Every item of a whole stream, given in chunks."""
    parser = ServerSentEventParser(max_line)
    for chunk in chunks:
        yield from parser.feed(chunk)
