// navd's HTTP API and its event stream, as the client uses them (openapi.yaml has the contract).

/** A refusal: navd's problem+json (`code`, `detail`, maybe `offset`/`param`), or a network failure. */
export class Problem extends Error {
  constructor(status, body) {
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || (status ? `http_${status}` : "network");
    this.detail = body.detail || body.title || this.message;
    this.offset = Number.isInteger(body.offset) ? body.offset : null;
    this.param = typeof body.param === "string" ? body.param : null;
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
  diagram: (name) => request("GET", `/v1/graphs/${encodeURIComponent(name)}/diagram?format=svg`, { accept: "image/svg+xml" }),
  create: (body) => request("POST", "/v1/sessions", { body }),
  view: (id, token) => request("GET", sessionPath(id), { token }),
  remove: (id, token) => request("DELETE", sessionPath(id), { token }),
  events: (id, token, after) => request("GET", `${sessionPath(id)}/events?after=${after}&limit=1000`, { token }),
  navigate: (id, token, path) => request("POST", `${sessionPath(id)}/navigate`, { token, body: { path } }),
  link: (id, token, name, params) => request("POST", `${sessionPath(id)}/transitions`, { token, body: { name, params } }),
  back: (id, token, count) => request("POST", `${sessionPath(id)}/back`, { token, body: { count } }),
  exit: (id, token) => request("POST", `${sessionPath(id)}/exit`, { token }),
};

/**
 * Follows a session over its event stream (DESIGN §8) with the browser's EventSource, which
 * cannot send headers: the read-only watch token goes in `?access_token=` (navd refuses a write
 * token there). `after` resumes after that event seq; EventSource reconnects by itself with
 * `Last-Event-ID`. Handlers: view(view), lifecycle(event), end({reason}), status("connecting" |
 * "live" | "closed"). Answers `{close()}`.
 */
export function watch(id, watchToken, after, handlers) {
  const url = `${sessionPath(id)}/events?access_token=${encodeURIComponent(watchToken)}&after=${after}`;
  const source = new EventSource(url);
  const parse = (message) => {
    try {
      return JSON.parse(message.data);
    } catch {
      return null;
    }
  };
  handlers.status("connecting");
  source.addEventListener("open", () => handlers.status("live"));
  source.addEventListener("view", (message) => {
    const view = parse(message);
    if (view) handlers.view(view);
  });
  source.addEventListener("lifecycle", (message) => {
    const event = parse(message);
    if (event) handlers.lifecycle(event);
  });
  source.addEventListener("end", (message) => {
    source.close();
    handlers.end(parse(message) || { reason: "ended" });
    handlers.status("closed");
  });
  source.addEventListener("error", () => {
    // CONNECTING: EventSource retries on its own; CLOSED: it gave up (a refusal such as 401).
    handlers.status(source.readyState === EventSource.CLOSED ? "closed" : "connecting");
  });
  return { close: () => source.close() };
}
