"""openapi.yaml's answers as typed dataclasses, read leniently.

A member this version does not know is kept in `raw`; an event type, a record's kind or a
problem code it does not know is kept as the string it is, never a decoding failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

# Free-form JSON (a context, a state, a result): whatever `json.loads` gives.
JSON = Any

# The event types of this version (openapi.yaml's `Event.type`); others arrive as strings too.
EVENT_TYPES: frozenset[str] = frozenset(
    {
        "transitionStart", "awake", "willAppear", "didAppear", "willDisappear", "didDisappear",
        "remove", "transitionEnd", "paramsChanged", "stateChanged", "contextChanged", "result",
        "graphChanged",
    }
)  # fmt: skip


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Tabs:
    """A tabs screen's tabs: the one on screen, and the stacks of those the user left."""

    selected: str
    saved: dict[str, list[Screen]]


@dataclass(frozen=True)
class Screen:
    """One instance of a scene on the stage."""

    id: str
    scene: str
    segue: str
    container: str
    params: dict[str, Any]
    deps: dict[str, Any]
    state: dict[str, Any]
    tabs: Tabs | None = None

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Screen:
        tabs_value = value.get("tabs")
        tabs = None
        if isinstance(tabs_value, dict):
            saved = {
                name: [cls.from_json(screen) for screen in _list(stack) if isinstance(screen, dict)]
                for name, stack in _object(tabs_value.get("saved")).items()
            }
            tabs = Tabs(selected=_str(tabs_value.get("selected")), saved=saved)
        return cls(
            id=_str(value.get("id")),
            scene=_str(value.get("scene")),
            segue=_str(value.get("segue")),
            container=_str(value.get("container")),
            params=_object(value.get("params")),
            deps=_object(value.get("deps")),
            state=_object(value.get("state")),
            tabs=tabs,
        )


@dataclass(frozen=True)
class ActionLink:
    """A link the top screen can take now, with its parameter names in template order."""

    name: str
    params: list[str]


@dataclass(frozen=True)
class Actions:
    """What the top screen can do now: links, whether `exit` applies, the largest `back` count."""

    links: list[ActionLink]
    exit: bool
    back: int

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Actions:
        links = [
            ActionLink(name=_str(link.get("name")), params=[_str(p) for p in _list(link.get("params"))])
            for link in _list(value.get("links"))
            if isinstance(link, dict)
        ]
        return cls(links=links, exit=value.get("exit") is True, back=_int(value.get("back")))


@dataclass(frozen=True)
class GraphRef:
    """The graph and graph version a session runs on."""

    name: str
    version: int

    @classmethod
    def from_json(cls, value: Any) -> GraphRef:
        members = _object(value)
        return cls(name=_str(members.get("name")), version=_int(members.get("version")))


@dataclass(frozen=True)
class Event:
    """One lifecycle event. `type` is a string: one of `EVENT_TYPES`, or a newer one kept as sent."""

    seq: int
    type: str
    screen: str | None
    scene: str | None
    transition: int
    from_: str | None = None
    to: str | None = None
    keys: list[str] | None = None
    command: str | None = None
    value: Any = None
    from_version: int | None = None
    to_version: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Event:
        keys = value.get("keys")
        return cls(
            seq=_int(value.get("seq")),
            type=_str(value.get("type")),
            screen=_opt_str(value.get("screen")),
            scene=_opt_str(value.get("scene")),
            transition=_int(value.get("transition")),
            from_=_opt_str(value.get("from")),
            to=_opt_str(value.get("to")),
            keys=[_str(key) for key in keys] if isinstance(keys, list) else None,
            command=_opt_str(value.get("command")),
            value=value.get("value"),
            from_version=_opt_int(value.get("fromVersion")),
            to_version=_opt_int(value.get("toVersion")),
            raw=dict(value),
        )


@dataclass(frozen=True, kw_only=True)
class View:
    """A session as clients see it (openapi.yaml's `SessionView`)."""

    id: str
    graph: GraphRef
    version: int
    path: str
    screens: list[Screen]
    context: dict[str, Any]
    actions: Actions
    pending: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def top(self) -> Screen | None:
        """The visible top screen."""
        return self.screens[-1] if self.screens else None

    @staticmethod
    def _members(value: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": _str(value.get("id")),
            "graph": GraphRef.from_json(value.get("graph")),
            "version": _int(value.get("version")),
            "path": _str(value.get("path")),
            "screens": [Screen.from_json(s) for s in _list(value.get("screens")) if isinstance(s, dict)],
            "context": _object(value.get("context")),
            "actions": Actions.from_json(_object(value.get("actions"))),
            "pending": _opt_str(value.get("pending")),
            "raw": dict(value),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> View:
        return cls(**cls._members(value))


@dataclass(frozen=True, kw_only=True)
class Change(View):
    """The answer to a change: the view after it and the events it emitted, in order (none for a no-op)."""

    events: list[Event] = field(default_factory=list)
    replayed: bool = field(default=False, compare=False)

    @property
    def event_types(self) -> list[str]:
        return [event.type for event in self.events]

    @classmethod
    def from_json(cls, value: Mapping[str, Any], replayed: bool = False) -> Change:
        events = [Event.from_json(e) for e in _list(value.get("events")) if isinstance(e, dict)]
        return cls(**cls._members(value), events=events, replayed=replayed)


@dataclass(frozen=True)
class EventPage:
    """A page of the retained event log; `next` goes back in as `after`."""

    events: list[Event]
    next: int


@dataclass(frozen=True)
class Stage:
    """A stage in a history record: its path and its visible top (both None on an end record's `to`)."""

    path: str | None
    screen: dict[str, Any] | None

    @classmethod
    def from_json(cls, value: Any) -> Stage | None:
        if not isinstance(value, dict):
            return None
        screen = value.get("screen")
        return cls(path=_opt_str(value.get("path")), screen=dict(screen) if isinstance(screen, dict) else None)


@dataclass(frozen=True)
class Record:
    """One applied change of a session, as the history and the feed give it (openapi.yaml's `FeedRecord`).

    `kind` is a string (a kind this version does not know is kept as sent); `events` are the
    change's event types in order.
    """

    id: str
    cursor: str
    form: str
    time: str
    session: str
    graph: GraphRef
    version: int
    kind: str
    intent: Any
    from_: Stage | None
    to: Stage | None
    added: list[str]
    removed: list[str]
    events: list[str]
    attributes: dict[str, Any]
    reason: str | None = None
    redirected: str | None = None
    resumed: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Record:
        return cls(
            id=_str(value.get("id")),
            cursor=_str(value.get("cursor")),
            form=_str(value.get("form")),
            time=_str(value.get("time")),
            session=_str(value.get("session")),
            graph=GraphRef.from_json(value.get("graph")),
            version=_int(value.get("version")),
            kind=_str(value.get("kind")),
            intent=value.get("intent"),
            from_=Stage.from_json(value.get("from")),
            to=Stage.from_json(value.get("to")),
            added=[_str(s) for s in _list(value.get("added"))],
            removed=[_str(s) for s in _list(value.get("removed"))],
            events=[_str(s) for s in _list(value.get("events"))],
            attributes=_object(value.get("attributes")),
            reason=_opt_str(value.get("reason")),
            redirected=_opt_str(value.get("redirected")),
            resumed=value.get("resumed") is True,
            raw=dict(value),
        )


@dataclass(frozen=True)
class HistoryPage:
    """A page of a session's history: records oldest first; `next` goes back in as `after`."""

    changes: list[Record]
    oldest: int | None
    next: int
