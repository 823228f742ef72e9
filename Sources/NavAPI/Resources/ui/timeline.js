// The event timeline: every lifecycle event the client has seen, once each (by `seq`),
// grouped by the transition it belongs to, newest transition first.

import { h, replace } from "./dom.js";

/** Events kept for display; older transitions drop off the bottom. */
const LIMIT = 400;

export class Timeline {
  constructor(root) {
    this.root = root;
    this.events = new Map();
  }

  /** The highest seq seen (0 before any): where a stream resumes. */
  get lastSeq() {
    let last = 0;
    for (const seq of this.events.keys()) if (seq > last) last = seq;
    return last;
  }

  clear() {
    this.events.clear();
    this.render();
  }

  /** Adds events (duplicates by seq are ignored: the stream and an answer carry the same ones). */
  add(events) {
    if (!Array.isArray(events) || !events.length) return;
    let added = false;
    for (const event of events) {
      if (!event || !Number.isInteger(event.seq) || this.events.has(event.seq)) continue;
      this.events.set(event.seq, event);
      added = true;
    }
    if (!added) return;
    if (this.events.size > LIMIT) {
      const seqs = [...this.events.keys()].sort((a, b) => a - b);
      for (const seq of seqs.slice(0, this.events.size - LIMIT)) this.events.delete(seq);
    }
    this.render();
  }

  render() {
    const sorted = [...this.events.values()].sort((a, b) => a.seq - b.seq);
    const groups = [];
    for (const event of sorted) {
      const last = groups[groups.length - 1];
      if (last && last.transition === event.transition) last.events.push(event);
      else groups.push({ transition: event.transition, events: [event] });
    }
    if (!groups.length) {
      replace(this.root, h("li", { class: "muted", text: "no events yet" }));
      return;
    }
    replace(this.root, groups.reverse().map(group));
  }
}

function group({ transition, events }) {
  const start = events.find((event) => event.type === "transitionStart");
  const end = events.find((event) => event.type === "transitionEnd");
  const from = (start && start.from) || (end && end.from);
  const to = (end && end.to) || (start && start.to);
  const title = from !== undefined || to !== undefined ? [from ?? "", "→", to ?? ""] : [events[0].type];
  return h(
    "li",
    { class: "tl-group", dataset: { transition: String(transition) } },
    h("p", { class: "tl-head" }, h("span", { class: "tl-transition", text: `transition ${transition}` }), " ", h("span", { class: "tl-route" }, title.map((part, i) => h("code", { class: i === 1 && title.length === 3 ? "tl-arrow" : null, text: part })))),
    h(
      "ol",
      { class: "tl-events" },
      events.map((event) =>
        h(
          "li",
          { class: ["tl-event", `tl-${event.type}`], dataset: { seq: String(event.seq), type: event.type } },
          h("span", { class: "tl-seq", text: `#${event.seq}` }),
          h("span", { class: "tl-type", text: event.type }),
          h("span", { class: ["tl-scene", event.scene == null && "muted"], title: event.scene == null ? "about the session as a whole" : null, text: event.scene ?? "—" }),
          h("span", { class: "tl-screen", text: event.screen ?? "" }),
          extra(event),
        ),
      ),
    ),
  );
}

/** The optional fields later event types carry (keys, command, result value, versions). */
function extra(event) {
  const parts = [];
  if (Array.isArray(event.keys)) parts.push(`keys ${event.keys.join(", ")}`);
  if (event.command) parts.push(`command ${event.command}`);
  if (event.type === "result" && event.value !== undefined) parts.push(`from ${event.from}: ${JSON.stringify(event.value)}`);
  if (Number.isInteger(event.fromVersion)) parts.push(`v${event.fromVersion} → v${event.toVersion}`);
  return parts.length ? h("span", { class: "tl-extra", text: parts.join(" · ") }) : null;
}
