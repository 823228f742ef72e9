"""navd's /metrics read by prometheus_client's parser, the way a Prometheus server reads it.

Run by scripts/metrics-check.sh against a fresh navd (SQLite store, compaction every 5 changes).
Prints one line per check and `metrics: N passed, N failed`; exits 1 on any failure.
"""
import json
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

BASE = sys.argv[1]
passed = failed = 0


def check(condition, what):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}")


def request(method, path, body=None, token=None, content_type="application/json"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {}
    if data is not None:
        headers["Content-Type"] = content_type
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(BASE + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def scrape():
    status, body = request("GET", "/metrics")
    assert status == 200, status
    families = {family.name: family for family in text_string_to_metric_families(body.decode())}
    return families


def samples(families, name):
    return [s for family in families.values() for s in family.samples if s.name == name]


def value(families, name, **labels):
    found = [s.value for s in samples(families, name) if all(s.labels.get(k) == v for k, v in labels.items())]
    return sum(found) if found else None


for _ in range(100):
    try:
        if request("GET", "/healthz")[0] == 200:
            break
    except OSError:
        pass
    time.sleep(0.1)

# Traffic of every kind the metrics sort: applied, refused, unauthorized, not found, wrong media type, wrong method.
status, body = request("POST", "/v1/sessions", {})
created = json.loads(body)
sid, token = created["id"], created["token"]
url = f"/v1/sessions/{sid}"
for path in ["list_news", "show_news(id=1)", "..", "^/top", "list_news", "^/top"]:
    request("POST", url + "/navigate", {"path": path}, token)
request("POST", url + "/navigate", {"path": "no_such_scene"}, token)  # 422 refused
request("POST", url + "/exit", {}, token)  # 409 stack_underflow: refused
request("POST", url + "/navigate", {"path": "list_news"}, "wrong-token-000000000000")  # 401
request("POST", "/v1/sessions/" + "0" * 32 + "/navigate", {"path": "x"}, token)  # 401 (no existence oracle)
request("POST", url + "/navigate", b"path", token, content_type="text/plain")  # 415
request("PUT", url + "/navigate", {"path": "x"}, token)  # 405 on a known route
request("GET", url, token=token)
request("GET", "/nowhere")  # 404 unmatched

# The compactor folds the sealed generation (6 changes, compact=5) in the background.
for _ in range(50):
    families = scrape()
    if (value(families, "navd_store_compactions_total") or 0) >= 1:
        break
    time.sleep(0.1)
check(len(families) > 10, f"prometheus_client parses the exposition ({len(families)} families)")

# HTTP
check(value(families, "navd_http_requests_total", route="/v1/sessions/{id}/navigate", method="POST", status="200") == 6,
      "navd_http_requests_total counts the navigations by route, method and status")
check(value(families, "navd_http_requests_total", route="/v1/sessions/{id}/navigate", method="PUT", status="405") == 1,
      "a 405 on a known route is counted under that route, not unmatched")
check(value(families, "navd_http_requests_total", route="unmatched", status="404") == 1, "an unknown path is unmatched")
histogram = families.get("navd_http_request_duration_seconds")
check(histogram is not None and histogram.type == "histogram", "navd_http_request_duration_seconds is a histogram")
count = value(families, "navd_http_request_duration_seconds_count", route="/v1/sessions/{id}/navigate", method="POST")
check(count is not None and count >= 8, f"the latency histogram has a method label ({count} POST navigations)")
buckets = [s for s in samples(families, "navd_http_request_duration_seconds_bucket")
           if s.labels.get("route") == "/v1/sessions/{id}/navigate" and s.labels.get("method") == "POST"]
check(buckets and buckets[-1].labels["le"] == "+Inf" and buckets[-1].value == count
      and all(a.value <= b.value for a, b in zip(buckets, buckets[1:])), "its buckets are cumulative up to +Inf = count")

# Intents
intents = {s.labels["result"]: s.value for s in samples(families, "navd_intents_total")}
check(intents.get("applied") == 6, f"intents applied: {intents}")
check(intents.get("refused") == 2, "intents refused: only navigation's refusals (422, 409)")
check(intents.get("unauthorized") == 2, "401s are unauthorized, not refused")
check(intents.get("invalid") == 1, "a 415 is invalid, not refused")

# Store (SQLite)
check(value(families, "navd_sessions") == 1, "navd_sessions")
for name in ["navd_store_changelog_backlog", "navd_store_cache_bytes", "navd_store_cache_limit_bytes", "navd_store_cache_sessions"]:
    check(families.get(name) is not None and families[name].type == "gauge", f"{name} is a gauge")
for name in ["navd_store_compactions", "navd_store_compaction_seconds", "navd_store_cache_hits", "navd_store_cache_misses"]:
    check(families.get(name) is not None and families[name].type == "counter", f"{name} is a counter")
check(value(families, "navd_store_cache_hits_total") >= 5, "cache hits are counted")
check(value(families, "navd_store_compactions_total") >= 1, "a compaction (every 5 changes here) is counted")
check(value(families, "navd_store_changelog_backlog") < 5, "the change-log backlog is what is not compacted")

# Process and build
for name in ["process_cpu_seconds", "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds",
             "process_max_fds", "process_start_time_seconds"]:
    check(families.get(name) is not None, f"{name}")
start = value(families, "process_start_time_seconds")
check(start is not None and abs(time.time() - start) < 600, "process_start_time_seconds is this process's start")
check(value(families, "process_resident_memory_bytes") > 1 << 20, "process_resident_memory_bytes is bytes")
info = samples(families, "navd_build_info")
check(len(info) == 1 and info[0].value == 1 and info[0].labels.get("version") and info[0].labels.get("swift"),
      f"navd_build_info: {info[0].labels if info else None}")

# A second scrape reads the same families (nothing appears or vanishes between scrapes).
again = scrape()
check(set(again) == set(families), "a second scrape has the same families")

print(f"metrics: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
