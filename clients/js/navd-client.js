// navd's JavaScript client: one ES module, no dependencies, for browsers and Node 18+
// (clients/js/README.md). Only web-standard APIs: fetch, ReadableStream, TextDecoder,
// AbortController. The contract is openapi.yaml; the rules it follows are docs/design.md's
// "HTTP API" and "Live sessions". Its types are navd-client.d.ts.

/** @typedef {import("./navd-client").NavClientOptions} NavClientOptions */
/** @typedef {import("./navd-client").RequestOptions} RequestOptions */
/** @typedef {import("./navd-client").ChangeOptions} ChangeOptions */
/** @typedef {import("./navd-client").CallOptions} CallOptions */
/** @typedef {import("./navd-client").WatchOptions} WatchOptions */
/** @typedef {import("./navd-client").JSONValue} JSONValue */
/** @typedef {import("./navd-client").StreamItem} StreamItem */

/** A refusal by navd: its RFC 9457 problem document, every member kept. */
export class NavProblem extends Error {
  constructor(status, body, headers) {
    const document = body && typeof body === "object" && !Array.isArray(body) ? body : {};
    super(typeof document.detail === "string" ? document.detail : `navd answered ${status}`);
    this.name = "NavProblem";
    this.status = status;
    // A code this client does not know stays a plain string; an answer that is no problem
    // document (a proxy's page, libmicrohttpd's bare 400) gets `http_<status>`.
    this.code = typeof document.code === "string" ? document.code : `http_${status}`;
    this.type = typeof document.type === "string" ? document.type : null;
    this.title = typeof document.title === "string" ? document.title : null;
    this.detail = this.message;
    this.offset = Number.isInteger(document.offset) ? document.offset : null;
    this.param = typeof document.param === "string" ? document.param : null;
    this.pointer = typeof document.pointer === "string" ? document.pointer : null;
    this.index = Number.isInteger(document.index) ? document.index : null;
    this.confirmation = document.confirmation && typeof document.confirmation === "object" ? document.confirmation : null;
    this.reasons = Array.isArray(document.reasons) ? document.reasons : null;
    this.issues = Array.isArray(document.issues) ? document.issues : null;
    this.retryAfter = retryAfterSeconds(headers && headers.get("Retry-After"));
    this.wwwAuthenticate = (headers && headers.get("WWW-Authenticate")) || null;
    this.requestId = (headers && headers.get("X-Request-Id")) || null;
    this.body = body === undefined ? null : body;
  }
}

/**
 * A failure on this side of navd's answers: `network` (no answer came), `invalid_json` (an
 * answer's body that does not parse), `line_too_long` (an event-stream line over 1 MiB),
 * `invalid_data` (a view, lifecycle or end message whose data is not a JSON object),
 * `unexpected_response` (a stream answered with something else).
 */
export class NavClientError extends Error {
  constructor(code, message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "NavClientError";
    this.code = code;
    this.detail = message;
  }
}

/** The longest event-stream line read, in bytes: past it the stream is refused, never buffered. */
export const MAX_LINE_BYTES = 1 << 20;

const LF = 10;
const CR = 13;

/**
 * An event-stream parser (WHATWG HTML, "Server-sent events"): bytes in, messages and comments out.
 * Lines end in CR, LF or CRLF, split anywhere across chunks; a leading BOM is dropped; `data`
 * lines are joined with LF; unknown fields are ignored.
 */
export class EventStreamParser {
  constructor({ maxLineBytes = MAX_LINE_BYTES } = {}) {
    this.maxLineBytes = maxLineBytes;
    /** @type {Uint8Array[]} */
    this.pieces = [];
    this.pending = 0;
    this.afterCR = false;
    this.first = true;
    // A BOM is dropped once, at the stream's start: TextDecoder would drop one from every line.
    this.decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    this.event = "";
    /** @type {string[]} */
    this.data = [];
    /** @type {string | null} */
    this.id = null;
  }

  reset() {
    this.event = "";
    this.data = [];
    this.id = null;
  }

