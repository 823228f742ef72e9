"""What a call raises: navd's refusals as `NavProblem`, and the failures that are not one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

# The codes of openapi.yaml's `KnownProblemCode`. A code navd answers that is not here is kept
# as the string it is: the set grows as navd does (docs/api.md, "Errors and codes").
KNOWN_CODES: frozenset[str] = frozenset(
    {
        "malformed_json", "invalid_request", "invalid_path", "unauthorized", "forbidden",
        "transition_refused", "session_not_found", "not_found", "method_not_allowed",
        "not_removable", "stack_underflow", "version_conflict", "payload_too_large",
        "unsupported_media_type", "unknown_scene", "unknown_transition", "unknown_graph",
        "invalid_params", "invalid_graph", "stack_too_deep", "idempotency_key_reused",
        "unknown_command", "command_refused", "confirmation_required", "upgrade_refused",
        "too_many_sessions", "store_unavailable", "malformed_request", "too_many_requests",
        "over_capacity", "shutting_down", "unsupported_transfer_coding", "graph_in_use",
        "cursor_expired", "version_expired", "internal",
    }
)  # fmt: skip


class NavError(Exception):
    """Every failure of a navd call."""


@dataclass(frozen=True)
class Confirmation:
    """What a `confirmation_required` refusal asks to confirm: `Session.confirm(problem)` applies it."""

    token: str
    screen: str
    intent: Any


@dataclass(frozen=True)
class Reason:
    """One reason an upgrade does not fit: a pointer into the stage and a message."""

    pointer: str
    message: str


class NavProblem(NavError):
    """navd refused: the RFC 9457 problem document, every member of it, and the answer's headers.

    `code` is a string, a known one or not (`known` says which). `version` is the session's
    version now when the answer carried an `ETag` (a 412 `version_conflict` does).
    """

    def __init__(
        self,
        body: Mapping[str, Any],
        *,
        status: int,
        headers: Mapping[str, str],
        attempts: int = 1,
    ) -> None:
        self.body: dict[str, Any] = dict(body)
        self.code: str = str(body.get("code", ""))
        self.status: int = status
        self.type: str = str(body.get("type", ""))
        self.title: str = str(body.get("title", ""))
        self.detail: str = str(body.get("detail", ""))
        self.offset: int | None = _optional_int(body.get("offset"))
        self.param: str | None = _optional_str(body.get("param"))
        self.pointer: str | None = _optional_str(body.get("pointer"))
        self.index: int | None = _optional_int(body.get("index"))
        issues = body.get("issues")
        self.issues: list[dict[str, Any]] | None = (
            [dict(issue) for issue in issues if isinstance(issue, dict)] if isinstance(issues, list) else None
        )
        confirmation = body.get("confirmation")
        self.confirmation: Confirmation | None = (
            Confirmation(
                token=str(confirmation.get("token", "")),
                screen=str(confirmation.get("screen", "")),
                intent=confirmation.get("intent"),
            )
            if isinstance(confirmation, dict)
            else None
        )
        reasons = body.get("reasons")
        self.reasons: list[Reason] | None = (
            [
                Reason(pointer=str(reason.get("pointer", "")), message=str(reason.get("message", "")))
                for reason in reasons
                if isinstance(reason, dict)
            ]
            if isinstance(reasons, list)
            else None
        )
        self.etag: str | None = headers.get("etag")
        self.version: int | None = _version_of(self.etag)
        self.retry_after: float | None = retry_after_seconds(headers.get("retry-after"))
        self.www_authenticate: str | None = headers.get("www-authenticate")
        self.request_id: str | None = headers.get("x-request-id")
        self.attempts: int = attempts
        super().__init__(f"{status} {self.code}: {self.detail}")

    @property
    def known(self) -> bool:
        """Whether `code` is one this client was written for (openapi.yaml's `KnownProblemCode`)."""
        return self.code in KNOWN_CODES


class UnexpectedResponse(NavError):
    """An answer that is no problem document and not what the call expects (libmicrohttpd's bare 414, say)."""

    def __init__(self, status: int, text: str) -> None:
        self.status = status
        self.text = text
        super().__init__(f"unexpected answer {status}: {text[:200]}")


class NavTransportError(NavError):
    """No answer came: the daemon could not be reached, or the connection broke, on every attempt."""

    def __init__(self, message: str, attempts: int) -> None:
        self.attempts = attempts
        super().__init__(f"{message} (after {attempts} attempt(s))")


class StreamError(NavError):
    """The event stream broke a rule: a line over the bound, or a message that is not JSON."""


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` in seconds (navd sends the delay form), or None."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _version_of(etag: str | None) -> int | None:
    if etag is None:
        return None
    text = etag.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and text[1:-1].isdigit():
        return int(text[1:-1])
    return None


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
