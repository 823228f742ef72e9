// The graph as navd draws it (GET /v1/graphs/{name}/diagram?format=svg, docs/design.md, "Diagrams"), with the
// top screen's scene marked `current` and the other scenes on the stage marked `on-stage`.
//
// The SVG's contract: one `<g class="scene" data-scene="NAME">` per scene, edges as
// `<g class="edge link|tab|global" data-from data-to data-link>`, and its own `<style>` that
// draws `.scene.current`. It is the one piece of markup from the server the client inserts:
// navd wrote it, and it is parsed as SVG (an XML document), never as HTML.

import { NavClient } from "./navd-client.js";
import { h, replace } from "./dom.js";

const navd = new NavClient();

const SVG = "http://www.w3.org/2000/svg";

export class Diagram {
  constructor(root) {
    this.root = root;
    this.svg = null;
    this.graph = null;
    this.view = null;
  }

  /**
   * Fetches and inserts the diagram of version `version` of graph `name` (once per version); with
   * `traffic` (`{since, token}`: the admin token), the same drawing with the views since then on
   * its scenes and edges (`?traffic=`, docs/design.md, "Traffic and funnels").
   */
  async load(name, version, traffic = null) {
    const key = `${name}@${version}` + (traffic ? ` traffic since ${traffic.since}` : "");
    if (this.graph === key && this.svg) return;
    this.graph = key;
    this.svg = null;
    replace(this.root, h("p", { class: "muted", text: "drawing the graph…" }));
    let text;
    try {
      text = await navd.diagram(name, traffic ? { version, traffic: traffic.since, token: traffic.token } : { version });
    } catch (problem) {
      if (this.graph === key) replace(this.root, h("p", { class: "muted", text: `no diagram: ${problem.code} — ${problem.detail}` }));
      return;
    }
    if (this.graph !== key) return;
    const svg = parse(typeof text === "string" ? text : "");
    if (!svg) {
      replace(this.root, h("p", { class: "muted", text: "no diagram: the answer is not an SVG document" }));
      return;
    }
    this.svg = svg;
    replace(this.root, svg);
    if (this.view) this.highlight(this.view);
  }

  /** Marks the top screen's scene `current`, and every scene on the stage `on-stage`. */
  highlight(view) {
    this.view = view;
    if (!this.svg) return;
    const screens = Array.isArray(view.screens) ? view.screens : [];
    const top = screens.length ? screens[screens.length - 1].scene : null;
    const onStage = new Set(screens.map((screen) => screen.scene));
    for (const scene of this.svg.querySelectorAll(".scene")) {
      const name = scene.getAttribute("data-scene");
      scene.classList.toggle("current", name === top);
      scene.classList.toggle("on-stage", onStage.has(name) && name !== top);
      if (name === top) scene.setAttribute("aria-current", "true");
      else scene.removeAttribute("aria-current");
    }
  }
}

/**
 * The SVG root of `text`, imported into this document, or null.
 *
 * A traffic diagram widens each followed edge's pen with `style="stroke-width: Npx"`. The page's
 * policy refuses style attributes from markup (parsing one is already a violation), but not a
 * property set by script: each such width is moved to `data-pen` before parsing and set again
 * after, and any other style attribute is dropped.
 */
function parse(text) {
  const pens = text.replace(/ style="stroke-width: ([0-9.]+)px"/g, ' data-pen="$1"');
  const parsed = new DOMParser().parseFromString(pens, "image/svg+xml");
  const root = parsed.documentElement;
  if (!root || root.namespaceURI !== SVG || root.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) return null;
  // navd drew it, but a diagram is no place for code: drop scripts, foreign HTML and handlers.
  for (const node of root.querySelectorAll("script, foreignObject")) node.remove();
  for (const node of [root, ...root.querySelectorAll("*")]) {
    for (const attribute of [...node.attributes]) {
      if (/^on/i.test(attribute.name) || /^\s*javascript:/i.test(attribute.value) || attribute.name === "style") node.removeAttribute(attribute.name);
    }
  }
  const svg = document.importNode(root, true);
  for (const node of svg.querySelectorAll("[data-pen]")) {
    const width = Number(node.getAttribute("data-pen"));
    if (Number.isFinite(width)) node.style.setProperty("stroke-width", `${width}px`);
  }
  if (!svg.hasAttribute("viewBox") && svg.hasAttribute("width") && svg.hasAttribute("height")) {
    svg.setAttribute("viewBox", `0 0 ${parseFloat(svg.getAttribute("width"))} ${parseFloat(svg.getAttribute("height"))}`);
  }
  svg.setAttribute("role", "img");
  if (!svg.hasAttribute("aria-label")) svg.setAttribute("aria-label", "graph diagram");
  return svg;
}
