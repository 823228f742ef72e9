// What the tests share: a navd spawned from the debug build, and small TCP/HTTP helpers.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const binary = process.env.NAVD_BINARY || resolve(root, ".build/debug/navd");
export const admin = "test-admin-token";

/**
 * Starts `navd serve` on a free port (`--listen 127.0.0.1:0`), and answers once its
 * "navd listening" line names the address: `{url, port, process, stop(), kill()}`.
 */
export async function startNavd({ store = "memory", args = [], listen = "127.0.0.1:0" } = {}) {
  const child = spawn(
    binary,
    ["serve", "--listen", listen, "--store", store, "--graph", resolve(root, "Examples/news.json"), "--graph", resolve(root, "Examples/stopwatch.json"), "--admin-token", admin, ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  const address = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`navd did not start:\n${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      const found = /msg="navd listening" address=([0-9.]+:[0-9]+)/.exec(log);
      if (found) {
        clearTimeout(timer);
        done(found[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => fail(new Error(`navd exited with ${code}:\n${log}`)));
  });
  const exited = new Promise((done) => child.on("exit", done));
  return {
    url: `http://${address}`,
    port: Number(address.split(":")[1]),
    address,
    log: () => log,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** A free TCP port on the loopback interface. */
export function freePort() {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** Takes messages from a watch iterator until `until(message, all)` says stop (or it ends). */
export async function collect(iterator, until, timeoutMs = 15000) {
  const all = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    const item = await Promise.race([iterator.next(), new Promise((_, fail) => setTimeout(() => fail(new Error(`timed out; got ${JSON.stringify(all.map(brief))}`)), Math.max(1, left)))]);
    if (item.done) return all;
    all.push(item.value);
    if (until(item.value, all)) return all;
  }
}

/** A message as a short string: `view 3`, `lifecycle 12`, `end deleted`. */
export function brief(message) {
  if (message.type === "view") return `view ${message.view.version}`;
  if (message.type === "lifecycle") return `lifecycle ${message.event.seq}`;
  return `end ${message.reason}`;
}

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/**
 * A TCP proxy in front of `target` ("host:port") that can cut its connections in the middle of
 * what navd sends next (`cutNext()`), or freeze them — nothing forwarded, nothing closed
 * (`freeze()`). Connections opened later are forwarded normally.
 */
export async function startProxy(target) {
  const [host, port] = target.split(":");
  const { connect } = await import("node:net");
  const live = new Set();
  let cutting = false;
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(port), host);
    const pair = { client, upstream, frozen: false };
    live.add(pair);
    const close = () => {
      live.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk) => pair.frozen || upstream.write(chunk));
    upstream.on("data", (chunk) => {
      if (pair.frozen) return;
      if (cutting && chunk.includes("event: lifecycle")) {
        cutting = false;
        cuts += 1;
        // The first lifecycle message whole, then up to the middle of the next one's data line
        // (the first's, when there is only one), then the connection is gone.
        const first = chunk.indexOf("event: lifecycle");
        const second = chunk.indexOf("event: lifecycle", first + 1);
        const at = chunk.indexOf("data: ", second > 0 ? second : first) + 12;
        client.write(chunk.subarray(0, at), () => close());
        return;
      }
      client.write(chunk);
    });
    client.on("error", close);
    upstream.on("error", close);
    client.on("close", close);
    client.on("end", close);
    upstream.on("close", close);
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    connections: () => live.size,
    cuts: () => cuts,
    cutNext() {
      cutting = true;
    },
    freeze() {
      for (const pair of live) pair.frozen = true;
    },
    close() {
      if (!server.listening) return Promise.resolve();
      for (const pair of live) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      return new Promise((done) => server.close(done));
    },
  };
}
