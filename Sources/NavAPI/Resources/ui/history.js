// The session's history as a slider (docs/design.md, "History"): drag it, or use the arrow keys,
// Home and End, to any retained version and the stage is drawn as it was then; the far right is
// now. A past version is read from navd (`GET /v1/sessions/{id}?version=V`) with the record of
// the change that made it, so the page keeps nothing of the past itself.

import { $, replace, h } from "./dom.js";

export class HistorySlider {
  /** `show(view, record)` draws a past view, or the present when both are null. */
  constructor(show) {
    this.show = show;
    this.slider = $("history-slider");
    this.at = $("history-at");
    this.now = $("history-now");
    this.box = $("history");
    this.session = null;
    this.busy = false;
    this.slider.addEventListener("input", () => this.ask());
    this.now.addEventListener("click", () => this.toNow());
  }

  /** A newly attached session (navd-client.js's) at `version`: its oldest retained version is asked once. */
  async attach(remote, version) {
    const current = { remote, oldest: version };
    this.session = current;
    this.setRange(version, version);
    this.box.hidden = false;
    this.slider.disabled = true;
    this.describe(null);
    let page;
    try {
      page = await remote.history({ after: 0, limit: 1 });
    } catch (problem) {
      if (this.session !== current) return;
      // 404 with the feed off (`--feed-retention 0`): navd keeps no history to slide through.
      replace(this.at, h("span", { class: "muted", text: problem.status === 404 ? "no history: this navd keeps no feed" : `no history: ${problem.code}` }));
      return;
    }
    if (this.session !== current) return;
    current.oldest = page && Number.isInteger(page.oldest) ? page.oldest : Number(this.slider.max);
    this.setRange(current.oldest, Number(this.slider.max));
    this.slider.disabled = false;
  }

  detach() {
    this.session = null;
    this.box.hidden = true;
  }

  /** The session moved on to `version`: the slider's far right follows, and stays there if there. */
  follow(version) {
    if (!this.session) return;
    const atNow = Number(this.slider.value) >= Number(this.slider.max);
    this.setRange(Math.min(this.session.oldest, version), version);
    if (atNow) this.slider.value = String(version);
    this.describe(atNow ? null : undefined);
  }

  /** Back to the present (before a change is sent: changes apply to now, not to the past). */
  toNow() {
    this.slider.value = this.slider.max;
    this.ask();
  }

  /** Ends the slider's use: an ended session's tokens read nothing more. */
  freeze() {
    this.slider.disabled = true;
  }

  get inPast() {
    return Number(this.slider.value) < Number(this.slider.max);
  }

  setRange(oldest, newest) {
    this.slider.min = String(oldest);
    this.slider.max = String(newest);
    this.slider.setAttribute("aria-valuetext", `version ${this.slider.value} of ${newest}`);
  }

  /**
   * Draws the version the slider is at. One request at a time: while one is out, the slider may
   * move on, and the version it rests on is asked next, so a fast drag costs a few requests.
   */
  async ask() {
    if (this.busy || !this.session) return;
    this.busy = true;
    const current = this.session;
    try {
      for (;;) {
        const version = Number(this.slider.value);
        this.slider.setAttribute("aria-valuetext", `version ${version} of ${this.slider.max}`);
        if (version >= Number(this.slider.max)) {
          this.show(null, null);
          this.describe(null);
          return;
        }
        let view;
        let record = null;
        try {
          const [past, page] = await Promise.all([
            current.remote.view({ version }),
            current.remote.history({ after: version - 1, limit: 1 }),
          ]);
          view = past;
          record = page && Array.isArray(page.changes) ? page.changes.find((change) => change.version === version) || null : null;
        } catch (problem) {
          if (this.session !== current) return;
          if (Number(this.slider.value) !== version) continue;
          replace(this.at, h("span", { class: "muted", text: `v${version}: ${problem.code} — ${problem.detail}` }));
          return;
        }
        if (this.session !== current) return;
        if (Number(this.slider.value) !== version) continue;
        this.show(view, record);
        this.describe(record, version);
        return;
      }
    } finally {
      this.busy = false;
    }
  }

  /** The label beside the slider: now, or the version shown and the change that made it. */
  describe(record, version) {
    if (record === undefined) return;
    this.now.hidden = record === null;
    if (record === null) {
      replace(this.at, h("span", { text: `now (v${this.slider.max})` }));
      return;
    }
    const time = typeof record.time === "string" ? new Date(record.time).toLocaleTimeString() : "";
    replace(
      this.at,
      h("span", { class: "history-version", text: `v${version}` }),
      " ",
      h("code", { class: "history-change", text: describeChange(record) }),
      time ? h("span", { class: "muted", text: ` ${time}` }) : null,
    );
  }
}

/** `link news(category=3)`, `navigate ^/top`, `created at /top`, `context (resumed)`, … */
export function describeChange(record) {
  const intent = record.intent && typeof record.intent === "object" ? record.intent : {};
  let text = record.kind || "change";
  if (record.kind === "create") text = `created at ${record.to && record.to.path}`;
  else if (record.kind === "navigate") text = `navigate ${intent.navigate}`;
  else if (record.kind === "link") {
    const params = Object.entries(intent.params || {}).map(([key, value]) => `${key}=${value}`);
    text = `link ${intent.link}${params.length ? `(${params.join(",")})` : ""}`;
  } else if (record.kind === "back") text = `back ${intent.back}`;
  else if (record.kind === "command" && intent.command) text = `command ${intent.command.name}`;
  if (record.redirected) text += ` (redirected, waiting for ${record.redirected})`;
  if (record.resumed) text += " (resumed)";
  return text;
}
