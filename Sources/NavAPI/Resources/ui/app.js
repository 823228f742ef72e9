// navd's reference client: create or attach to a session, draw its stage, drive it, follow it.
//
// The session id lives in the URL fragment (/ui/#<id>); its tokens live in this browser's
// localStorage, keyed by id, so another window on the same URL attaches to the same session and
// a reload keeps it. No token goes into a URL: every request, the event stream's too, is sent by
// the JavaScript client (navd-client.js, clients/js/README.md) with the token in its header.

import { NavClient, NavProblem } from "./navd-client.js";
import { h, $, replace } from "./dom.js";
import { renderStage, renderActions, commandsOf } from "./stage.js";
import { Timeline } from "./timeline.js";
import { Diagram } from "./diagram.js";
import { HistorySlider } from "./history.js";

const SESSION_ID = /^[0-9a-f]{32}$/;
const NO_ACTIONS = { links: [], exit: false, back: 0 };
/** navd, at this page's origin. */
const navd = new NavClient();

// ---- Tokens kept in this browser ---------------------------------------------------------------

const saved = {
  key: "navd.sessions",
  all() {
    try {
      const value = JSON.parse(localStorage.getItem(this.key) || "{}");
      return value && typeof value === "object" ? value : {};
    } catch {
      return {};
    }
  },
  get(id) {
    return this.all()[id] || null;
  },
  put(id, entry) {
    const all = this.all();
    all[id] = { ...(all[id] || {}), ...entry, savedAt: Date.now() };
    localStorage.setItem(this.key, JSON.stringify(all));
  },
  forget(id) {
    const all = this.all();
    delete all[id];
    localStorage.setItem(this.key, JSON.stringify(all));
  },
};

// ---- The attached session ----------------------------------------------------------------------

const timeline = new Timeline($("timeline"));
const diagram = new Diagram($("diagram"));
const history = new HistorySlider((view) => {
  if (!session) return;
  session.past = view;
  redraw();
});

/**
 * `{id, token, watchToken, remote, readOnly, view, past, graph, stream, ended}` while attached,
 * else null. `remote` is the session on navd (navd-client.js), acted on with the token, or read
 * with the watch token when this browser holds only that. `view` is the session now; `past`, a
 * past version the history slider shows instead.
 */
let session = null;

async function attach(id, entry) {
  detach();
  const current = { id, token: entry.token || null, watchToken: entry.watchToken || null, view: null, past: null, graph: null, stream: null, ended: false };
  current.readOnly = !current.token;
  current.remote = navd.session(id, current.token || current.watchToken);
  session = current;
  timeline.clear();
  showSession();
  setLive("connecting");
  let view;
  try {
    view = await current.remote.view();
  } catch (problem) {
    if (session !== current) return;
    session = null;
    showStart();
    showStartError(
      problem.code === "unauthorized"
        ? `Session ${id} refused this browser's token: it was deleted or has expired, or the token is wrong.`
        : `Session ${id}: ${problem.code} — ${problem.detail}`,
      id,
    );
    return;
  }
  if (session !== current) return;
  applyView(view);
  history.attach(current.remote, view.version);
  try {
    const page = await current.remote.events({ after: 0, limit: 1000 });
    if (session === current && page) timeline.add(page.events);
  } catch {
    // The log is a convenience: the stage works without it.
  }
  if (session === current) follow();
}

function detach() {
  if (session && session.stream) session.stream.close();
  session = null;
  history.detach();
}

/**
 * Follows the session over its event stream (`watch` of navd-client.js), after the last event
 * the timeline holds: it reconnects by itself after a drop or a silence, and stops on an end or a
 * refusal.
 */
function follow() {
  const current = session;
  if (current.stream) current.stream.close();
  const controller = new AbortController();
  current.stream = { close: () => controller.abort() };
  const messages = current.remote.watch({
    after: timeline.lastSeq,
    signal: controller.signal,
    onState: (state) => session === current && !current.ended && setLive(state),
  });
  (async () => {
    try {
      for await (const message of messages) {
        if (session !== current) return;
        if (message.type === "view") applyView(message.view);
        else if (message.type === "lifecycle") timeline.add([message.event]);
        else if (message.reason === "deleted" || message.reason === "expired") ended(message.reason);
        else setLive("closed", `The stream ended (${message.reason}).`);
      }
    } catch (problem) {
      if (session === current && !current.ended && !controller.signal.aborted) setLive("closed", `The stream stopped: ${problem.code} — ${problem.detail}`);
    }
  })();
}

