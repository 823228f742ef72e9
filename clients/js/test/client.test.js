// Every intent and every refusal the client can meet, against a spawned navd.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { NavClient, NavProblem, NavClientError } from "../navd-client.js";
import { startNavd, admin } from "./support.js";

let navd;
let client;
before(async () => {
  navd = await startNavd({ args: ["--max-context", "200"] });
  client = new NavClient({ url: navd.url });
});
after(() => navd.stop());

/** The refusal `promise` ends in: a NavProblem with `code` (and the members in `expected`). */
async function refused(promise, code, expected = {}) {
  const problem = await promise.then(
    (value) => assert.fail(`expected ${code}, got ${JSON.stringify(value).slice(0, 200)}`),
    (error) => error,
  );
  assert.ok(problem instanceof NavProblem, `not a NavProblem: ${problem}`);
  assert.ok(problem instanceof Error);
  assert.equal(problem.code, code, problem.detail);
  for (const [name, value] of Object.entries(expected)) assert.deepEqual(problem[name], value, name);
  return problem;
}

test("every intent, each answered with the view and its events", async () => {
  const created = await client.createSession({ graph: "news", context: { locale: "ja" } });
  assert.equal(created.version, 1);
  assert.equal(created.path, "/top");
  assert.equal(typeof created.token, "string");
  assert.equal(typeof created.watchToken, "string");
  const session = created.session;
  assert.equal(session.id, created.id);
  assert.equal(JSON.parse(JSON.stringify(created)).session, undefined);

  let moved = await session.link("news", { category: 2 });
  assert.equal(moved.path, "/top/list_news(category=2)");
  assert.equal(moved.version, 2);
  assert.equal(moved.events[0].type, "transitionStart");

  moved = await session.navigate("show_news(id=7)");
  assert.equal(moved.path, "/top/list_news(category=2)/show_news(id=7)");
  moved = await session.back();
  assert.equal(moved.path, "/top/list_news(category=2)");

  const list = moved.screens.at(-1).id;
  moved = await session.params(list, { category: 5 });
  assert.equal(moved.path, "/top/list_news(category=5)");
  assert.ok(moved.events.some((event) => event.type === "paramsChanged"));

  moved = await session.state(list, { seen: true });
  assert.deepEqual(moved.screens.at(-1).state, { seen: true });

  moved = await session.navigate("!pick_category");
  moved = await session.exit({ result: { category: 3 } });
  const result = moved.events.find((event) => event.type === "result");
  assert.deepEqual(result.value, { category: 3 });

  moved = await session.context({ user: "ann" });
  assert.equal(moved.context.user, "ann");
  assert.deepEqual(moved.events.find((event) => event.type === "contextChanged").keys, ["user"]);

  moved = await session.navigate("edit_profile");
  const form = moved.screens.at(-1).id;
  moved = await session.command(form, "type", { text: "hello" });
  assert.deepEqual(moved.screens.at(-1).state, { bio: "hello", dirty: true });
  const asked = await refused(session.back(), "confirmation_required", { status: 409 });
  assert.equal(asked.confirmation.screen, form);
  assert.deepEqual(asked.confirmation.intent, { back: 1 });
  moved = await session.confirm(asked.confirmation);
  assert.equal(moved.path, "/top/list_news(category=5)");
  await refused(session.confirm(asked.confirmation.token), "version_conflict", { status: 412 });

  moved = await session.batch([{ navigate: "^/top" }, { link: "news", params: { category: 1 } }]);
  assert.equal(moved.path, "/top/list_news(category=1)");
  await refused(session.batch([{ navigate: "^/top" }, { navigate: "nosuch" }]), "unknown_scene", { index: 1 });

  const view = await session.view();
  assert.equal(view.version, moved.version);
  assert.equal(view.events, undefined);
  const past = await session.view({ version: 2 });
  assert.equal(past.path, "/top/list_news(category=2)");

  const page = await session.events({ after: 0, limit: 5 });
  assert.deepEqual(page.events.map((event) => event.seq), [1, 2, 3, 4, 5]);
  assert.equal(page.next, 5);
  const history = await session.history({ after: 1, limit: 2 });
  assert.deepEqual(history.changes.map((change) => [change.version, change.kind]), [[2, "link"], [3, "navigate"]]);
  assert.equal(history.oldest, 1);
  assert.equal(history.next, 3);

  assert.equal(await session.delete(), null);
  await refused(session.view(), "unauthorized", { status: 401 });
});