  /**
   * The items `bytes` completes: `{event, data, id}` for a message, `{comment}`, `{retry}`.
   * @throws {NavClientError} `line_too_long`.
   */
  push(bytes) {
    /** @type {StreamItem[]} */
    const out = [];
    let start = 0;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i];
      if (byte !== LF && byte !== CR) continue;
      if (byte === LF && this.afterCR && i === start && this.pending === 0) {
        // The LF of a CRLF whose CR ended the previous line.
        this.afterCR = false;
        start = i + 1;
        continue;
      }
      this.take(bytes.subarray(start, i));
      this.line(this.joined(), out);
      this.afterCR = byte === CR;
      start = i + 1;
    }
    if (start < bytes.length) {
      this.afterCR = false;
      this.take(bytes.subarray(start));
    }
    return out;
  }

  take(piece) {
    if (piece.length === 0) return;
    this.pending += piece.length;
    if (this.pending > this.maxLineBytes) {
      throw new NavClientError("line_too_long", `an event-stream line is over ${this.maxLineBytes} bytes`);
    }
    this.pieces.push(piece.slice());
  }

  joined() {
    let bytes;
    if (this.pieces.length === 1) bytes = this.pieces[0];
    else {
      bytes = new Uint8Array(this.pending);
      let at = 0;
      for (const piece of this.pieces) {
        bytes.set(piece, at);
        at += piece.length;
      }
    }
    /** @type {Uint8Array[]} */
    this.pieces = [];
    this.pending = 0;
    let text = this.decoder.decode(bytes);
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return text;
  }

  line(text, out) {
    if (text === "") {
      if (this.data.length > 0) out.push({ event: this.event || "message", data: this.data.join("\n"), id: this.id });
      this.reset();
      return;
    }
    if (text.startsWith(":")) {
      out.push({ comment: text.slice(1).replace(/^ /, "") });
      return;
    }
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
    else if (field === "retry" && /^[0-9]+$/.test(value)) out.push({ retry: Number(value) });
  }
}

function retryAfterSeconds(value) {
  if (!value) return null;
  if (/^[0-9]+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function randomKey() {
  const bytes = new Uint8Array(16);
  const crypto = globalThis.crypto;
  if (crypto && crypto.getRandomValues) crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Resolves after `ms`, or rejects when `signal` aborts first.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      if (signal) signal.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal && signal.reason);
    }
    if (signal) signal.addEventListener("abort", aborted, { once: true });
  });
}

function isAbort(error, signal) {
  return (signal && signal.aborted) || (error && error.name === "AbortError");
}

