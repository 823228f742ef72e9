"""Every intent, read and refusal of a session, against a real navd (the plugin's `navd_server`)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Callable

import httpx
import pytest

from navd_client import KNOWN_CODES, Change, Client, NavDaemon, NavProblem, RetryPolicy, Session, UnexpectedResponse

REPOSITORY = Path(__file__).resolve().parents[3]


def refused(call: Callable[[], object]) -> NavProblem:
    with pytest.raises(NavProblem) as caught:
        call()
    return caught.value


def test_intents_answer_the_view_and_its_events(navd_client: Client) -> None:
    session = navd_client.create_session(context={"locale": "ja"})
    assert session.created is not None
    assert session.created.path == "/top"
    assert session.created.event_types[0] == "transitionStart"
    assert session.token and session.watch_token

    deep = session.navigate("list_news/show_news(id=44)")
    assert deep.path == "/top/list_news(category=0)/show_news(id=44)"
    assert deep.version == 2
    assert deep.top is not None and deep.top.scene == "show_news" and deep.top.params == {"id": 44}
    assert {e.transition for e in deep.events} == {2}
    assert deep.events[0].from_ == "/top" and deep.events[-1].to == deep.path

    back = session.back()
    assert back.path == "/top/list_news(category=0)"
    linked = session.link("show", {"id": 3})
    assert linked.path == "/top/list_news(category=0)/show_news(id=3)"
    assert session.back(2).path == "/top"

    # A picker's exit hands its result to the screen revealed: `result` before `transitionEnd`.
    session.navigate("list_news!pick_category")
    exited = session.exit({"category": 2})
    assert exited.event_types[-2:] == ["result", "transitionEnd"]
    assert exited.events[-2].value == {"category": 2} and exited.events[-2].from_ == "pick_category"
    session.navigate("!pick_category")
    backed = session.back(1, None)
    assert backed.events[-2].type == "result" and backed.events[-2].value is None

    # Params of the top screen, a state patch, the context.
    listed = session.navigate("^/top/list_news(category=1)")
    assert listed.top is not None
    params = session.params(listed.top.id, {"category": 5})
    assert params.path == "/top/list_news(category=5)" and params.event_types == ["paramsChanged"]
    state = session.state(listed.top.id, {"seen": [1, 2]})
    assert state.top is not None and state.top.state == {"seen": [1, 2]}
    assert state.event_types == ["stateChanged"]
    context = session.context({"user": "ann"})
    assert context.context == {"locale": "ja", "user": "ann"}
    assert context.events[0].type == "contextChanged" and context.events[0].keys == ["user"]

    # A batch: all or nothing, one version.
    batched = session.batch([{"navigate": "^/top"}, {"link": "news", "params": {"category": 2}}])
    assert batched.path == "/top/list_news(category=2)"
    assert {e.transition for e in batched.events} == {batched.version}

    view = session.view()
    assert view.version == batched.version and view.path == batched.path
    assert [link.name for link in view.actions.links][:1] == ["show"]
    assert session.view(version=2).path == deep.path
    page = session.events(after=0, limit=3)
    assert [e.seq for e in page.events] == [1, 2, 3] and page.next == 3
    assert session.events(after=page.next).events[0].seq == 4

    session.delete()
    assert refused(session.view).code == "unauthorized"


# A daemon of its own (one graph, so another set): the upload makes news version 2 for every later session.
@pytest.mark.navd_graph("../../../Examples/news.json")
def test_commands_confirmations_redirects_and_upgrades(navd_client: Client, navd_admin: Client) -> None:
    session = navd_client.create_session()
    redirected = session.navigate("^/top/settings")
    assert redirected.path == "/top!login" and redirected.pending == "/top/settings"
    resumed = session.context({"user": "ann"})
    assert resumed.path == "/top/settings" and resumed.pending is None

    form = session.navigate("^/top/edit_profile")
    assert form.top is not None
    typed = session.command(form.top.id, "type", {"text": "hello"})
    assert typed.event_types == ["stateChanged"] and typed.events[0].command == "type"
    asked = refused(session.back)
    assert asked.code == "confirmation_required" and asked.status == 409
    assert asked.confirmation is not None and asked.confirmation.screen == form.top.id
    assert asked.confirmation.intent == {"back": 1}
    confirmed = session.confirm(asked)
    assert confirmed.path == "/top" and confirmed.version == typed.version + 1
    assert refused(lambda: session.confirm(asked)).code == "version_conflict"

    # An upgrade that does not fit is refused with its reasons; one that fits is applied.
    session.navigate("list_news/show_news(id=1)")
    uploaded = navd_admin.put_graph("news", "name: news\nstart: /top\nscenes:\n  top: {}\n  list_news: {}\n")
    assert uploaded["version"] >= 2
    upgrade = refused(session.upgrade)
    assert upgrade.code == "upgrade_refused" and upgrade.reasons
    assert upgrade.reasons[0].pointer.startswith("/screens/")
    session.navigate("^/top")
    upgraded = session.upgrade()
    assert upgraded.graph.version == uploaded["version"] and upgraded.event_types == ["graphChanged"]
    assert upgraded.events[0].from_version == 1 and upgraded.events[0].to_version == uploaded["version"]


@pytest.mark.navd_session(graph="stopwatch")
def test_stopwatch_commands_and_their_refusals(navd_session: Session) -> None:
    assert navd_session.created is not None and navd_session.created.path == "/stopwatch"
    guard = refused(lambda: navd_session.command("e1", "reset"))
    assert guard.code == "command_refused" and guard.pointer == "/mode"
    navd_session.command("e1", "start")
    navd_session.command("e1", "tick", {"count": 3})
    stopped = navd_session.command("e1", "stop")
    assert stopped.top is not None and stopped.top.state == {"count": 3, "mode": "paused"}
    assert refused(lambda: navd_session.command("e1", "lap")).code == "unknown_command"
    assert refused(lambda: navd_session.command("e9", "start")).code == "not_found"


def test_every_refusal_is_a_typed_problem_and_changes_nothing(navd_server: object, navd_client: Client, navd_admin: Client) -> None:
    session = navd_client.create_session()

    bad_path = refused(lambda: session.navigate("list_news("))
    assert (bad_path.code, bad_path.status, bad_path.title != "") == ("invalid_path", 400, True)
    assert bad_path.offset is not None and bad_path.known
    batch = refused(lambda: session.batch([{"navigate": "^/top"}, {"navigate": "nosuch"}]))
    assert (batch.code, batch.index) == ("unknown_scene", 1)
    assert refused(session.exit).code == "stack_underflow"
    assert refused(lambda: session.link("nosuch")).code == "unknown_transition"
    params = refused(lambda: session.link("news", {"category": "x"}))
    assert (params.code, params.param) == ("invalid_params", "category")
    assert refused(lambda: session.navigate("^/top/home#profile")).code == "transition_refused"
    deep = "^/top/" + "/".join(["help"] * 40)
    assert refused(lambda: session.navigate(deep)).code == "stack_too_deep"
    stuck = navd_client.create_session()
    stuck.navigate("onboarding")
    assert refused(stuck.back).code == "not_removable"
    request = refused(lambda: session.back(0))
    assert (request.code, request.param) == ("invalid_request", "count")
    assert refused(lambda: navd_client.create_session(graph="shop")).code == "unknown_graph"

    # If-Match: a stale version is refused with the version now; the current one applies.
    version = session.view().version
    conflict = refused(lambda: session.navigate("^/top", if_match=version - 1))
    assert (conflict.code, conflict.status, conflict.version) == ("version_conflict", 412, version)
    assert conflict.etag == f'"{version}"'
    assert session.navigate("list_news", if_match=version).version == version + 1
    assert refused(lambda: session.delete(if_match=1)).code == "version_conflict"

    # Idempotency: the same key answers the first answer again; another body is refused.
    first = session.navigate("help", idempotency_key="k-1")
    again = session.navigate("help", idempotency_key="k-1")
    assert again.replayed and not first.replayed and again == first
    assert refused(lambda: session.navigate("^/top", idempotency_key="k-1")).code == "idempotency_key_reused"

    # Tokens: the watch token reads and never changes; none at all; an admin route without the admin token.
    watcher = navd_client.session(session.id, session.watch_token)
    assert watcher.view().version == first.version
    write = refused(lambda: watcher.navigate("^/top"))
    assert write.code == "unauthorized" and write.www_authenticate == 'Bearer error="invalid_token"'
    anonymous = refused(navd_client.session(session.id, None).view)
    assert (anonymous.code, anonymous.www_authenticate) == ("unauthorized", "Bearer")
    assert refused(lambda: navd_client.put_graph("news", {"name": "news"})).code == "unauthorized"
    with Client(navd_client.url, session.token) as stranger:
        assert refused(lambda: stranger.put_graph("news", {"name": "news"})).code == "forbidden"
    unknown = refused(navd_admin.session("0" * 32, navd_admin.token).view)
    assert unknown.code == "session_not_found"
    invalid = refused(lambda: navd_admin.put_graph("bad", "name: bad\nstart: /nowhere\nscenes: {a: {}}\n"))
    assert invalid.code == "invalid_graph" and invalid.issues

    # The body itself: not JSON, not JSON's media type, too large.
    transport = navd_client.transport
    base = f"/v1/sessions/{session.id}/navigate"
    malformed = refused(lambda: transport.request("POST", base, token=session.token, content=b"{"))
    assert malformed.code == "malformed_json"
    media = refused(lambda: transport.request("POST", base, token=session.token, content=b"x", content_type="text/plain"))
    assert media.code == "unsupported_media_type"
    large = refused(lambda: session.context({"x": "y" * 70_000}))
    assert large.code == "payload_too_large" and large.status == 413
    method = refused(lambda: transport.request("PATCH", base, token=session.token, body={}))
    assert method.code == "method_not_allowed"

    # What is no problem document: libmicrohttpd's bare 414 for a URL longer than it buffers.
    with pytest.raises(UnexpectedResponse) as bare:
        navd_client.session("a" * 60_000, session.token).view()
    assert bare.value.status == 414
    assert session.view().version == first.version


def test_unknown_codes_and_event_types_are_kept_as_strings() -> None:
    problem = NavProblem(
        {"type": "urn:navd:problem:too_sunny", "title": "t", "status": 418, "detail": "d", "code": "too_sunny"},
        status=418,
        headers=httpx.Headers({"ETag": '"7"', "Retry-After": "3"}),
    )
    assert (problem.code, problem.known, problem.version, problem.retry_after) == ("too_sunny", False, 7, 3.0)
    change = Change.from_json(
        {"id": "s", "graph": {"name": "g", "version": 1}, "version": 2, "path": "/a", "screens": [], "context": {},
         "actions": {"links": [], "exit": False, "back": 0}, "newMember": 1,
         "events": [{"seq": 1, "type": "teleported", "screen": None, "scene": None, "transition": 2, "extra": [1]}]}
    )  # fmt: skip
    assert change.event_types == ["teleported"] and change.events[0].raw["extra"] == [1]
    assert change.raw["newMember"] == 1


def test_the_known_codes_are_those_of_openapi_yaml() -> None:
    spec = (REPOSITORY / "Sources/NavAPI/Resources/openapi.yaml").read_text()
    block = spec.split("    KnownProblemCode:", 1)[1].split("enum:", 1)[1].split("\n\n", 1)[0]
    assert set(re.findall(r"- ([a-z_]+)", block)) == KNOWN_CODES


def test_history_pages_and_iterates(navd_client: Client) -> None:
    session = navd_client.create_session()
    for n in range(5):
        session.link("news", {"category": n}) if n == 0 else session.params(session.view().screens[-1].id, {"category": n})
    page = session.history(limit=2)
    assert [r.version for r in page.changes] == [1, 2] and page.next == 2 and page.oldest == 1
    assert page.changes[0].kind == "create" and page.changes[1].kind == "link"
    records = list(session.history_all(limit=2))
    assert [r.version for r in records] == [1, 2, 3, 4, 5, 6]
    assert records[-1].kind == "params" and records[-1].to is not None
    assert records[-1].to.path == "/top/list_news(category=4)"
    assert records[-1].events == ["paramsChanged"]
    assert list(session.history_all(after=6)) == []


def test_daemon_wide_bounds_are_refused_with_retry_after() -> None:
    examples = REPOSITORY / "Examples"
    with NavDaemon([examples / "news.json"], args=["--max-sessions", "1", "--max-watchers-per-session", "1"]) as daemon:
        with Client(daemon.url, retry=RetryPolicy(max_attempts=1)) as client:
            session = client.create_session()
            full = refused(client.create_session)
            assert (full.code, full.status) == ("too_many_sessions", 503) and full.retry_after is not None
            stream = session.watch()
            assert next(stream).view.version == 1  # type: ignore[union-attr]
            busy = refused(lambda: session.events(after=1000, wait=5))
            assert (busy.code, busy.status) == ("too_many_requests", 429) and busy.retry_after is not None
            stream.close()  # type: ignore[attr-defined]


def test_past_versions_and_a_stopping_daemon() -> None:
    with NavDaemon([REPOSITORY / "Examples" / "news.json"]) as daemon:
        admin = Client(daemon.url, daemon.admin_token)
        with Client(daemon.url, retry=RetryPolicy(max_attempts=1)) as client:
            session = client.create_session()
            session.navigate("list_news")
            above = refused(lambda: session.view(version=9))
            assert (above.code, above.param) == ("not_found", "version")
            admin.transport.request("POST", "/v1/feed/purge", token=admin.token, body={"session": session.id})
            assert refused(lambda: session.view(version=1)).code == "version_expired"
            # A long poll in progress when navd stops is answered, not dropped.
            answers: list[NavProblem] = []
            poll = threading.Thread(target=lambda: answers.append(refused(lambda: session.events(after=1000, wait=30))))
            poll.start()
            time.sleep(0.5)
            daemon.stop()
            poll.join(20)
            assert [(a.code, a.status) for a in answers] == [("shutting_down", 503)]
        admin.close()