test("If-Match on a change and on a delete", async () => {
  const { session, version } = await client.createSession();
  await refused(session.navigate("list_news", { ifMatch: version + 1 }), "version_conflict", { status: 412 });
  const moved = await session.navigate("list_news", { ifMatch: version });
  assert.equal(moved.version, version + 1);
  await refused(session.delete({ ifMatch: 1 }), "version_conflict");
  assert.equal(await session.delete({ ifMatch: `"${moved.version}"` }), null);
});

test("an Idempotency-Key replays the first answer, and refuses another request", async () => {
  const { session } = await client.createSession();
  const first = await session.navigate("list_news", { idempotencyKey: "key-1" });
  const again = await session.navigate("list_news", { idempotencyKey: "key-1" });
  assert.deepEqual(again, first);
  assert.equal((await session.view()).version, first.version);
  await refused(session.navigate("show_news(id=1)", { idempotencyKey: "key-1" }), "idempotency_key_reused", { status: 422 });
});

test("an upgrade, and one the stage does not fit", async () => {
  const document = (await client.graph("news")).document;
  const { session } = await client.createSession({ start: "/top/list_news/show_news(id=4)" });
  const next = structuredClone(document);
  next.scenes.show_news.params.lang = { type: "string", required: true };
  const put = await client.request("PUT", "/v1/graphs/news", { token: admin, body: next });
  assert.ok(put.status === 200 || put.status === 201, `PUT answered ${put.status}`);
  const problem = await refused(session.upgrade(), "upgrade_refused", { status: 409 });
  assert.ok(problem.reasons.length > 0 && typeof problem.reasons[0].pointer === "string");
  const fresh = (await client.createSession({ graph: "news", start: "/top" })).session;
  const current = await fresh.view();
  const upgraded = await fresh.upgrade({ version: current.graph.version });
  assert.equal(upgraded.events.length, 0);
});

test("every problem code a session's client can meet", async () => {
  const created = await client.createSession({ context: { user: "u" } });
  const { session } = created;
  await refused(session.navigate("show_news(id=x"), "invalid_path", { status: 400 });
  const path = await refused(session.navigate("show_news(id=x"), "invalid_path");
  assert.equal(typeof path.offset, "number");
  await refused(session.back({ count: 0 }), "invalid_request", { status: 400, param: "count" });
  await refused(session.navigate("nosuch"), "unknown_scene", { status: 422 });
  await refused(session.link("nosuch"), "unknown_transition", { status: 422 });
  await refused(session.navigate("show_news(id=abc)"), "invalid_params", { status: 422, param: "id" });
  await refused(session.command("e1", "nosuch"), "unknown_command", { status: 422 });
  await refused(session.state("e99", { a: 1 }), "not_found", { status: 404 });
  await refused(session.back(), "stack_underflow", { status: 409 });
  await refused(session.exit(), "stack_underflow", { status: 409 });
  await refused(session.context({ big: "x".repeat(300) }), "invalid_request", { param: "context" });
  await refused(session.navigate(Array.from({ length: 40 }, () => "list_news").join("/")), "stack_too_deep", { status: 422 });
  await refused(client.createSession({ graph: "nosuch" }), "unknown_graph", { status: 422 });
  await refused(client.session(session.id, "wrong").view(), "unauthorized", { status: 401 });
  const denied = await refused(client.session(session.id, null).view(), "unauthorized");
  assert.equal(denied.wwwAuthenticate, "Bearer");
  await refused(client.session("0".repeat(32), admin).view(), "session_not_found", { status: 404 });
  await refused(new NavClient({ url: navd.url, token: "not-admin" }).traffic("news", { since: "2020-01-01T00:00:00Z" }), "forbidden", { status: 403 });
  await refused(client.session(session.id, created.watchToken).navigate("list_news"), "unauthorized");
  await refused(session.view({ version: 99 }), "not_found");
  const stopwatch = (await client.createSession({ graph: "stopwatch" })).session;
  const guard = await refused(stopwatch.command("e1", "reset"), "command_refused", { status: 409 });
  assert.equal(guard.pointer, "/mode");
  const settings = await session.navigate("^/top/onboarding");
  assert.equal(settings.path, "/top/onboarding");
  await refused(session.back(), "not_removable", { status: 409 });
  await refused(client.request("POST", `/v1/sessions/${session.id}/navigate`, { token: created.token, body: { path: 1 } }), "invalid_request");
  const malformed = await fetch(`${navd.url}/v1/sessions/${session.id}/navigate`, {
    method: "POST", headers: { Authorization: `Bearer ${created.token}`, "Content-Type": "application/json" }, body: "{",
  });
  await refused(client.answer(malformed, false), "malformed_json", { status: 400 });
  const noprofile = (await client.createSession()).session;
  await refused(noprofile.navigate("^/top/home#profile"), "transition_refused", { status: 403 });
});

