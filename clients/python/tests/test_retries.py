"""The client's own retries, through a proxy that loses answers and refuses for a while."""

from __future__ import annotations

from typing import Iterator

import pytest

from navd_client import Client, NavDaemon, NavProblem, NavTransportError, RetryPolicy

from proxies import Fault, HTTPProxy


@pytest.fixture
def proxy(navd_server: NavDaemon) -> Iterator[HTTPProxy]:
    proxy = HTTPProxy(navd_server.url)
    yield proxy
    proxy.close()


def keys(proxy: HTTPProxy, suffix: str) -> list[str]:
    return [s.headers.get("idempotency-key", "") for s in proxy.seen if s.path.endswith(suffix)]


def test_a_lost_answer_is_retried_with_the_same_key_and_applied_once(proxy: HTTPProxy) -> None:
    with Client(proxy.url) as client:
        session = client.create_session()
        proxy.faults.append(Fault(lambda method, path: path.endswith("/navigate"), "drop-answer"))
        moved = session.navigate("list_news")
        sent = keys(proxy, "/navigate")
        assert len(sent) == 2 and sent[0] == sent[1] and sent[0]
        assert moved.replayed and moved.version == 2
        assert session.view().version == 2  # applied once
        # The next call makes a key of its own.
        session.navigate("help")
        assert keys(proxy, "/navigate")[2] != sent[0]


def test_a_create_whose_answer_was_lost_is_one_session(proxy: HTTPProxy, navd_admin: Client) -> None:
    proxy.faults.append(Fault(lambda method, path: path == "/v1/sessions", "drop-answer"))
    before = len(navd_admin.transport.request("GET", "/v1/sessions", token=navd_admin.token).json()["sessions"])
    with Client(proxy.url) as client:
        session = client.create_session(context={"user": "ann"})
    assert session.created is not None and session.created.replayed
    sessions = navd_admin.transport.request("GET", "/v1/sessions", token=navd_admin.token).json()["sessions"]
    assert len(sessions) == before + 1


@pytest.mark.parametrize("status", [503, 429])
def test_retry_after_is_waited_out_and_the_key_kept(proxy: HTTPProxy, status: int) -> None:
    with Client(proxy.url) as client:
        session = client.create_session()
        proxy.faults.append(Fault(lambda method, path: path.endswith("/back"), "status", times=2, status=status))
        session.navigate("list_news")
        assert session.back().path == "/top"
        sent = keys(proxy, "/back")
        assert len(sent) == 3 and len(set(sent)) == 1
        assert [s.status for s in proxy.seen if s.path.endswith("/back")] == [status, status, 200]


def test_no_retry_on_another_refusal_nor_without_retry_after(proxy: HTTPProxy) -> None:
    with Client(proxy.url) as client:
        session = client.create_session()
        with pytest.raises(NavProblem) as refused:
            session.exit()
        assert refused.value.code == "stack_underflow" and refused.value.attempts == 1
        proxy.faults.append(Fault(lambda method, path: path.endswith("/navigate"), "status", retry_after=None))
        with pytest.raises(NavProblem) as unavailable:
            session.navigate("help")
        assert unavailable.value.code == "shutting_down" and unavailable.value.retry_after is None
        assert len([s for s in proxy.seen if s.path.endswith(("/exit", "/navigate"))]) == 2


def test_attempts_are_bounded(proxy: HTTPProxy) -> None:
    with Client(proxy.url, retry=RetryPolicy(max_attempts=3, first_pause=0.01)) as client:
        session = client.create_session()
        proxy.faults.append(Fault(lambda method, path: path.endswith("/navigate"), "status", times=5))
        with pytest.raises(NavProblem) as refused:
            session.navigate("help")
        assert refused.value.attempts == 3 and refused.value.status == 503
    with Client("http://127.0.0.1:9", retry=RetryPolicy(max_attempts=2, first_pause=0.01)) as nowhere:
        with pytest.raises(NavTransportError) as failed:
            nowhere.create_session()
        assert failed.value.attempts == 2


def test_a_delete_retried_after_its_answer_was_lost_is_done(proxy: HTTPProxy) -> None:
    with Client(proxy.url) as client:
        session = client.create_session()
        proxy.faults.append(Fault(lambda method, path: method == "DELETE", "drop-answer"))
        session.delete()
        assert [s.status for s in proxy.seen if s.method == "DELETE"] == [204, 401]