function query(values) {
  const parts = [];
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null) parts.push(`${name}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

function entityTag(ifMatch) {
  if (ifMatch === undefined || ifMatch === null) return null;
  return typeof ifMatch === "number" ? `"${ifMatch}"` : String(ifMatch);
}

/** A client of one navd: `url` its base, `token` the backend or admin token, if any. */
export class NavClient {
  /** @param {NavClientOptions} options */
  constructor({ url = "", token = null, retries = 3, retryDelay = 250, maxRetryDelay = 10000, fetch: fetcher } = {}) {
    this.url = String(url).replace(/\/+$/, "");
    this.token = token;
    this.retries = retries;
    this.retryDelay = retryDelay;
    this.maxRetryDelay = maxRetryDelay;
    this.fetch = fetcher || ((input, init) => globalThis.fetch(input, init));
  }

  /**
   * One request. Retried, with the same `Idempotency-Key` on a POST, PUT or PATCH, after a
   * network error or a 429/503 that names a `Retry-After`, at most `retries` times with a
   * growing delay; never after any other answer. Answers `{status, headers, body}`.
   * @param {string} method
   * @param {string} path
   * @param {RequestOptions} options
   */
  async request(method, path, { token, body, contentType = "application/json", ifMatch, idempotencyKey, accept = "application/json", signal, text = false } = {}) {
    const headers = { Accept: accept };
    const bearer = token === undefined ? this.token : token;
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    if (body !== undefined) headers["Content-Type"] = contentType;
    const tag = entityTag(ifMatch);
    if (tag) headers["If-Match"] = tag;
    if (method === "POST" || method === "PUT" || method === "PATCH") headers["Idempotency-Key"] = idempotencyKey || randomKey();
    /** @type {RequestInit} */
    const init = { method, headers, signal, cache: "no-store", credentials: "omit" };
    if (body !== undefined) init.body = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const backoff = Math.min(this.maxRetryDelay, this.retryDelay * 2 ** attempt * (0.5 + Math.random() / 2));
      let response;
      try {
        response = await this.fetch(this.url + path, init);
      } catch (error) {
        if (isAbort(error, signal)) throw error;
        if (attempt >= this.retries) throw new NavClientError("network", `navd cannot be reached: ${String(error && /** @type {Error} */ (error).message)}`, error);
        await sleep(backoff, signal);
        continue;
      }
      const wait = retryAfterSeconds(response.headers.get("Retry-After"));
      if ((response.status === 429 || response.status === 503) && wait !== null && attempt < this.retries && wait * 1000 <= this.maxRetryDelay) {
        await response.body?.cancel().catch(() => {});
        await sleep(Math.max(wait * 1000, backoff), signal);
        continue;
      }
      return this.answer(response, text);
    }
  }

  async answer(response, text) {
    const raw = response.status === 204 || response.status === 304 ? "" : await response.text();
    const type = response.headers.get("Content-Type") || "";
    let body = raw === "" ? null : raw;
    if (/json/.test(type) && raw !== "" && (!text || !response.ok)) {
      try {
        body = JSON.parse(raw);
      } catch (error) {
        if (response.ok) throw new NavClientError("invalid_json", `navd's ${response.status} answer is not JSON: ${String(error && /** @type {Error} */ (error).message)}`, error);
        body = null;
      }
    }
    if (!response.ok) throw new NavProblem(response.status, body, response.headers);
    return { status: response.status, headers: response.headers, body };
  }

  async json(method, path, options) {
    return (await this.request(method, path, options)).body;
  }

  /**
   * `POST /v1/sessions`: a new session, its `token` and `watchToken`, as a `NavSession` too.
   * @param {{graph?: string, start?: string, context?: JSONValue} & ChangeOptions} request
   */
  async createSession({ graph, start, context, ...options } = {}) {
    const body = {};
    if (graph !== undefined) body.graph = graph;
    if (start !== undefined) body.start = start;
    if (context !== undefined) body.context = context;
    const created = await this.json("POST", "/v1/sessions", { ...options, body });
    // Not enumerable: the answer stays navd's JSON when it is logged, compared or stored.
    return Object.defineProperty(created, "session", { value: this.session(created.id, created.token), enumerable: false });
  }

  /** A session by id, acted on with `token` (its token, its watch token, or the admin token). */
  session(id, token) {
    return new NavSession(this, id, token === undefined ? this.token : token);
  }

  graphs(options = {}) {
    return this.json("GET", "/v1/graphs", options);
  }

  /** @param {string} name @param {{version?: number} & CallOptions} options */
  graph(name, { version, ...options } = {}) {
    return this.json("GET", `/v1/graphs/${encodeURIComponent(name)}${query({ version })}`, options);
  }

  /**
   * The graph drawn by navd: SVG text (or DOT, Mermaid).
   * @param {string} name
   * @param {{version?: number, format?: string, traffic?: string} & CallOptions} options
   */
  diagram(name, { version, format = "svg", traffic, ...options } = {}) {
    const accept = format === "svg" ? "image/svg+xml" : "text/plain";
    return this.json("GET", `/v1/graphs/${encodeURIComponent(name)}/diagram${query({ format, version, traffic })}`, { accept, text: true, ...options });
  }

  /** @param {string} name @param {{since?: string, until?: string, token?: string | null} & CallOptions} options */
  traffic(name, { since, until, ...options } = {}) {
    return this.json("GET", `/v1/graphs/${encodeURIComponent(name)}/traffic${query({ since, until })}`, options);
  }
}

/** One session: every intent, its view, history and events, and `watch`. */
export class NavSession {
  constructor(client, id, token) {
    this.client = client;
    this.id = id;
    this.token = token;
    this.path = `/v1/sessions/${encodeURIComponent(id)}`;
  }

  call(method, suffix, body, options = {}, contentType) {
    const { signal, ifMatch, idempotencyKey } = options;
    return this.client.json(method, this.path + suffix, { token: this.token, body, contentType, signal, ifMatch, idempotencyKey });
  }

  screen(screen) {
    return `/screens/${encodeURIComponent(screen)}`;
  }

  /**
   * The view now, or at a past `version` (without events).
   * @param {{version?: number} & CallOptions} options
   */
  view({ version, signal } = {}) {
    return this.call("GET", query({ version }), undefined, { signal });
  }

  delete(options = {}) {
    return this.call("DELETE", "", undefined, options);
  }

  navigate(path, options = {}) {
    return this.call("POST", "/navigate", { path }, options);
  }

  link(name, params, options = {}) {
    return this.call("POST", "/transitions", params === undefined ? { name } : { name, params }, options);
  }

