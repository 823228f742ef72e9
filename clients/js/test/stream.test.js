// The client against a fake upstream: bad input from a server, retries, and the event-stream
// rules (WHATWG HTML, "Server-sent events") byte by byte.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { NavClient, NavClientError, NavProblem, EventStreamParser, MAX_LINE_BYTES } from "../navd-client.js";
import { collect, brief } from "./support.js";

const encode = (text) => new TextEncoder().encode(text);

/** A fake navd: `handle(request, response, n)` answers the n-th request (from 0). */
async function fake(handle) {
  const requests = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method, url: request.url, headers: request.headers });
    handle(request, response, requests.length - 1);
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    },
  };
}

const view = (version) => `event: view\ndata: {"version":${version},"path":"/top"}\n\n`;
const lifecycle = (seq, transition) => `id: ${seq}\nevent: lifecycle\ndata: {"seq":${seq},"type":"awake","screen":"e1","scene":"top","transition":${transition}}\n\n`;
const stream = (response) => response.writeHead(200, { "Content-Type": "text/event-stream" });

test("the parser: BOM, CR, LF and CRLF split anywhere, data joined, comments, unknown fields", () => {
  const text = "\uFEFF: heartbeat 5\r\nretry: 300\revent: view\ndata: a\r\ndata: b\nfoo: bar\nid: 7\r\n\r\ndata:c\n\n:x\n\ndata\n\n";
  const whole = new EventStreamParser().push(encode(text));
  const expected = [
    { comment: "heartbeat 5" },
    { retry: 300 },
    { event: "view", data: "a\nb", id: "7" },
    { event: "message", data: "c", id: null },
    { comment: "x" },
    { event: "message", data: "", id: null },
  ];
  assert.deepEqual(whole, expected);
  const bytes = encode(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const parser = new EventStreamParser();
    assert.deepEqual([...parser.push(bytes.subarray(0, cut)), ...parser.push(bytes.subarray(cut))], expected, `cut at ${cut}`);
  }
  // A BOM only at the stream's start is dropped; a message without data is none.
  assert.deepEqual(new EventStreamParser().push(encode("event: x\n\ndata: \uFEFFy\n\n")), [{ event: "message", data: "\uFEFFy", id: null }]);
});

test("the parser refuses a line over 1 MiB without holding it", () => {
  const parser = new EventStreamParser();
  const piece = new Uint8Array(256 * 1024).fill(0x61);
  parser.push(encode("data: "));
  for (let i = 0; i < 3; i++) parser.push(piece);
  assert.throws(() => parser.push(piece), (error) => error instanceof NavClientError && error.code === "line_too_long");
  assert.equal(MAX_LINE_BYTES, 1048576);
});

test("a truncated JSON answer is a NavClientError, a truncated problem still a NavProblem", async () => {
  const server = await fake((request, response, n) => {
    response.writeHead(n === 0 ? 200 : 409, { "Content-Type": n === 0 ? "application/json" : "application/problem+json" });
    response.end('{"id": "abc", "version":');
  });
  const session = new NavClient({ url: server.url }).session("abc", "t");
  await assert.rejects(session.view(), (error) => error instanceof NavClientError && error.code === "invalid_json");
  await assert.rejects(session.back(), (error) => error instanceof NavProblem && error.status === 409 && error.code === "http_409" && error.body === null);
  await server.close();
});

test("unknown problem codes and event types stay strings", async () => {
  const server = await fake((request, response) => {
    response.writeHead(422, { "Content-Type": "application/problem+json" });
    response.end(JSON.stringify({ type: "urn:navd:problem:brand_new", title: "t", status: 422, detail: "d", code: "brand_new", extra: 1 }));
  });
  const problem = await new NavClient({ url: server.url }).session("abc", "t").navigate("x").catch((error) => error);
  assert.equal(problem.code, "brand_new");
  assert.equal(problem.body.extra, 1);
  await server.close();
});

test("429 and 503 with Retry-After are retried with the same Idempotency-Key; other 4xx never", async () => {
  const server = await fake((request, response, n) => {
    if (n < 2) {
      response.writeHead(n === 0 ? 503 : 429, { "Content-Type": "application/problem+json", "Retry-After": "0" });
      response.end(JSON.stringify({ code: n === 0 ? "store_unavailable" : "too_many_requests", status: 503, detail: "later" }));
    } else if (n === 2) {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end('{"version": 2}');
    } else {
      response.writeHead(409, { "Content-Type": "application/problem+json" });
      response.end(JSON.stringify({ code: "stack_underflow", status: 409, detail: "no" }));
    }
  });
  const session = new NavClient({ url: server.url, retryDelay: 5 }).session("abc", "t");
  assert.deepEqual(await session.navigate("x"), { version: 2 });
  const keys = server.requests.map((request) => request.headers["idempotency-key"]);
  assert.equal(keys.length, 3);
  assert.ok(keys[0] && keys.every((key) => key === keys[0]));
  await assert.rejects(session.back(), (error) => error.code === "stack_underflow");
  assert.equal(server.requests.length, 4);
  await server.close();
});