/** Takes a view of the session now, unless an answer or message already brought a newer one. */
function applyView(view, force = false) {
  if (!session || !view) return;
  if (session.view && view.version < session.view.version) return;
  // The same version again (the stream's view after this window's own answer): drawn already,
  // and drawing it again would clear a link's half-typed params.
  if (!force && session.view && view.version === session.view.version) return;
  session.view = view;
  if (!session.ended) saved.put(session.id, { graph: view.graph.name, path: view.path });
  history.follow(view.version);
  if (!session.past) draw(view);
}

/** Draws what is shown again: the past version the slider is at, or now. */
function redraw() {
  if (session && (session.past || session.view)) draw(session.past || session.view);
}

/** Draws a view: the session now, or (`session.past`) as it was, with nothing to press. */
function draw(view) {
  const past = session.past === view;
  loadGraph(session, view.graph);
  document.body.classList.toggle("past", past);
  $("current-path").textContent = view.path;
  $("current-version").textContent = past ? `v${view.version} of ${session.view.version}` : `v${view.version}`;
  $("current-pending").hidden = !view.pending;
  $("pending-path").textContent = view.pending || "";
  $("bar-path").textContent = view.path;
  $("bar-path").title = `${view.path} — version ${view.version}`;
  $("session-graph").textContent = `${view.graph.name} v${view.graph.version}`;
  replace($("stage"), renderStage(view, session.graph));
  replace(
    $("actions"),
    renderActions(view.actions || NO_ACTIONS, session.readOnly || session.ended || past, {
      link: (name, params) => change(`link ${name}`, () => session.remote.link(name, params)),
      back: (count) => change(count > 1 ? `back ${count}` : "back", () => session.remote.back({ count })),
      exit: () => change("exit", () => session.remote.exit()),
      command: (name, args) => {
        const top = view.screens[view.screens.length - 1];
        return change(`command ${name}`, () => session.remote.command(top.id, name, args));
      },
    }, view.screens && view.screens.length ? commandsOf(session.graph, view.screens[view.screens.length - 1].scene) : []),
  );
  const context = view.context && Object.keys(view.context).length ? JSON.stringify(view.context, null, 2) : "{}";
  $("session-context").textContent = context;
  diagram.highlight(view);
  document.title = `${view.path} — navd`;
}

/**
 * The graph document (it names a tabs scene's tabs) and the diagram of the session's graph
 * version, fetched again only when the version changes (an upgrade).
 */
function loadGraph(current, { name, version }) {
  trafficGraph = name;
  const key = `${name}@${version}`;
  if (current.graphKey === key) return;
  current.graphKey = key;
  diagram.load(name, version);
  navd.graph(name, { version }).then(
    (answer) => {
      if (session !== current || current.graphKey !== key) return;
      // `{name, version, document}`: the document is the graph as uploaded.
      current.graph = answer && answer.document && typeof answer.document === "object" ? answer.document : null;
      renderExamples(current.graph);
      redraw();
    },
    () => {},
  );
}

/**
 * Applies one change; its answer is drawn at once (the stream brings the same view later).
 * Answers whether it was applied.
 */
async function change(what, send) {
  if (!session || session.readOnly || session.ended) return false;
  const current = session;
  // A change applies to the session now: leave the past the slider shows first.
  if (current.past) history.toNow();
  // The version this change was made from: the stream may bring the new view before the answer.
  const before = current.view ? current.view.version : 0;
  document.body.classList.add("busy");
  try {
    const answer = await send();
    if (session !== current) return false;
    const noOp = answer.version === before;
    applyView(answer, true);
    timeline.add(answer.events);
    clearRefusal();
    if (noOp) showNote(`${what}: already there — nothing changed`);
    return true;
  } catch (problem) {
    if (session === current) showRefusal(what, problem);
    return false;
  } finally {
    document.body.classList.remove("busy");
  }
}

