"""`Client`: the daemon-wide calls; `Session`: one session's intents, reads and stream."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence
from urllib.parse import quote

import httpx

from .errors import Confirmation, NavProblem
from .models import JSON, Change, EventPage, Event, HistoryPage, Record, View
from .transport import _NO_BODY, RetryPolicy, Transport, json_object

if TYPE_CHECKING:
    from .watch import Message

# `result` left out of `back`/`exit` (a result of `None` is JSON `null`, a value like any other).
MISSING: Any = _NO_BODY


class Client:
    """A navd daemon at `url`. `token` is sent where no session token applies: creating a session
    (the backend or admin token, when the daemon asks for one) and the admin routes."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.transport = Transport(self.url, timeout=timeout, retry=retry, http=http)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()

    def create_session(
        self,
        graph: str | None = None,
        start: str | None = None,
        context: Mapping[str, JSON] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> Session:
        """`POST /v1/sessions`: a new session, acted on with its own token (`Session.created` is the answer)."""
        body: dict[str, Any] = {}
        if graph is not None:
            body["graph"] = graph
        if start is not None:
            body["start"] = start
        if context is not None:
            body["context"] = dict(context)
        response = self.transport.request(
            "POST", "/v1/sessions", token=self.token, body=body, idempotency_key=idempotency_key
        )
        answer = json_object(response)
        created = Change.from_json(answer, replayed=_replayed(response))
        return Session(
            self,
            created.id,
            token=str(answer.get("token", "")),
            watch_token=str(answer.get("watchToken", "")) or None,
            created=created,
        )

    def session(self, id: str, token: str | None, watch_token: str | None = None) -> Session:
        """A session known by its id, acted on with `token` (its own, its watch token, or the admin token)."""
        return Session(self, id, token=token, watch_token=watch_token)

    def health(self) -> bool:
        """Whether `/healthz` answers 200."""
        try:
            return self.transport.http.get(self.url + "/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def graphs(self) -> list[dict[str, Any]]:
        """`GET /v1/graphs`: each loaded graph's name, newest version and start path."""
        answer = json_object(self.transport.request("GET", "/v1/graphs", token=self.token))
        return [g for g in answer.get("graphs", []) if isinstance(g, dict)]

    def graph(self, name: str, version: int | None = None) -> dict[str, Any]:
        """`GET /v1/graphs/{name}`: `{name, version, start, document, warnings}`."""
        return json_object(
            self.transport.request("GET", f"/v1/graphs/{_segment(name)}", token=self.token, params=_query(version=version))
        )

    def put_graph(self, name: str, document: Mapping[str, JSON] | str) -> dict[str, Any]:
        """`PUT /v1/graphs/{name}` (admin): a new version, from a JSON object or YAML text."""
        if isinstance(document, str):
            response = self.transport.request(
                "PUT", f"/v1/graphs/{_segment(name)}", token=self.token, content=document.encode(),
                content_type="application/yaml",
            )  # fmt: skip
        else:
            response = self.transport.request("PUT", f"/v1/graphs/{_segment(name)}", token=self.token, body=dict(document))
        return json_object(response)


class Session:
    """One session, acted on with `token`. Every change answers a `Change` (the view and its events)
    and takes `if_match=` (a version, or `"*"`) and `idempotency_key=` (made per call otherwise)."""

    def __init__(
        self,
        client: Client,
        id: str,
        *,
        token: str | None,
        watch_token: str | None = None,
        created: Change | None = None,
    ) -> None:
        self.client = client
        self.id = id
        self.token = token
        self.watch_token = watch_token
        self.created = created
        self._base = f"/v1/sessions/{_segment(id)}"

    # Intents

    def navigate(self, path: str, *, if_match: int | str | None = None, idempotency_key: str | None = None) -> Change:
        return self._change("POST", "/navigate", {"path": path}, if_match, idempotency_key)

    def link(
        self,
        name: str,
        params: Mapping[str, JSON] | None = None,
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        body: dict[str, Any] = {"name": name}
        if params is not None:
            body["params"] = dict(params)
        return self._change("POST", "/transitions", body, if_match, idempotency_key)

    def back(
        self,
        count: int | None = None,
        result: JSON = MISSING,
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        body: dict[str, Any] = {}
        if count is not None:
            body["count"] = count
        if result is not MISSING:
            body["result"] = result
        return self._change("POST", "/back", body, if_match, idempotency_key)

    def exit(
        self, result: JSON = MISSING, *, if_match: int | str | None = None, idempotency_key: str | None = None
    ) -> Change:
        body: dict[str, Any] = {} if result is MISSING else {"result": result}
        return self._change("POST", "/exit", body, if_match, idempotency_key)

    def params(
        self,
        screen: str,
        params: Mapping[str, JSON],
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        """Replaces the top screen's params."""
        return self._change("PUT", f"/screens/{_segment(screen)}/params", dict(params), if_match, idempotency_key)

    def state(
        self,
        screen: str,
        patch: Mapping[str, JSON],
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        """An RFC 7396 merge patch of a screen's state."""
        return self._change("PATCH", f"/screens/{_segment(screen)}/state", dict(patch), if_match, idempotency_key)

    def command(
        self,
        screen: str,
        name: str,
        args: Mapping[str, JSON] | None = None,
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        body: dict[str, Any] = {"name": name}
        if args is not None:
            body["args"] = dict(args)
        return self._change("POST", f"/screens/{_segment(screen)}/commands", body, if_match, idempotency_key)

    def context(
        self, patch: Mapping[str, JSON], *, if_match: int | str | None = None, idempotency_key: str | None = None
    ) -> Change:
        """An RFC 7396 merge patch of the context (resumes a `pending` navigation it satisfies)."""
        return self._change("PATCH", "/context", dict(patch), if_match, idempotency_key)

    def batch(
        self,
        intents: Sequence[Mapping[str, JSON]],
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        """Items in the batch-item form (`{"navigate": P}`, `{"link": N, "params": {}}`, …): all or nothing, one version."""
        return self._change("POST", "/intents", {"intents": [dict(i) for i in intents]}, if_match, idempotency_key)

    def confirm(
        self,
        confirmation: str | Confirmation | NavProblem,
        *,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
    ) -> Change:
        """Applies what a `confirmation_required` refusal asked to confirm (its problem, its confirmation or its token)."""
        if isinstance(confirmation, NavProblem):
            if confirmation.confirmation is None:
                raise ValueError(f"the problem {confirmation.code} asks no confirmation")
            confirmation = confirmation.confirmation
        token = confirmation.token if isinstance(confirmation, Confirmation) else confirmation
        return self._change("POST", "/confirm", {"token": token}, if_match, idempotency_key)

    def upgrade(
        self, version: int | None = None, *, if_match: int | str | None = None, idempotency_key: str | None = None
    ) -> Change:
        """Moves the session to the newest (or the given) version of its graph."""
        body = {} if version is None else {"version": version}
        return self._change("POST", "/upgrade", body, if_match, idempotency_key)

    # Reads

    def view(self, version: int | None = None) -> View:
        """The session now, or as the change to `version` answered it."""
        response = self.client.transport.request("GET", self._base, token=self._read_token, params=_query(version=version))
        return View.from_json(json_object(response))

    def events(self, after: int | None = None, limit: int | None = None, wait: int | None = None) -> EventPage:
        """A page of the retained events after `after` (a long poll of `wait` seconds when there is none)."""
        params = _query(after=after, limit=limit, wait=wait)
        answer = json_object(
            self.client.transport.request("GET", self._base + "/events", token=self._read_token, params=params)
        )
        events = [Event.from_json(e) for e in answer.get("events", []) if isinstance(e, dict)]
        next_seq = answer.get("next")
        return EventPage(events=events, next=next_seq if isinstance(next_seq, int) else 0)

    def history(self, after: int | None = None, limit: int | None = None) -> HistoryPage:
        """A page of the session's retained history records, oldest first."""
        params = _query(after=after, limit=limit)
        answer = json_object(
            self.client.transport.request("GET", self._base + "/history", token=self._read_token, params=params)
        )
        oldest = answer.get("oldest")
        next_version = answer.get("next")
        return HistoryPage(
            changes=[Record.from_json(r) for r in answer.get("changes", []) if isinstance(r, dict)],
            oldest=oldest if isinstance(oldest, int) else None,
            next=next_version if isinstance(next_version, int) else 0,
        )

    def history_all(self, after: int | None = None, limit: int | None = None) -> Iterator[Record]:
        """Every retained record after `after`, page by page (`limit` a page)."""
        position = after
        while True:
            page = self.history(after=position, limit=limit)
            if not page.changes:
                return
            yield from page.changes
            position = page.next

    def watch(self, after: int | None = None) -> Iterator[Message]:
        """Follows the session live (`navd_client.watch.Watch`): views, lifecycle events, the end."""
        from .watch import Watch

        return iter(Watch(self, after=after))

    def delete(self, *, if_match: int | str | None = None) -> None:
        """Ends the session. A delete retried after a lost answer that finds the session gone has done its work."""
        try:
            self.client.transport.request("DELETE", self._base, token=self.token, if_match=if_match)
        except NavProblem as problem:
            if problem.attempts > 1 and problem.status in (401, 404):
                return
            raise

    @property
    def _read_token(self) -> str | None:
        return self.token or self.watch_token

    def _change(
        self, method: str, route: str, body: Any, if_match: int | str | None, idempotency_key: str | None
    ) -> Change:
        response = self.client.transport.request(
            method, self._base + route, token=self.token, body=body, if_match=if_match, idempotency_key=idempotency_key
        )
        return Change.from_json(json_object(response), replayed=_replayed(response))


def _replayed(response: httpx.Response) -> bool:
    replayed: str = response.headers.get("idempotent-replayed", "")
    return replayed.lower() == "true"


def _query(**values: int | None) -> dict[str, str | int]:
    """The query parameters given, those left out (None) not sent."""
    return {name: value for name, value in values.items() if value is not None}


def _segment(text: str) -> str:
    return quote(text, safe="")
