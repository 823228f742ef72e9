"""Running a tours document (`navd tours`, `navd record`: format `navd-tours/1`) against a daemon.

Each tour creates a session (`POST /v1/sessions` with the document's graph, the start's
`request` path when it has one, and its context), applies each step's intent on its own route,
compares the canonical path and the event types with the expected ones, and deletes the
session. The first difference, or a refusal, fails the tour naming the tour and step (from 1;
step 0 is the creation), the intent, what was expected and what came.

Before the first tour the daemon's graph is compared with the document's by fingerprint (FNV-1a
of the document's compact JSON, keys sorted, as `navd tours` writes it). Another graph is a
warning, and the tours run anyway: a test suite is there to say which step a changed graph
breaks, so the first step that answers differently fails its tour, named, with the warning
beside it. (`navd replay` refuses a planned document on another graph before running it.)
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .client import MISSING, Client, Session
from .errors import NavProblem
from .models import Change

FORMAT = "navd-tours/1"


class ToursError(Exception):
    """The file is not a tours document."""


class TourFailure(AssertionError):
    """A tour's step answered otherwise than the document expects."""


@dataclass(frozen=True)
class ToursDocument:
    graph: str
    fingerprint: str
    cover: str
    context: dict[str, Any]
    tours: list[dict[str, Any]]

    @property
    def recorded(self) -> bool:
        return self.cover == "recorded"


def load(path: str | Path) -> ToursDocument:
    """Reads a tours document; `ToursError` names what does not fit the format."""
    try:
        value = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ToursError(f"{path}: cannot read a tours document: {error}") from error
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise ToursError(f'{path}: not a tours document: "format" must be "{FORMAT}"')
    graph = value.get("graph")
    if not isinstance(graph, dict) or not isinstance(graph.get("name"), str):
        raise ToursError(f'{path}: not a tours document: "graph" must be {{"name", "fingerprint"}}')
    context = value.get("context", {})
    tours = value.get("tours")
    if not isinstance(context, dict) or not isinstance(tours, list) or not all(isinstance(t, dict) for t in tours):
        raise ToursError(f'{path}: not a tours document: "context" must be an object and "tours" an array of tours')
    return ToursDocument(
        graph=graph["name"],
        fingerprint=str(graph.get("fingerprint", "")),
        cover=str(value.get("cover", "")),
        context=context,
        tours=tours,
    )


def fingerprint(document: Any) -> str:
    """The graph fingerprint `navd tours` writes: FNV-1a (64 bits) of the compact JSON, keys sorted."""
    digest = 0xCBF29CE484222325
    for byte in _compact(document).encode():
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{digest:016x}"


def _compact(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "null"
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_string(k) + ":" + _compact(value[k]) for k in sorted(value)) + "}"
    raise TypeError(f"not JSON: {value!r}")


def _string(text: str) -> str:
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def check_graph(client: Client, document: ToursDocument, version: int | None = None) -> str | None:
    """None when the daemon serves the document's graph; else a warning saying which it serves."""
    served = client.graph(document.graph, version)
    found = fingerprint(served.get("document"))
    if found == document.fingerprint:
        return None
    message = (
        f"the daemon serves graph '{document.graph}' version {served.get('version')} ({found}), "
        f"not the graph these tours were computed from ({document.fingerprint})"
    )
    return message + ": replaying anyway"


