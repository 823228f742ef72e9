// session.watch() against a spawned navd: following another client, streams cut or frozen by a
// proxy, a daemon killed and restarted, a session deleted.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NavClient, NavProblem } from "../navd-client.js";
import { startNavd, startProxy, collect, brief, freePort, sleep } from "./support.js";

let navd;
before(async () => {
  navd = await startNavd({ args: ["--heartbeat", "1"] });
});
after(() => navd.stop());

/** Every retained event's seq, in order. */
async function retained(session) {
  return (await session.events({ after: 0, limit: 1000 })).events.map((event) => event.seq);
}

const seqs = (messages) => messages.filter((m) => m.type === "lifecycle").map((m) => m.event.seq);
const reached = (seq) => (message) => message.type === "lifecycle" && message.event.seq >= seq;

test("a watcher follows another client's changes, view after events", async () => {
  const client = new NavClient({ url: navd.url });
  const created = await client.createSession();
  const watcher = new NavClient({ url: navd.url }).session(created.id, created.watchToken).watch();
  const [opening] = await collect(watcher, () => true);
  assert.deepEqual(opening.type, "view");
  assert.equal(opening.view.version, 1);
  const moved = await created.session.link("news", { category: 2 });
  const messages = await collect(watcher, (message) => message.type === "view");
  assert.deepEqual(seqs(messages), moved.events.map((event) => event.seq));
  assert.deepEqual(messages.filter((m) => m.type === "lifecycle").map((m) => m.event), moved.events);
  assert.equal(messages.at(-1).view.version, moved.version);
  assert.deepEqual(messages.at(-1).view.actions, moved.actions);
  await watcher.return();
});

test("after: every retained event after it first, then live ones; none twice", async () => {
  const client = new NavClient({ url: navd.url });
  const created = await client.createSession();
  await created.session.navigate("list_news");
  await created.session.navigate("show_news(id=1)");
  const all = await retained(created.session);
  const watcher = created.session.watch({ after: 3 });
  const messages = await collect(watcher, reached(all.at(-1)));
  assert.deepEqual(seqs(messages), all.filter((seq) => seq > 3));
  assert.equal(messages[0].type, "view");
  await watcher.return();
});

/** A new session, and a watch of it through a proxy (closed when test `t` ends), past its first view. */
async function proxied(t, options = {}) {
  const created = await new NavClient({ url: navd.url }).createSession();
  const proxy = await startProxy(navd.address);
  t.after(() => proxy.close());
  const watcher = new NavClient({ url: proxy.url }).session(created.id, created.token).watch(options);
  await collect(watcher, (m) => m.type === "view");
  return { session: created.session, proxy, watcher };
}

test("a stream cut in the middle of a message resumes with nothing missed or twice", async (t) => {
  const { session, proxy, watcher } = await proxied(t);
  proxy.cutNext();
  await session.link("news", { category: 1 });
  await session.navigate("show_news(id=3)");
  const last = (await session.navigate("^/top/list_news(category=4)")).events.at(-1).seq;
  const messages = await collect(watcher, reached(last));
  assert.equal(proxy.cuts(), 1);
  assert.deepEqual(seqs(messages), (await retained(session)).filter((seq) => seq > 5));
  const views = messages.filter((m) => m.type === "view").map((m) => m.view.version);
  assert.deepEqual(views, [...views].sort((a, b) => a - b));
  assert.equal(new Set(views).size, views.length, `a view twice: ${messages.map(brief)}`);
  await watcher.return();
});

test("a stream frozen without closing is taken for dead after two heartbeats and resumed", async (t) => {
  const states = [];
  const { session, proxy, watcher } = await proxied(t, { onState: (state) => states.push(state) });
  proxy.freeze();
  const started = Date.now();
  await session.navigate("list_news");
  const last = (await session.navigate("show_news(id=9)")).events.at(-1).seq;
  const messages = await collect(watcher, reached(last), 10000);
  // --heartbeat 1, announced: silent for 2 s means dead (well before TCP would tell).
  assert.ok(Date.now() - started >= 1500, "resumed before the silence was long enough");
  assert.deepEqual(states, ["connecting", "live", "connecting", "live"]);
  assert.deepEqual(seqs(messages), (await retained(session)).filter((seq) => seq > 5));
  await watcher.return();
});

test("a daemon killed and restarted on its SQLite store: the watcher resumes", async () => {
  const directory = mkdtempSync(join(tmpdir(), "navd-js-"));
  const port = await freePort();
  const options = { store: `sqlite:${join(directory, "navd.db")}`, listen: `127.0.0.1:${port}`, args: ["--heartbeat", "1"] };
  let daemon = await startNavd(options);
  try {
    const client = new NavClient({ url: daemon.url });
    const created = await client.createSession();
    await created.session.navigate("list_news");
    const watcher = created.session.watch({ maxFailures: 8 });
    await collect(watcher, (m) => m.type === "view");
    await daemon.kill();
    daemon = await startNavd(options);
    const moved = await created.session.navigate("show_news(id=2)");
    const messages = await collect(watcher, reached(moved.events.at(-1).seq), 20000);
    assert.deepEqual(seqs(messages), moved.events.map((event) => event.seq));
    assert.equal(messages.filter((m) => m.type === "view").at(-1)?.view.version ?? moved.version, moved.version);
    await watcher.return();
  } finally {
    await daemon.kill();
    rmSync(directory, { recursive: true, force: true });
  }
});

test("a session deleted while watched ends the watch with `deleted`", async () => {
  const client = new NavClient({ url: navd.url });
  const created = await client.createSession();
  const messages = [];
  const following = (async () => {
    for await (const message of created.session.watch()) messages.push(message);
  })();
  while (messages.length === 0) await sleep(20);
  await created.session.delete();
  await following;
  assert.deepEqual(messages.map(brief), ["view 1", "end deleted"]);
});

test("a watch refused with 401 throws the problem", async () => {
  const client = new NavClient({ url: navd.url });
  const created = await client.createSession();
  const watcher = client.session(created.id, "wrong").watch();
  await assert.rejects(watcher.next(), (error) => error instanceof NavProblem && error.code === "unauthorized" && error.status === 401);
});

/** Waits until the proxy holds no connection: Node's fetch closes an aborted one at its next read. */
async function closed(proxy) {
  for (let i = 0; i < 100 && proxy.connections() > 0; i++) await sleep(100);
}

test("a watch stops on its AbortSignal and on return(), its connection closed", async (t) => {
  const client = new NavClient({ url: navd.url });
  const created = await client.createSession();
  const proxy = await startProxy(navd.address);
  t.after(() => proxy.close());
  const session = new NavClient({ url: proxy.url }).session(created.id, created.token);
  const controller = new AbortController();
  const watcher = session.watch({ signal: controller.signal });
  await collect(watcher, () => true);
  const pending = watcher.next();
  controller.abort();
  assert.deepEqual(await pending, { done: true, value: undefined });
  await closed(proxy);
  assert.equal(proxy.connections(), 0);

  const second = session.watch();
  await collect(second, () => true);
  const waiting = second.next();
  await second.return();
  assert.equal((await waiting).done, true);
  await closed(proxy);
  assert.equal(proxy.connections(), 0);
});