function ended(reason) {
  session.ended = true;
  if (session.stream) session.stream.close();
  saved.forget(session.id);
  history.freeze();
  setLive("ended", `This session ended (${reason}).`);
  $("ended").hidden = false;
  $("ended-reason").textContent = reason;
  for (const control of document.querySelectorAll("#path-form input, #path-form button, #context-form input, #context-form button")) control.disabled = true;
  redraw();
}

// ---- Refusals, shown next to the path bar ----------------------------------------------------

function showRefusal(what, problem) {
  const box = $("refusal");
  const input = $("path-input");
  const parts = [h("span", { class: "refusal-what", text: `${what} refused` }), " ", h("code", { class: "refusal-code", text: problem.code || "error" }), " ", h("span", { class: "refusal-detail", text: problem.detail || "" })];
  if (problem.code === "invalid_path" && problem.offset !== null && what.startsWith("navigate")) {
    const path = what.slice("navigate ".length);
    const at = Math.min(problem.offset, path.length);
    parts.push(
      h(
        "p",
        { class: "refusal-path" },
        h("code", {}, path.slice(0, at), h("mark", { title: `character ${problem.offset}`, text: path.slice(at, at + 1) || " " }), path.slice(at + 1)),
        h("span", { class: "muted", text: ` at offset ${problem.offset}` }),
      ),
    );
    input.setAttribute("aria-invalid", "true");
    input.focus();
    input.setSelectionRange(at, Math.min(at + 1, input.value.length));
  }
  if (problem.param) parts.push(h("span", { class: "muted", text: ` (param ${problem.param})` }));
  if (problem.pointer) parts.push(h("span", { class: "muted", text: ` (at ${problem.pointer})` }));
  if (problem.code === "confirmation_required" && problem.confirmation && !session.readOnly) {
    // "You have unsaved changes — leave?": the server keeps the question, this page only asks it.
    const token = problem.confirmation.token;
    parts.push(
      " ",
      h("button", { type: "button", id: "confirm-leave", class: "danger", on: { click: () => change(`${what} (confirmed)`, () => session.remote.confirm(token)) } }, "Leave anyway"),
    );
  }
  replace(box, parts);
  box.className = "refusal";
  box.hidden = false;
}

function showNote(text) {
  const box = $("refusal");
  replace(box, h("span", { text }));
  box.className = "note";
  box.hidden = false;
}

function clearRefusal() {
  $("refusal").hidden = true;
  $("path-input").removeAttribute("aria-invalid");
}

// ---- Page states -------------------------------------------------------------------------------

const LIVE_TEXT = { connecting: "connecting…", live: "live", closed: "stream closed", "not live": "not live", ended: "ended" };

function setLive(status, explanation = "") {
  const badge = $("live");
  badge.textContent = LIVE_TEXT[status] || status;
  badge.dataset.status = status;
  badge.title = explanation || (status === "live" ? "following the session's event stream" : "");
  $("reconnect").hidden = !(status === "closed" && session && !session.ended);
}

function showSession() {
  $("start-view").hidden = true;
  $("session-view").hidden = false;
  $("session-bar").hidden = false;
  $("ended").hidden = true;
  $("session-id").textContent = `${session.id.slice(0, 8)}…`;
  $("session-id").title = session.id;
  $("session-id").dataset.id = session.id;
  $("bar-path").textContent = "";
  $("session-mode").textContent = session.readOnly ? "read-only" : "read-write";
  $("session-mode").dataset.mode = session.readOnly ? "read" : "write";
  $("open-window").href = `#${session.id}`;
  $("delete-session").hidden = session.readOnly;
  $("delete-session").textContent = "End session";
  delete $("delete-session").dataset.armed;
  for (const control of document.querySelectorAll("#path-form input, #path-form button, #context-form input, #context-form button")) control.disabled = session.readOnly;
  $("path-input").value = "";
  renderExamples(null);
  replace($("stage"));
  replace($("actions"));
  $("current-path").textContent = "…";
  $("current-version").textContent = "";
  clearRefusal();
}

function showStart() {
  detach();
  $("start-view").hidden = false;
  $("session-view").hidden = true;
  $("session-bar").hidden = true;
  $("start-error").hidden = true;
  document.title = "navd";
  renderKnown();
}