  /** @param {{count?: number, result?: JSONValue} & ChangeOptions} options */
  back({ count, result, ...options } = {}) {
    const body = {};
    if (count !== undefined) body.count = count;
    if (result !== undefined) body.result = result;
    return this.call("POST", "/back", body, options);
  }

  /** @param {{result?: JSONValue} & ChangeOptions} options */
  exit({ result, ...options } = {}) {
    return this.call("POST", "/exit", result === undefined ? {} : { result }, options);
  }

  params(screen, params, options = {}) {
    return this.call("PUT", `${this.screen(screen)}/params`, params, options);
  }

  state(screen, patch, options = {}) {
    return this.call("PATCH", `${this.screen(screen)}/state`, patch, options, "application/merge-patch+json");
  }

  command(screen, name, args, options = {}) {
    return this.call("POST", `${this.screen(screen)}/commands`, args === undefined ? { name } : { name, args }, options);
  }

  context(patch, options = {}) {
    return this.call("PATCH", "/context", patch, options, "application/merge-patch+json");
  }

  batch(intents, options = {}) {
    return this.call("POST", "/intents", { intents }, options);
  }

  /** Applies what a `confirmation_required` refusal asked: its `confirmation`, or its token. */
  confirm(confirmation, options = {}) {
    const token = confirmation && typeof confirmation === "object" ? confirmation.token : confirmation;
    return this.call("POST", "/confirm", { token }, options);
  }

  /** @param {{version?: number} & ChangeOptions} options */
  upgrade({ version, ...options } = {}) {
    return this.call("POST", "/upgrade", version === undefined ? {} : { version }, options);
  }

  /**
   * Retained events after `after`: `{events, next}`; `wait` long-polls up to that many seconds.
   * @param {{after?: number, limit?: number, wait?: number} & CallOptions} options
   */
  events({ after, limit, wait, signal } = {}) {
    return this.call("GET", `/events${query({ after, limit, wait })}`, undefined, { signal });
  }

  /**
   * The retained history, oldest first, paged by version: `{changes, oldest, next}`.
   * @param {{after?: number, limit?: number} & CallOptions} options
   */
  history({ after, limit, signal } = {}) {
    return this.call("GET", `/history${query({ after, limit })}`, undefined, { signal });
  }

  /**
   * Follows the session live (docs/design.md, "Event stream"): `view`, `lifecycle` and `end`
   * messages, resumed with `Last-Event-ID` after a drop, a silence or an `end` that asks for it.
   * Cancelled by `signal` or by the iterator's `return()`. `onState` hears `connecting` before
   * each connection and `live` once its opening view came (yielded or not, being no newer).
   * @param {WatchOptions} options
   */
  watch({ after, signal, maxFailures = 5, onState } = {}) {
    const controller = new AbortController();
    const abort = () => controller.abort(signal && signal.reason);
    if (signal) {
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
    }
    const messages = follow(this, { after, signal: controller.signal, maxFailures, onState: onState || (() => {}) });
    const stop = () => {
      if (signal) signal.removeEventListener("abort", abort);
      controller.abort();
    };
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: async () => {
        const item = await messages.next();
        if (item.done) stop();
        return item;
      },
      return: async (value) => {
        stop();
        await messages.return(value);
        return { done: true, value };
      },
      throw: async (error) => {
        stop();
        return messages.throw(error);
      },
    };
  }
}

/** Seconds assumed between heartbeats until a stream announces its own. */
const DEFAULT_HEARTBEAT = 15;

/** The watch loop behind `NavSession.watch`: connects, reads, and reconnects until told to stop. */
async function* follow(session, { after, signal, maxFailures, onState }) {
  const state = {
    // The last seq handed out (or given as `after`); null before the first.
    lastSeq: Number.isInteger(after) ? after : null,
    // Before the first event, a resume replays every retained event: those of changes the
    // first view already showed are skipped by their `transition`.
    shownVersion: null,
    viewVersion: 0,
    retry: 2000,
    heartbeat: DEFAULT_HEARTBEAT,
    onState,
  };
  let failures = 0;
  while (!signal.aborted) {
    let outcome;
    try {
      outcome = yield* connect(session, state, signal);
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof NavProblem) {
        const transient = error.status >= 500 || error.status === 429;
        if (!transient || failures + 1 >= maxFailures) throw error;
        outcome = { again: true, failed: true, wait: error.retryAfter === null ? null : error.retryAfter * 1000 };
      } else if (error instanceof NavClientError && error.code !== "network") throw error;
      else {
        if (failures + 1 >= maxFailures) throw error instanceof NavClientError ? error : new NavClientError("network", `the event stream broke: ${String(error && /** @type {Error} */ (error).message)}`, error);
        outcome = { again: true, failed: true };
      }
    }
    if (!outcome.again) return;
    failures = outcome.failed ? failures + 1 : 0;
    const delay = outcome.wait ?? state.retry * (outcome.failed ? 2 ** (failures - 1) : 1);
    try {
      await sleep(Math.min(delay, 60000), signal);
    } catch {
      return;
    }
  }
}

