"""schemathesis hooks for scripts/contract-test.sh (loaded through SCHEMATHESIS_HOOKS).

The event route's other forms are for the Swift tests, not for a fuzzer with a time budget:
a long poll may rightly wait up to 60 s, and an event stream never ends on its own. So every
request to it asks for the JSON page (`Accept: application/json`) and waits at most 1 s."""
import schemathesis


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if not case.path.endswith("/events"):
        return
    if case.headers is None:
        case.headers = {}
    case.headers["Accept"] = "application/json"
    wait = (case.query or {}).get("wait")
    if isinstance(wait, int) and wait > 1:
        case.query["wait"] = 1