test("a network failure is a NavClientError after the retries", async () => {
  const nowhere = new NavClient({ url: "http://127.0.0.1:9", retries: 1, retryDelay: 10 });
  await assert.rejects(nowhere.createSession(), (error) => error instanceof NavClientError && error.code === "network");
});

test("the daemon's bounds: payload_too_large, too_many_sessions, too_many_requests", async (t) => {
  const bounded = await startNavd({ args: ["--max-body", "2048", "--max-sessions", "2", "--max-watchers-per-session", "1"] });
  t.after(() => bounded.stop());
  const strict = new NavClient({ url: bounded.url, retries: 0 });
  const { session } = await strict.createSession();
  await refused(session.state("e1", { text: "x".repeat(4096) }), "payload_too_large", { status: 413 });
  await strict.createSession();
  const full = await refused(strict.createSession(), "too_many_sessions", { status: 503 });
  assert.ok(full.retryAfter > 0, "a 503 names when to come back");
  const first = session.watch();
  assert.equal((await first.next()).value.type, "view");
  const second = session.watch({ maxFailures: 1 });
  const busy = await refused(second.next(), "too_many_requests", { status: 429 });
  assert.ok(busy.retryAfter > 0);
  await first.return();
});

test("past versions and history: every version read back, and the problems of the past", async (t) => {
  // A daemon of its own: other tests upload versions of news.
  const own = await startNavd();
  t.after(() => own.stop());
  const created = await new NavClient({ url: own.url }).createSession({ graph: "news" });
  const { session } = created;
  const answers = [created];
  answers.push(await session.navigate("/top/list_news(category=2)"));
  answers.push(await session.link("show", { id: 7 }));
  for (const answer of answers) {
    const past = await session.view({ version: answer.version });
    assert.equal(past.version, answer.version);
    assert.equal(past.path, answer.path);
  }
  const page = await session.history({ after: 1, limit: 10 });
  assert.deepEqual(page.changes.map((record) => record.kind), ["navigate", "link"]);
  assert.equal(page.oldest, 1);
  await refused(session.view({ version: 99 }), "not_found", { status: 404, param: "version" });
  await refused(session.view({ version: 0 }), "invalid_request", { status: 400, param: "version" });

  // With the feed off nothing of the past is kept: a past version is gone, and so is the history.
  const forgetful = await startNavd({ args: ["--feed-retention", "0"] });
  t.after(() => forgetful.stop());
  const other = await new NavClient({ url: forgetful.url }).createSession({ graph: "news" });
  await other.session.navigate("/top/list_news(category=2)");
  await refused(other.session.view({ version: 1 }), "version_expired", { status: 410, param: "version" });
  await refused(other.session.history(), "not_found", { status: 404 });
});