/**
 * One connection: yields what it reads and answers `{again, failed}` — whether to reconnect, and
 * whether the connection failed before its opening view.
 */
async function* connect(session, state, parentSignal) {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  parentSignal.addEventListener("abort", onAbort, { once: true });
  state.onState("connecting");
  const headers = { Accept: "text/event-stream" };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  const resumeFrom = state.lastSeq ?? (state.shownVersion !== null ? 0 : null);
  if (resumeFrom !== null) headers["Last-Event-ID"] = String(resumeFrom);
  let reader = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), state.heartbeat * 2000);
  };
  try {
    arm();
    let response;
    try {
      response = await session.client.fetch(`${session.client.url}${session.path}/events`, {
        headers, signal: controller.signal, cache: "no-store", credentials: "omit",
      });
    } catch (error) {
      if (parentSignal.aborted) return { again: false };
      throw new NavClientError("network", `the event stream cannot be opened: ${String(error && /** @type {Error} */ (error).message)}`, error);
    }
    if (!response.ok) await session.client.answer(response, false);
    if (!/^text\/event-stream/.test(response.headers.get("Content-Type") || "") || !response.body) {
      await response.body?.cancel().catch(() => {});
      throw new NavClientError("unexpected_response", "the events route did not answer with an event stream");
    }
    reader = response.body.getReader();
    const parser = new EventStreamParser();
    let opened = false;
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (parentSignal.aborted) return { again: false };
        return { again: true, failed: !opened };
      }
      if (chunk.done) return { again: true, failed: !opened };
      for (const item of parser.push(chunk.value)) {
        arm();
        if ("comment" in item) {
          const announced = /^heartbeat ([0-9]+)$/.exec(item.comment);
          if (announced && Number(announced[1]) > 0) state.heartbeat = Number(announced[1]);
          continue;
        }
        if ("retry" in item) {
          state.retry = item.retry;
          continue;
        }
        const message = decode(item);
        if (message === null) continue;
        if (message.type === "view") {
          if (!opened) state.onState("live");
          opened = true;
          if (state.shownVersion === null && state.lastSeq === null) state.shownVersion = message.view.version;
          if (message.view.version <= state.viewVersion) continue;
          state.viewVersion = message.view.version;
          yield message;
        } else if (message.type === "lifecycle") {
          const seq = message.event.seq;
          if (state.lastSeq !== null && seq <= state.lastSeq) continue;
          state.lastSeq = seq;
          if (state.shownVersion !== null && message.event.transition <= state.shownVersion) continue;
          yield message;
        } else {
          if (message.reason === "lagging" || message.reason === "shutdown") return { again: true, failed: false };
          yield message;
          return { again: false };
        }
      }
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    parentSignal.removeEventListener("abort", onAbort);
    controller.abort();
    if (reader) reader.cancel().catch(() => {});
  }
}

/**
 * A stream message as a typed one: null for a type this client does not know, skipped as
 * EventSource skips a type no one listens to (a newer navd may add one). A known type whose data
 * is not the JSON it should be is a `NavClientError` `invalid_data`: skipping it could skip an event.
 */
function decode({ event, data, id }) {
  if (event !== "view" && event !== "lifecycle" && event !== "end") return null;
  let value;
  try {
    value = JSON.parse(data);
  } catch {
    throw new NavClientError("invalid_data", `an event-stream ${event} message's data is not JSON`);
  }
  const object = value !== null && typeof value === "object" && !Array.isArray(value);
  if (event === "view" && object && Number.isInteger(value.version)) return { type: "view", view: value };
  if (event === "lifecycle" && object && Number.isInteger(value.seq) && (id === null || id === String(value.seq))) {
    return { type: "lifecycle", event: value };
  }
  if (event === "end" && object && typeof value.reason === "string") return { type: "end", reason: value.reason };
  throw new NavClientError("invalid_data", `an event-stream ${event} message's data is not a ${event}`);
}
