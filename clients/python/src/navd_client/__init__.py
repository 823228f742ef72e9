"""navd's Python client (`Client`, `Session`) and, in `navd_client.pytest_plugin`, its pytest plugin."""

from .client import MISSING, Client, Session
from .daemon import DaemonError, NavDaemon, find_binary
from .errors import (
    KNOWN_CODES,
    Confirmation,
    NavError,
    NavProblem,
    NavTransportError,
    Reason,
    StreamError,
    UnexpectedResponse,
)
from .models import (
    EVENT_TYPES,
    ActionLink,
    Actions,
    Change,
    Event,
    EventPage,
    GraphRef,
    HistoryPage,
    Record,
    Screen,
    Stage,
    Tabs,
    View,
)
from .transport import RetryPolicy
from .watch import EndMessage, LifecycleMessage, Message, ViewMessage, Watch

__all__ = [
    "KNOWN_CODES", "EVENT_TYPES", "MISSING", "ActionLink", "Actions", "Change", "Client", "Confirmation",
    "DaemonError", "EndMessage", "Event", "EventPage", "GraphRef", "HistoryPage", "LifecycleMessage",
    "Message", "NavDaemon", "NavError", "NavProblem", "NavTransportError", "Reason", "Record", "RetryPolicy",
    "Screen", "Session", "Stage", "StreamError", "Tabs", "UnexpectedResponse", "View", "ViewMessage", "Watch",
    "find_binary",
]  # fmt: skip