def run_tour(client: Client, document: ToursDocument, index: int) -> None:
    """Runs tour `index` (from 0); raises `TourFailure` at the first difference."""
    tour = document.tours[index]
    number = index + 1
    start = tour.get("start") if isinstance(tour.get("start"), dict) else {}
    assert isinstance(start, dict)
    context = start.get("context", document.context)
    request = start.get("request")
    try:
        session = client.create_session(
            graph=document.graph, start=request if isinstance(request, str) else None,
            context=context if isinstance(context, dict) else {},
        )  # fmt: skip
    except NavProblem as problem:
        _compare(number, 0, "new session", start, None, problem)
    else:
        assert session.created is not None
        _compare(number, 0, "new session", start, session.created, None)
        try:
            for step_index, step in enumerate(tour.get("steps", [])):
                intent = step.get("intent") if isinstance(step, dict) else None
                shown = json.dumps(intent, separators=(",", ":"), sort_keys=True)
                if _missing_upgrade(client, document.graph, intent):
                    # A recorded upgrade to a graph version this daemon never loaded (a fresh one
                    # numbers its versions from 1): skipped with a warning, as `navd replay` does.
                    warnings.warn(f"tour {number}, step {step_index + 1} ({shown}): that graph version is not loaded here; skipped")
                    continue
                try:
                    answer, refused = apply(session, intent), None
                except NavProblem as problem:
                    answer, refused = None, problem
                except (KeyError, TypeError, AttributeError) as error:
                    raise ToursError(f"tour {number}, step {step_index + 1}: an intent of no known form: {shown} ({error!r})") from None
                _compare(number, step_index + 1, shown, step, answer, refused)
        finally:
            try:
                session.delete()
            except NavProblem:
                pass


def _missing_upgrade(client: Client, graph: str, intent: Any) -> bool:
    """Whether `intent` is an upgrade to a version of `graph` the daemon does not have."""
    if not isinstance(intent, dict) or not isinstance(intent.get("upgrade"), dict):
        return False
    version = intent["upgrade"].get("version")
    if not isinstance(version, int):
        return False
    try:
        client.graph(graph, version)
    except NavProblem as problem:
        return problem.status == 404
    return False


def _compare(
    tour: int, step: int, intent: str, expected: Mapping[str, Any], answer: Change | None, problem: NavProblem | None
) -> None:
    path = str(expected.get("path", ""))
    events = [str(e) for e in expected.get("events", [])]
    place = f"tour {tour}, start ({intent})" if step == 0 else f"tour {tour}, step {step} ({intent})"
    wanted = f"path {path}, events {events}"
    if problem is not None:
        raise TourFailure(f"{place}: expected {wanted}; got refused: {problem.code}: {problem.detail}")
    assert answer is not None
    if answer.path != path or answer.event_types != events:
        raise TourFailure(f"{place}: expected {wanted}; got path {answer.path}, events {answer.event_types}")


def apply(session: Session, intent: Any) -> Change:
    """Sends one step's intent: a batch item, `{"intents": [...]}`, `{"confirm": ...}` or `{"upgrade": {...}}`."""
    if not isinstance(intent, dict):
        raise ToursError(f"an intent must be an object: {intent!r}")
    if "confirm" in intent:
        try:
            apply(session, intent["confirm"])
        except NavProblem as problem:
            if problem.code != "confirmation_required" or problem.confirmation is None:
                raise
            return session.confirm(problem.confirmation)
        raise TourFailure(f"expected a confirmation_required refusal of {json.dumps(intent['confirm'])}, got an answer")
    if "intents" in intent:
        return session.batch(list(intent["intents"]))
    if "upgrade" in intent:
        upgrade = intent["upgrade"] if isinstance(intent["upgrade"], dict) else {}
        return session.upgrade(upgrade.get("version"))
    return apply_item(session, intent)


def apply_item(session: Session, item: Mapping[str, Any]) -> Change:
    """One batch item, sent to its own route."""
    if "navigate" in item:
        return session.navigate(item["navigate"])
    if "link" in item:
        return session.link(item["link"], item.get("params"))
    if "back" in item:
        return session.back(item["back"], item["result"] if "result" in item else MISSING)
    if "exit" in item:
        exit_body = item["exit"] if isinstance(item["exit"], dict) else {}
        return session.exit(exit_body["result"] if "result" in exit_body else MISSING)
    if "params" in item:
        return session.params(item["params"]["screen"], item["params"]["params"])
    if "state" in item:
        return session.state(item["state"]["screen"], item["state"]["patch"])
    if "command" in item:
        command = item["command"]
        return session.command(command["screen"], command["name"], command.get("args"))
    if "context" in item:
        return session.context(item["context"])
    raise ToursError(f"an intent of no known form: {json.dumps(item)}")