function showStartError(text, id = "") {
  const box = $("start-error");
  box.textContent = text;
  box.hidden = false;
  if (id) $("attach-id").value = id;
}

/** The sessions this browser holds tokens for. */
function renderKnown() {
  const entries = Object.entries(saved.all()).sort((a, b) => (b[1].savedAt || 0) - (a[1].savedAt || 0));
  const list = $("known-list");
  if (!entries.length) {
    replace(list, h("li", { class: "muted", text: "none yet" }));
    return;
  }
  replace(
    list,
    entries.map(([id, entry]) =>
      h(
        "li",
        { class: "known" },
        h("a", { href: `#${id}`, class: "known-link" }, h("code", { text: id.slice(0, 8) }), " ", entry.graph || "session", entry.path ? ` at ${entry.path}` : ""),
        h("span", { class: "muted", text: entry.token ? " read-write" : " read-only" }),
        h("button", {
          type: "button",
          class: "quiet",
          text: "Forget",
          "aria-label": `forget session ${id}`,
          on: {
            click: () => {
              saved.forget(id);
              renderKnown();
            },
          },
        }),
      ),
    ),
  );
}

/** The page follows its fragment: `#<id>` attaches, anything else shows the start. */
function route() {
  const id = decodeURIComponent(location.hash.slice(1));
  if (!SESSION_ID.test(id)) {
    showStart();
    return;
  }
  if (session && session.id === id) return;
  const entry = saved.get(id);
  if (entry && (entry.token || entry.watchToken)) {
    attach(id, entry);
    return;
  }
  showStart();
  showStartError(`This browser holds no token for session ${id}: paste its token or watch token to attach.`, id);
  $("attach-token").focus();
}

// ---- Forms -------------------------------------------------------------------------------------

async function loadGraphs() {
  const select = $("create-graph");
  try {
    const answer = await navd.graphs();
    const graphs = (answer && answer.graphs) || [];
    replace(select, graphs.map((graph) => h("option", { value: graph.name, dataset: { start: graph.start }, text: `${graph.name} (v${graph.version}, starts at ${graph.start})` })));
    if (!graphs.length) replace(select, h("option", { value: "", text: "no graphs loaded" }));
    // The start field shows the chosen graph's own start.
    const showStart = () => {
      const chosen = select.selectedOptions[0];
      $("create-start").placeholder = (chosen && chosen.dataset.start) || "";
    };
    select.addEventListener("change", showStart);
    showStart();
  } catch (problem) {
    replace(select, h("option", { value: "", text: `graphs unavailable: ${problem.code}` }));
  }
}

$("create-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = $("create-error");
  error.hidden = true;
  const body = {};
  const graph = $("create-graph").value;
  if (graph) body.graph = graph;
  const start = $("create-start").value.trim();
  if (start) body.start = start;
  const contextText = $("create-context").value.trim();
  if (contextText) {
    let context;
    try {
      context = JSON.parse(contextText);
    } catch (parseError) {
      error.textContent = `Context is not JSON: ${parseError.message}`;
      error.hidden = false;
      $("create-context").focus();
      return;
    }
    if (!context || typeof context !== "object" || Array.isArray(context)) {
      error.textContent = "Context must be a JSON object.";
      error.hidden = false;
      return;
    }
    body.context = context;
  }
  try {
    const created = await navd.createSession(body);
    saved.put(created.id, { token: created.token, watchToken: created.watchToken || null, graph: created.graph.name });
    location.hash = created.id;
  } catch (problem) {
    replace(error, h("code", { text: problem.code }), " ", problem.detail || "");
    error.hidden = false;
  }
});

$("attach-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = $("attach-id").value.trim().toLowerCase();
  const token = $("attach-token").value.trim();
  if (!SESSION_ID.test(id)) {
    showStartError("A session id is 32 lowercase hex digits.");
    return;
  }
  const watchOnly = $("attach-kind-watch").checked;
  // Merged into what this browser holds: a watch token given for a session it can already
  // drive does not take the write token away.
  saved.put(id, watchOnly ? { watchToken: token } : { token });
  $("attach-token").value = "";
  if (location.hash === `#${id}`) route();
  else location.hash = id;
});

