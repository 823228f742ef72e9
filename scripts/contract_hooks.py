"""schemathesis hooks for scripts/contract-test.sh (loaded through SCHEMATHESIS_HOOKS).

The event route's and the feed's other forms are for the Swift tests, not for a fuzzer with a
time budget: a long poll may rightly wait up to 60 s, and a stream never ends on its own. So
every request to them asks for the JSON page (`Accept: application/json`) and waits at most 1 s.

A request whose request line and headers do not fit the HTTP layer's 16 KiB connection buffer
never reaches navd: libmicrohttpd answers it with a bare 414 or 431
(docs/design.md, "Errors and codes"; HTTPServerTests and the request fuzzer cover those). So
the generated query values, path parameters and headers are kept short enough to reach navd,
whose answers are the contract: lists of at most two values, strings of at most 512 characters."""
import urllib.parse

import schemathesis

# Encoded query, path parameters and headers together: well under the 16 KiB buffer.
MAX_BYTES = 4096


def _shorten(value):
    if isinstance(value, list):
        return [_shorten(item) for item in value[:2]]
    if isinstance(value, dict):
        return {key[:64]: _shorten(item) for key, item in list(value.items())[:8]}
    if isinstance(value, str):
        return value[:512]
    return value


def _size(case):
    query = urllib.parse.urlencode(case.query or {}, doseq=True)
    path = urllib.parse.urlencode(case.path_parameters or {}, doseq=True)
    headers = sum(len(str(key)) + len(str(value)) for key, value in (case.headers or {}).items())
    return len(query) + len(path) + headers


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if _size(case) > MAX_BYTES:
        for part in ("query", "path_parameters", "headers"):
            value = getattr(case, part, None)
            if value:
                setattr(case, part, {key: _shorten(item) for key, item in value.items()})
    if not (case.path.endswith("/events") or case.path == "/v1/feed"):
        return
    if case.headers is None:
        case.headers = {}
    case.headers["Accept"] = "application/json"
    wait = (case.query or {}).get("wait")
    if isinstance(wait, int) and wait > 1:
        case.query["wait"] = 1
