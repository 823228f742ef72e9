"""The pytest plugin, run as users run it: pytest in a subprocess (`pytester`) on a test folder of its own."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from navd_client import Client, NavDaemon, find_binary

EXAMPLES = Path(__file__).resolve().parents[3] / "Examples"
NEWS = str(EXAMPLES / "news.json")
STOPWATCH = str(EXAMPLES / "stopwatch.json")


def planned_tours(tmp_path: Path, graph: str = NEWS) -> Path:
    target = tmp_path / "tours.json"
    subprocess.run([find_binary(), "tours", graph, "--output", str(target)], check=True, capture_output=True)
    return target


def changed_news(tmp_path: Path) -> Path:
    """news.json with its `coupons` link shown as a modal of its own rather than in a navigation container."""
    graph = json.loads(Path(NEWS).read_text())
    graph["scenes"]["top"]["links"]["coupons"]["path"] = "!list_coupon"
    changed = tmp_path / "news.json"
    changed.write_text(json.dumps(graph))
    return changed


def test_the_fixtures_give_a_daemon_a_client_and_a_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        def test_one(navd_server, navd_session):
            assert navd_server.url.startswith("http://127.0.0.1:") and navd_server.port > 0
            assert len(navd_server.admin_token) >= 16
            assert navd_session.created.graph.name == "news"
            assert navd_server.graph_names == ["news", "stopwatch"]

        @pytest.mark.parametrize("navd_session", ["stopwatch", {"graph": "news", "start": "/top/help"}], indirect=True)
        def test_param(navd_session):
            assert navd_session.created.path in ("/stopwatch", "/top/help")

        @pytest.mark.navd_session(graph="stopwatch", context={"user": "ann"})
        def test_marker(navd_session, navd_admin):
            assert navd_session.created.path == "/stopwatch"
            assert navd_session.view().context == {"user": "ann"}
            assert navd_admin.graph("stopwatch")["version"] == 1
        """
    )
    result = pytester.runpytest_subprocess("--navd-graph", NEWS, "--navd-graph", STOPWATCH)
    result.assert_outcomes(passed=4)


