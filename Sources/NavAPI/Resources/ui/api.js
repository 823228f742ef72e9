// navd's HTTP API and its event stream, as the client uses them (openapi.yaml has the contract).

/**
 * A refusal: navd's problem+json (`code`, `detail`, maybe `offset`/`param`, a command's failed
 * guard `pointer`, a batch's `index`, what a `confirmation` asks), or a network failure.
 */
export class Problem extends Error {
  constructor(status, body) {
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || (status ? `http_${status}` : "network");
    this.detail = body.detail || body.title || this.message;
    this.offset = Number.isInteger(body.offset) ? body.offset : null;
    this.param = typeof body.param === "string" ? body.param : null;
    this.pointer = typeof body.pointer === "string" ? body.pointer : null;
    this.index = Number.isInteger(body.index) ? body.index : null;
    this.confirmation = body.confirmation && typeof body.confirmation.token === "string" ? body.confirmation : null;
  }
}

/**
 * One request. `token` goes in the Authorization header (never in the URL); `body` is sent as
 * JSON. Answers the parsed JSON body (null for 204); throws a Problem for any other status.
 */
export async function request(method, path, { token = null, body = undefined, accept = "application/json" } = {}) {
  const headers = { Accept: accept };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
    });
  } catch (error) {
    throw new Problem(0, { code: "network", detail: `navd cannot be reached (${error.message})` });
  }
  if (response.status === 204) return null;
  const type = response.headers.get("Content-Type") || "";
  const text = await response.text();
  let parsed = null;
  if (type.includes("json")) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!response.ok) throw new Problem(response.status, parsed && typeof parsed === "object" ? parsed : { detail: text.slice(0, 200) });
  return type.includes("json") ? parsed : text;
}

const sessionPath = (id) => `/v1/sessions/${encodeURIComponent(id)}`;

export const api = {
  graphs: () => request("GET", "/v1/graphs"),
  graph: (name, version) =>
    request("GET", `/v1/graphs/${encodeURIComponent(name)}${version ? `?version=${encodeURIComponent(version)}` : ""}`),
  diagram: (name, version) =>
    request("GET", `/v1/graphs/${encodeURIComponent(name)}/diagram?format=svg&version=${encodeURIComponent(version)}`, { accept: "image/svg+xml" }),
  traffic: (name, token, since) =>
    request("GET", `/v1/graphs/${encodeURIComponent(name)}/traffic?since=${encodeURIComponent(since)}`, { token }),
  create: (body) => request("POST", "/v1/sessions", { body }),
  view: (id, token) => request("GET", sessionPath(id), { token }),
  // The view as it was at `version` (docs/design.md, "The session at a past version").
  pastView: (id, token, version) => request("GET", `${sessionPath(id)}?version=${encodeURIComponent(version)}`, { token }),
  // `{changes, oldest, next}`: the session's records after version `after`, oldest first.
  history: (id, token, after, limit) => request("GET", `${sessionPath(id)}/history?after=${after}&limit=${limit}`, { token }),
  remove: (id, token) => request("DELETE", sessionPath(id), { token }),
  events: (id, token, after) => request("GET", `${sessionPath(id)}/events?after=${after}&limit=1000`, { token }),
  navigate: (id, token, path) => request("POST", `${sessionPath(id)}/navigate`, { token, body: { path } }),
  link: (id, token, name, params) => request("POST", `${sessionPath(id)}/transitions`, { token, body: { name, params } }),
  back: (id, token, count) => request("POST", `${sessionPath(id)}/back`, { token, body: { count } }),
  exit: (id, token) => request("POST", `${sessionPath(id)}/exit`, { token }),
  command: (id, token, screen, name, args) =>
    request("POST", `${sessionPath(id)}/screens/${encodeURIComponent(screen)}/commands`, { token, body: { name, args } }),
  confirm: (id, token, confirmation) => request("POST", `${sessionPath(id)}/confirm`, { token, body: { token: confirmation } }),
  context: (id, token, patch) => request("PATCH", `${sessionPath(id)}/context`, { token, body: patch }),
};

/** Hands one stream message to its handler; answers true for `end` (the stream is over). */
function dispatch(type, data, handlers) {
  let value;
  try {
    value = JSON.parse(data);
  } catch {
    return false;
  }
  if (type === "view") handlers.view(value);
  else if (type === "lifecycle") handlers.lifecycle(value);
  else if (type === "end") {
    handlers.end(value && typeof value === "object" ? value : { reason: "ended" });
    return true;
  }
  return false;
}

/**
 * Follows a session over its event stream (docs/design.md, "Live sessions") with the browser's EventSource, which
 * cannot send headers: the read-only watch token goes in `?access_token=` (navd refuses a write
 * token there). `after` resumes after that event seq; EventSource reconnects by itself with
 * `Last-Event-ID`. Handlers: view(view), lifecycle(event), end({reason}), status("connecting" |
 * "live" | "closed"). Answers `{close()}`.
 */
export function watch(id, watchToken, after, handlers) {
  const url = `${sessionPath(id)}/events?access_token=${encodeURIComponent(watchToken)}&after=${after}`;
  const source = new EventSource(url);
  handlers.status("connecting");
  source.addEventListener("open", () => handlers.status("live"));
  for (const type of ["view", "lifecycle", "end"]) {
    source.addEventListener(type, (message) => {
      if (dispatch(type, message.data, handlers)) {
        source.close();
        handlers.status("closed");
      }
    });
  }
  source.addEventListener("error", () => {
    // CONNECTING: EventSource retries on its own; CLOSED: it gave up (a refusal such as 401).
    handlers.status(source.readyState === EventSource.CLOSED ? "closed" : "connecting");
  });
  return { close: () => source.close() };
}

/**
 * The same stream read with fetch, for a window that holds only the write token: that token
 * may not go in a URL, and fetch can send it as `Authorization`. Reconnects as EventSource does
 * (after `retry` ms, default 2 s, with `Last-Event-ID`) until closed, ended or refused.
 */
export function watchWithToken(id, token, after, handlers) {
  let closed = false;
  let controller = null;
  let lastId = after;
  let retry = 2000;

  async function read(response) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (!line || line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") type = text;
          else if (field === "data") data.push(text);
          else if (field === "id" && /^[0-9]+$/.test(text)) lastId = Number(text);
          else if (field === "retry" && /^[0-9]+$/.test(text)) retry = Number(text);
        }
        if (data.length && dispatch(type, data.join("\n"), handlers)) return true;
      }
    }
  }

  (async () => {
    while (!closed) {
      handlers.status("connecting");
      controller = new AbortController();
      try {
        const headers = { Accept: "text/event-stream", Authorization: `Bearer ${token}` };
        if (lastId > 0) headers["Last-Event-ID"] = String(lastId);
        const response = await fetch(`${sessionPath(id)}/events`, { headers, signal: controller.signal, cache: "no-store", credentials: "omit" });
        if (response.status >= 400 && response.status < 500) {
          handlers.status("closed");
          return;
        }
        if (response.ok && response.body) {
          handlers.status("live");
          if (await read(response)) {
            handlers.status("closed");
            return;
          }
        }
      } catch {
        // A dropped connection: try again after `retry`, as EventSource would.
      }
      if (closed) return;
      handlers.status("connecting");
      await new Promise((resolve) => setTimeout(resolve, retry));
    }
  })();

  return {
    close: () => {
      closed = true;
      if (controller) controller.abort();
    },
  };
}