test("a network error mid-request is retried with the same key, the replayed answer taken", async () => {
  let first = true;
  const server = await fake((request, response) => {
    if (first) {
      first = false;
      request.socket.destroy();
      return;
    }
    response.writeHead(200, { "Content-Type": "application/json", "Idempotent-Replayed": "true" });
    response.end('{"version": 5}');
  });
  const session = new NavClient({ url: server.url, retryDelay: 5 }).session("abc", "t");
  assert.deepEqual(await session.link("news", { category: 1 }, { ifMatch: 4 }), { version: 5 });
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[0].headers["idempotency-key"], server.requests[1].headers["idempotency-key"]);
  assert.equal(server.requests[1].headers["if-match"], '"4"');
  await server.close();
});

test("an unknown event type is skipped; a known one with non-JSON data is an error", async () => {
  const server = await fake((request, response, n) => {
    stream(response);
    if (n === 0) response.write(`: heartbeat 15\n\nretry: 10\n\n${view(1)}event: novelty\ndata: not json\nid: 99\n\n${lifecycle(2, 2)}event: lifecycle\ndata: {nope\n\n`);
  });
  const watcher = new NavClient({ url: server.url }).session("abc", "t").watch();
  assert.deepEqual((await collect(watcher, (m, all) => all.length === 2)).map(brief), ["view 1", "lifecycle 2"]);
  await assert.rejects(watcher.next(), (error) => error instanceof NavClientError && error.code === "invalid_data");
  await server.close();
});

test("a line over 1 MiB from the server is a typed error", async () => {
  const server = await fake((request, response) => {
    stream(response);
    response.write(view(1));
    response.write("data: ");
    const piece = "a".repeat(64 * 1024);
    let sent = 0;
    const more = () => {
      while (sent < 20 && response.write(piece)) sent++;
      if (sent < 20) response.once("drain", more);
    };
    more();
  });
  const watcher = new NavClient({ url: server.url }).session("abc", "t").watch();
  assert.equal((await watcher.next()).value.type, "view");
  await assert.rejects(watcher.next(), (error) => error instanceof NavClientError && error.code === "line_too_long");
  await server.close();
});

test("an end with `lagging` resumes after `retry` ms with Last-Event-ID; an older view is not repeated", async () => {
  const server = await fake((request, response, n) => {
    stream(response);
    if (n === 0) response.end(`retry: 50\n\n${view(1)}${lifecycle(6, 2)}${lifecycle(7, 2)}${view(2)}event: end\ndata: {"reason":"lagging"}\n\n`);
    else if (n === 1) response.end(`${view(2)}${lifecycle(7, 2)}${lifecycle(8, 3)}${view(3)}event: end\ndata: {"reason":"shutdown"}\n\n`);
    else response.end(`${view(3)}event: end\ndata: {"reason":"deleted"}\n\n`);
  });
  const started = Date.now();
  const messages = await collect(new NavClient({ url: server.url }).session("abc", "t").watch(), () => false);
  assert.deepEqual(messages.map(brief), ["view 1", "lifecycle 6", "lifecycle 7", "view 2", "lifecycle 8", "view 3", "end deleted"]);
  assert.deepEqual(server.requests.map((r) => r.headers["last-event-id"]), [undefined, "7", "8"]);
  assert.equal(server.requests[0].headers.authorization, "Bearer t");
  assert.ok(Date.now() - started < 1500, "the retry of 50 ms was not honoured");
  await server.close();
});

test("a drop before the first event resumes from 0 and skips what the first view showed", async () => {
  const server = await fake((request, response, n) => {
    stream(response);
    if (n === 0) response.end(view(3));
    else response.end(`retry: 10\n\n${view(4)}${lifecycle(10, 3)}${lifecycle(11, 4)}event: end\ndata: {"reason":"expired"}\n\n`);
  });
  const messages = await collect(new NavClient({ url: server.url }).session("abc", "t").watch(), () => false);
  assert.deepEqual(messages.map(brief), ["view 3", "view 4", "lifecycle 11", "end expired"]);
  assert.equal(server.requests[1].headers["last-event-id"], "0");
  await server.close();
});

test("a stream that cannot be opened gives up after maxFailures, with the last error", async () => {
  const server = await fake((request, response) => {
    response.writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "0" });
    response.end(JSON.stringify({ code: "over_capacity", status: 503, detail: "full" }));
  });
  const watcher = new NavClient({ url: server.url }).session("abc", "t").watch({ maxFailures: 3 });
  await assert.rejects(watcher.next(), (error) => error instanceof NavProblem && error.code === "over_capacity");
  assert.equal(server.requests.length, 3);
  await server.close();
});