def test_a_failing_test_shows_the_daemons_log(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\nnavd_graphs = {NEWS}\n")
    pytester.makepyfile(
        """
        def test_fails(navd_session):
            navd_session.navigate("list_news")
            assert navd_session.view().path == "/elsewhere"

        def test_passes(navd_session):
            navd_session.navigate("help")
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*- navd log -*", '*"msg":"request"*"route":"/v1/sessions/{id}/navigate"*'])
    assert result.stdout.str().count("navd log") == 1


@pytest.mark.parametrize(
    "arguments, environment, said",
    [
        (["--navd-graph", "BAD"], {}, "*navd exited with status 1 while starting: navd cannot start:*bad.json: the graph has 1 error(s)"),
        (["--navd-graph", NEWS], {"NAVD_BINARY": "/nonexistent/navd"}, "*NAVD_BINARY=/nonexistent/navd is not an executable file*"),
        (["--navd-graph", NEWS], {"NAVD_BINARY": "", "PATH": "/nonexistent"}, "*no navd binary: set NAVD_BINARY*"),
        (["--navd-graph", NEWS, "--navd-port", "PORT"], {}, "*navd cannot start:*Address already in use*"),
    ],
    ids=["bad graph", "missing binary", "no binary on PATH", "port in use"],
)
def test_a_daemon_that_cannot_start_fails_fast_with_its_own_words(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, arguments: list[str], environment: dict[str, str], said: str
) -> None:
    bad = pytester.path / "bad.json"
    bad.write_text('{"name": "bad", "start": "/nowhere", "scenes": {"a": {}}}')
    taken = socket.create_server(("127.0.0.1", 0))
    arguments = [str(bad) if a == "BAD" else str(taken.getsockname()[1]) if a == "PORT" else a for a in arguments]
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile("def test_one(navd_session): pass\ndef test_two(navd_server): pass\n")
    started = time.monotonic()
    result = pytester.runpytest_subprocess(*arguments)
    taken.close()
    assert time.monotonic() - started < 20
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_one*", said, "*ERROR at setup of test_two*", said])
    assert "During handling" not in result.stdout.str()


def test_tours_pass_on_their_own_graph(pytester: pytest.Pytester, tmp_path: Path) -> None:
    tours = planned_tours(tmp_path)
    result = pytester.runpytest_subprocess("--navd-tours", str(tours), "--navd-graph", NEWS, "-v")
    count = len(json.loads(tours.read_text())["tours"])
    result.assert_outcomes(passed=count)
    result.stdout.fnmatch_lines(["*tours.json::tour 1 from /top PASSED*"])


def test_planned_tours_fail_on_a_changed_graph_naming_the_step(pytester: pytest.Pytester, tmp_path: Path) -> None:
    tours = planned_tours(tmp_path)
    result = pytester.runpytest_subprocess("--navd-tours", str(tours), "--navd-graph", str(changed_news(tmp_path)))
    assert result.ret == 1
    # The tour through the changed link fails at that step; the fingerprint says why it may have.
    result.stdout.fnmatch_lines(
        [
            "*tour *, step * (*coupons*): expected path *list_coupon*; got path *list_coupon*"
            "(note: the daemon serves graph 'news' version 1 (fnv1a64:*), not the graph these tours were computed from*"
        ]
    )


def test_a_changed_expectation_fails_naming_the_step(pytester: pytest.Pytester, tmp_path: Path) -> None:
    tours = planned_tours(tmp_path)
    document = json.loads(tours.read_text())
    step = document["tours"][0]["steps"][1]
    step["events"] = step["events"][:-1]
    document["tours"][1]["steps"][0]["intent"] = {"params": {"screen": "e1"}}
    tours.write_text(json.dumps(document))
    result = pytester.runpytest_subprocess("--navd-tours", str(tours), "--navd-graph", NEWS)
    result.stdout.fnmatch_lines(
        [f"*tours.json: tour 1, step 2 ({json.dumps(step['intent'], separators=(',', ':'), sort_keys=True)}): expected path {step['path']}*got path {step['path']}*"]
    )
    result.stdout.fnmatch_lines(["*tours.json: tour 2, step 1: an intent of no known form: {\"params\":{\"screen\":\"e1\"}} (KeyError('params'))"])
    result.assert_outcomes(failed=2, passed=len(document["tours"]) - 2)


def recorded_tours(url: str, tmp_path: Path) -> Path:
    """A recorded document of every intent form, its expectations taken from a session driven by the client."""
    client = Client(url)
    context = {"locale": "ja"}
    session = client.create_session(start="/top/list_news(category=1)", context=context)
    assert session.created is not None
    intents = [
        {"navigate": "^/top"},
        {"link": "coupons", "params": {}},
        {"back": 1},
        {"navigate": "list_news!pick_category"},
        {"exit": {"result": {"category": 3}}},
        {"navigate": "!pick_category"},
        {"back": 1, "result": None},
        {"params": {"screen": "SCREEN", "params": {"category": 4}}},
        {"state": {"screen": "SCREEN", "patch": {"seen": [1]}}},
        {"context": {"user": "ann"}},
        {"intents": [{"navigate": "^/top"}, {"link": "news", "params": {"category": 2}}]},
        {"navigate": "^/top/edit_profile"},
        {"command": {"screen": "SCREEN", "name": "type", "args": {"text": "hi"}}},
        {"confirm": {"back": 1}},
        {"upgrade": {}},
    ]
    from navd_client.tours import apply

    steps = []
    for intent in intents:
        text = json.dumps(intent)
        view = session.view()
        text = text.replace("SCREEN", view.screens[-1].id)
        concrete = json.loads(text)
        answer = apply(session, concrete)
        steps.append({"intent": concrete, "path": answer.path, "events": answer.event_types})
    document = {
        "format": "navd-tours/1",
        "cover": "recorded",
        "recorded": {"session": session.id, "graph": {"name": "news", "version": 1}, "to": session.view().version},
        "graph": {"name": "news", "fingerprint": "fnv1a64:" + "0" * 16},
        "context": {},
        "tours": [
            {
                "start": {"request": "/top/list_news(category=1)", "context": context, "path": session.created.path,
                          "events": session.created.event_types},
                "steps": steps,
            }
        ],
    }  # fmt: skip
    from navd_client.tours import fingerprint

    document["graph"]["fingerprint"] = fingerprint(client.graph("news")["document"])  # type: ignore[index]
    target = tmp_path / "recorded.json"
    target.write_text(json.dumps(document))
    return target


def test_recorded_tours_run_every_intent_form_and_warn_on_another_graph(pytester: pytest.Pytester, tmp_path: Path) -> None:
    with NavDaemon([NEWS]) as daemon:
        tours = recorded_tours(daemon.url, tmp_path)
        again = pytester.runpytest_subprocess("--navd-tours", str(tours), "--navd-url", daemon.url)
    again.assert_outcomes(passed=1)
    changed = pytester.runpytest_subprocess("--navd-tours", str(tours), "--navd-graph", str(changed_news(tmp_path)))
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*recorded.json: tour 1, step 2 ({\"link\":\"coupons\",\"params\":{}}): expected path /top!/list_coupon, *; got path /top!list_coupon, *",
            "*not the graph these tours were computed from*: replaying anyway*",
        ]
    )


def test_a_recorded_upgrade_to_a_version_not_loaded_is_skipped(pytester: pytest.Pytester, tmp_path: Path) -> None:
    # A fresh daemon numbers its graph versions from 1: the recorded session's version 7 is not
    # there, so the step is skipped with a warning, as `navd replay` skips it.
    with NavDaemon([NEWS]) as daemon:
        tours = recorded_tours(daemon.url, tmp_path)
        document = json.loads(tours.read_text())
        steps = document["tours"][0]["steps"]
        steps.append({"intent": {"upgrade": {"version": 7}}, "path": steps[-1]["path"], "events": ["graphChanged"]})
        tours.write_text(json.dumps(document))
        result = pytester.runpytest_subprocess("--navd-tours", str(tours), "--navd-url", daemon.url, "-W", "default")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*step * ({\"upgrade\":{\"version\":7}}): that graph version is not loaded here; skipped*"])


def test_the_fingerprint_is_the_one_navd_tours_writes() -> None:
    from navd_client.tours import fingerprint

    for graph in (NEWS, STOPWATCH, str(EXAMPLES / "kabukit.json")):
        written = subprocess.run([find_binary(), "tours", graph], check=True, capture_output=True).stdout
        assert fingerprint(json.loads(Path(graph).read_text())) == json.loads(written)["graph"]["fingerprint"]


def test_a_file_that_is_no_tours_document_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "graph.json").write_text(Path(NEWS).read_text())
    result = pytester.runpytest_subprocess("--navd-tours", "graph.json", "--navd-tours", "missing.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(['*--navd-tours: *graph.json: not a tours document: "format" must be "navd-tours/1"'])
