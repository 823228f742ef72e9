"""One request to navd, with the rules every navd client follows (clients/swift/README.md).

- A POST, PUT or PATCH carries an `Idempotency-Key`, made once per call and sent again on each
  of this client's own retries, so a change whose answer was lost is applied once.
- A retry happens only where it is safe and useful: no answer at all (the connection failed or
  broke), or 429/503 with `Retry-After`. Never on another status: a 4xx is the request's fault and
  a retry would be refused the same way. Attempts are bounded, with a growing pause between them
  (`Retry-After` when navd says how long, up to `max_retry_wait`).
- A refusal becomes `NavProblem`; an answer that is no problem document `UnexpectedResponse`.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Mapping

import httpx

from .errors import NavProblem, NavTransportError, UnexpectedResponse, retry_after_seconds

_NO_BODY: Any = object()


@dataclass(frozen=True)
class RetryPolicy:
    """How often, and after how long, a request is tried again."""

    max_attempts: int = 4
    first_pause: float = 0.1
    max_pause: float = 2.0
    max_retry_wait: float = 10.0

    def pause(self, attempt: int, retry_after: float | None) -> float:
        backoff: float = min(self.max_pause, self.first_pause * 2.0 ** (attempt - 1))
        return max(backoff, retry_after) if retry_after is not None else backoff


def if_match_value(if_match: int | str | None) -> str | None:
    """A version becomes the entity tag `"N"`; a string (`*`, a list of tags) is sent as it is."""
    if if_match is None:
        return None
    if isinstance(if_match, int):
        return f'"{if_match}"'
    return if_match


class Transport:
    """Requests to one daemon over one `httpx.Client`."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.http = http or httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)))

    def close(self) -> None:
        self.http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None,
        body: Any = _NO_BODY,
        params: Mapping[str, str | int] | None = None,
        if_match: int | str | None = None,
        idempotency_key: str | None = None,
        content: bytes | None = None,
        content_type: str = "application/json",
    ) -> httpx.Response:
        """Sends the request (again on a failure worth retrying) and answers its 2xx response.

        Raises `NavProblem` for a refusal, `UnexpectedResponse` for another answer, and
        `NavTransportError` when no answer came on any attempt.
        """
        headers: dict[str, str] = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        tag = if_match_value(if_match)
        if tag is not None:
            headers["If-Match"] = tag
        if method in ("POST", "PUT", "PATCH"):
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        if content is None and body is not _NO_BODY:
            content = json.dumps(body, separators=(",", ":")).encode()
        if content is not None:
            headers["Content-Type"] = content_type
        query = {name: str(value) for name, value in (params or {}).items()}
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.http.request(method, self.url + path, headers=headers, content=content, params=query)
            except httpx.TransportError as error:
                if attempt >= self.retry.max_attempts:
                    raise NavTransportError(f"{method} {path}: {error!r}", attempt) from error
                time.sleep(self.retry.pause(attempt, None))
                continue
            if 200 <= response.status_code < 300:
                return response
            retry_after = retry_after_seconds(response.headers.get("retry-after"))
            if (
                response.status_code in (429, 503)
                and retry_after is not None
                and retry_after <= self.retry.max_retry_wait
                and attempt < self.retry.max_attempts
            ):
                time.sleep(self.retry.pause(attempt, retry_after))
                continue
            raise refusal(response, attempt)


def refusal(response: httpx.Response, attempts: int = 1) -> Exception:
    """The error an answer that is not a success stands for."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return NavProblem(body, status=response.status_code, headers=response.headers, attempts=attempts)
    return UnexpectedResponse(response.status_code, response.text)


def json_object(response: httpx.Response) -> dict[str, Any]:
    """The answer's body, which must be a JSON object."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        raise UnexpectedResponse(response.status_code, response.text) from None
    if not isinstance(body, dict):
        raise UnexpectedResponse(response.status_code, response.text)
    return body