$("path-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const path = $("path-input").value.trim();
  if (!path || !session) return;
  change(`navigate ${path}`, () => session.remote.navigate(path)).then((applied) => {
    if (applied && $("path-input").value.trim() === path) $("path-input").value = "";
  });
});

$("path-input").addEventListener("input", () => $("path-input").removeAttribute("aria-invalid"));

$("context-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("context-input").value.trim();
  if (!text || !session) return;
  let patch;
  try {
    patch = JSON.parse(text);
  } catch (error) {
    showRefusal("context", { code: "malformed_json", detail: `not JSON: ${error.message}` });
    return;
  }
  change("context", () => session.remote.context(patch)).then((applied) => {
    if (applied) $("context-input").value = "";
  });
});

/** Paths to try, from the graph: up one, its start, and its global links that take no params. */
function renderExamples(graph) {
  const paths = [".."];
  if (graph && typeof graph.start === "string") paths.push(graph.start.startsWith("^") ? graph.start : `^${graph.start}`);
  for (const link of Object.values((graph && graph.links) || {})) {
    if (link && typeof link.path === "string" && !link.path.includes("{") && !paths.includes(link.path)) paths.push(link.path);
  }
  replace(
    $("path-examples"),
    h("span", { class: "muted", text: "try: " }),
    paths.slice(0, 6).map((path) =>
      h("button", {
        type: "button",
        class: "chip",
        text: path,
        "aria-label": `put ${path} in the path bar`,
        on: {
          click: () => {
            $("path-input").value = path;
            $("path-input").focus();
          },
        },
      }),
    ),
  );
}

$("leave").addEventListener("click", () => {
  location.hash = "";
});

$("reconnect").addEventListener("click", () => session && follow());

$("delete-session").addEventListener("click", async () => {
  const button = $("delete-session");
  if (!session || session.readOnly) return;
  // Two clicks: the first arms the button for a few seconds (no confirm() dialog).
  if (!button.dataset.armed) {
    button.dataset.armed = "1";
    button.textContent = "Really end it?";
    setTimeout(() => {
      delete button.dataset.armed;
      button.textContent = "End session";
    }, 4000);
    return;
  }
  try {
    await session.remote.delete();
    ended("deleted");
  } catch (problem) {
    showRefusal("end session", problem);
  }
});

window.addEventListener("hashchange", route);
loadGraphs();
route();

// Exposed for the browser test and for poking at from the console; nothing depends on it.
window.navdClient = { get session() { return session; }, NavProblem };

// The graph's traffic (GET /v1/graphs/{name}/traffic, docs/design.md, "Traffic and funnels"): it
// shows what every user did, so it needs the admin token, asked here and kept nowhere.
let trafficGraph = null;

$("traffic-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const root = $("traffic");
  if (!trafficGraph) return;
  const since = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
  replace(root, h("p", { class: "muted", text: "counting…" }));
  let answer;
  try {
    answer = await navd.traffic(trafficGraph, { since, token: $("traffic-token").value });
  } catch (problem) {
    replace(root, h("p", { class: "muted", text: `no traffic: ${problem.code} — ${problem.detail}` }));
    return;
  }
  const scenes = Object.entries(answer && answer.scenes ? answer.scenes : {}).sort((a, b) => b[1] - a[1]);
  const edges = Array.isArray(answer && answer.edges) ? answer.edges.slice(0, 10) : [];
  replace(
    root,
    h("p", { class: "muted", text: `${scenes.reduce((sum, [, views]) => sum + views, 0)} views since ${answer.since}` }),
    h("ol", { class: "traffic-scenes", "aria-label": "views by scene" }, ...scenes.map(([scene, views]) =>
      h("li", { "data-scene": scene, text: `${scene}: ${views}` }))),
    h("ol", { class: "traffic-edges", "aria-label": "moves between scenes, most first" }, ...edges.map((edge) =>
      h("li", { text: `${edge.from} → ${edge.to}: ${edge.count}` }))),
  );
  // And on the graph: the same counts drawn over the diagram of the version shown.
  const shown = session && (session.past || session.view);
  if (shown && shown.graph.name === trafficGraph) diagram.load(trafficGraph, shown.graph.version, { since, token: $("traffic-token").value });
});
