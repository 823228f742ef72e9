// The stage drawn as a person reads it, and the buttons for what its top screen can do.
//
// Screens are cards from the root down to the top. A modal (`!`) starts a new layer: a sheet
// that covers everything under it (the covered layers are dimmed). A tabs screen holds the
// selected tab's screens inside its card, under its tab bar, and shows the stacks its other
// tabs saved in a muted row. The top screen is emphasised, with its params, state and deps.

import { h, pretty, isEmpty, paramText } from "./dom.js";

const SEGUES = {
  "/": { label: "push", title: "pushed onto the navigation stack (/)" },
  "!": { label: "modal", title: "presented modally over everything under it (!)" },
  "#": { label: "tab", title: "the selected tab of the tab bar above (#)" },
};

/**
 * The stage of a session view. `graph` (the graph document, or null) names a tabs scene's
 * tabs; without it the tab bar shows the tabs the view mentions.
 */
export function renderStage(view, graph) {
  const screens = Array.isArray(view.screens) ? view.screens : [];
  const top = screens.length - 1;
  // Layers: the app, then one per modal, each starting at its `!` screen.
  const layers = [];
  screens.forEach((screen, index) => {
    if (index === 0 || screen.segue === "!") layers.push([]);
    layers[layers.length - 1].push(index);
  });
  const stage = h("div", { class: "stage", "aria-label": "screens, root to top" });
  layers.forEach((indices, layer) => {
    const isModal = layer > 0;
    const covered = layer < layers.length - 1;
    const first = screens[indices[0]];
    const label = isModal
      ? `modal layer ${layer}${first.container === "navigation" ? ", with its own navigation stack" : ""}`
      : "the app";
    stage.append(
      h(
        "section",
        { class: ["layer", isModal ? "layer-modal" : "layer-app", covered && "layer-covered"], "aria-label": label },
        isModal && h("p", { class: "layer-caption", text: first.container === "navigation" ? "modal · own navigation (!/)" : "modal (!)" }),
        run(screens, indices, top, graph),
      ),
    );
  });
  return stage;
}

/** The cards of one layer; a tabs screen takes the rest of the layer into its card. */
function run(screens, indices, top, graph) {
  const nodes = [];
  for (let position = 0; position < indices.length; position++) {
    const index = indices[position];
    const screen = screens[index];
    const node = card(screen, index, index === top);
    nodes.push(node);
    if (screen.tabs && typeof screen.tabs === "object") {
      const inside = indices.slice(position + 1);
      node.append(tabBar(screen, graph), h("div", { class: "tab-content" }, inside.length ? run(screens, inside, top, graph) : h("p", { class: "muted", text: "no tab selected" })));
      const saved = savedStacks(screen);
      if (saved) node.append(saved);
      break;
    }
  }
  return nodes;
}

function card(screen, index, isTop) {
  const segue = index === 0 ? { label: "root", title: "the root of the stage" } : SEGUES[screen.segue] || { label: screen.segue, title: "" };
  return h(
    "article",
    {
      class: ["card", `card-${segue.label}`, isTop && "card-top", screen.tabs && "card-tabs"],
      dataset: { screen: screen.id, scene: screen.scene },
      "aria-label": `${screen.scene}, screen ${screen.id}${isTop ? ", on top" : ""}`,
      "aria-current": isTop ? "true" : false,
    },
    h(
      "header",
      { class: "card-head" },
      h("span", { class: ["segue", `segue-${segue.label}`], title: segue.title, text: segue.label }),
      h("h3", { class: "scene", text: screen.scene }),
      h("span", { class: "screen-id", title: "screen id", text: screen.id }),
      screen.container === "navigation" && index > 0 && h("span", { class: "badge", text: "own navigation" }),
      isTop && h("span", { class: "badge badge-top", text: "top" }),
    ),
    params(screen.params),
    isTop ? [json("state", screen.state, true), json("deps", screen.deps, true)] : details(screen),
  );
}

function params(values) {
  if (isEmpty(values)) return h("p", { class: "params params-none", text: "no params" });
  return h(
    "dl",
    { class: "params" },
    Object.keys(values)
      .sort()
      .map((key) => h("div", { class: "param" }, h("dt", { text: key }), h("dd", { text: paramText(values[key]) }))),
  );
}

function json(title, value, open) {
  if (isEmpty(value)) return open ? h("p", { class: "json-none muted", text: `${title}: {}` }) : null;
  return h("section", { class: "json" }, h("h4", { text: title }), h("pre", { text: pretty(value) }));
}

/** State and deps of a screen under the top, folded away. */
function details(screen) {
  const parts = [json("state", screen.state, false), json("deps", screen.deps, false)].filter(Boolean);
  if (!parts.length) return null;
  const names = [!isEmpty(screen.state) && "state", !isEmpty(screen.deps) && "deps"].filter(Boolean).join(" and ");
  return h("details", { class: "more" }, h("summary", { text: names }), parts);
}

/** The tabs of a tabs screen: the graph's list, or what the view mentions. */
function tabNames(screen, graph) {
  const declared = graph && graph.scenes && graph.scenes[screen.scene] && graph.scenes[screen.scene].tabs;
  if (Array.isArray(declared) && declared.length) return declared;
  const names = new Set();
  if (screen.tabs.selected) names.add(screen.tabs.selected);
  for (const name of Object.keys(screen.tabs.saved || {})) names.add(name);
  return [...names];
}

function tabBar(screen, graph) {
  const saved = screen.tabs.saved || {};
  return h(
    "ul",
    { class: "tabbar", "aria-label": `tabs of ${screen.scene}` },
    tabNames(screen, graph).map((name) => {
      const selected = name === screen.tabs.selected;
      return h(
        "li",
        { class: ["tab", selected && "tab-selected", saved[name] && "tab-saved"], "aria-current": selected ? "page" : false, dataset: { tab: name } },
        name,
        !selected && saved[name] && h("span", { class: "tab-note", text: ` · ${saved[name].length} saved` }),
      );
    }),
  );
}

/** The stacks the other tabs keep, muted: what switching back to them restores. */
function savedStacks(screen) {
  const saved = screen.tabs.saved || {};
  const names = Object.keys(saved).filter((name) => Array.isArray(saved[name]) && saved[name].length);
  if (!names.length) return null;
  return h(
    "section",
    { class: "saved", "aria-label": "saved tab stacks" },
    h("h4", { text: "saved stacks" }),
    names.map((name) =>
      h(
        "div",
        { class: "saved-stack", dataset: { tab: name } },
        h("span", { class: "saved-tab", text: `#${name}` }),
        h(
          "ol",
          { class: "mini-cards" },
          saved[name].map((inner) => h("li", { class: "mini-card", title: `screen ${inner.id}` }, inner.scene, paramsSuffix(inner.params))),
        ),
      ),
    ),
  );
}

function paramsSuffix(values) {
  if (isEmpty(values)) return null;
  const text = Object.keys(values)
    .sort()
    .map((key) => `${key}=${paramText(values[key])}`)
    .join(",");
  return h("span", { class: "mini-params", text: `(${text})` });
}

/**
 * Buttons for the view's `actions` (docs/design.md, "Actions"): one per link (a small form when it takes
 * params), Back (with a count up to `actions.back`) and Exit. `handlers`: link(name, params),
 * back(count), exit(). All disabled when `readOnly`.
 */
export function renderActions(actions, readOnly, handlers, commands = []) {
  const links = Array.isArray(actions.links) ? actions.links : [];
  const back = Number.isInteger(actions.back) ? actions.back : 0;
  const linkNodes = links.map((link) => {
    const names = Array.isArray(link.params) ? link.params : [];
    if (!names.length) {
      return h("button", {
        type: "button",
        class: "link-button",
        dataset: { link: link.name },
        disabled: readOnly,
        text: link.name,
        on: { click: () => handlers.link(link.name, {}) },
      });
    }
    const form = h(
      "form",
      { class: "link-form", dataset: { link: link.name }, "aria-label": `link ${link.name}` },
      names.map((param) => {
        const id = `link-${link.name}-${param}`.replace(/[^A-Za-z0-9_-]/g, "_");
        return h("span", { class: "link-param" }, h("label", { for: id, text: param }), h("input", { id, name: param, required: true, size: 6, autocomplete: "off", disabled: readOnly }));
      }),
      h("button", { type: "submit", class: "link-button", disabled: readOnly, text: link.name }),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const values = {};
      for (const param of names) values[param] = form.elements.namedItem(param).value;
      handlers.link(link.name, values);
    });
    return form;
  });

  const count = h(
    "select",
    { id: "back-count", "aria-label": "screens to go back", disabled: readOnly || back < 2, hidden: back < 2 },
    Array.from({ length: Math.max(back, 1) }, (_, i) => h("option", { value: i + 1, text: `${i + 1}` })),
  );
  const backButton = h("button", {
    type: "button",
    id: "back",
    disabled: readOnly || back < 1,
    title: back < 1 ? "nothing to go back to" : `up to ${back} screen${back > 1 ? "s" : ""}`,
    text: "◀ Back",
    on: { click: () => handlers.back(Number(count.value) || 1) },
  });
  const exitButton = h("button", {
    type: "button",
    id: "exit",
    disabled: readOnly || !actions.exit,
    title: actions.exit ? "exit the top screen" : "the top screen cannot be exited",
    text: "Exit ✕",
    on: { click: () => handlers.exit() },
  });

  return h(
    "div",
    { class: "actions" },
    h("div", { class: "action-group links", role: "group", "aria-label": "links" }, h("span", { class: "group-label", text: "links" }), linkNodes.length ? linkNodes : h("span", { class: "muted", text: "none" })),
    commands.length
      ? h("div", { class: "action-group commands", role: "group", "aria-label": "commands of the top screen" }, h("span", { class: "group-label", text: "commands" }), commands.map((command) => commandNode(command, readOnly, handlers)))
      : null,
    h("div", { class: "action-group moves", role: "group", "aria-label": "back and exit" }, backButton, count, exitButton),
  );
}

/**
 * A button for a command of the top screen's scene (its graph's `commands`), with an input for
 * each `{"$arg": name}` of its patch. A value that reads as JSON is sent as that JSON, anything
 * else as a string. The server checks the command's guards; a refusal shows by the path bar.
 */
function commandNode({ name, args }, readOnly, handlers) {
  if (!args.length) {
    return h("button", { type: "button", class: "command-button", dataset: { command: name }, disabled: readOnly, text: name, on: { click: () => handlers.command(name, {}) } });
  }
  const form = h(
    "form",
    { class: "link-form", dataset: { command: name }, "aria-label": `command ${name}` },
    args.map((arg) => {
      const id = `command-${name}-${arg}`.replace(/[^A-Za-z0-9_-]/g, "_");
      return h("span", { class: "link-param" }, h("label", { for: id, text: arg }), h("input", { id, name: arg, required: true, size: 8, autocomplete: "off", disabled: readOnly }));
    }),
    h("button", { type: "submit", class: "command-button", disabled: readOnly, text: name }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = {};
    for (const arg of args) {
      const text = form.elements.namedItem(arg).value;
      try {
        values[arg] = JSON.parse(text);
      } catch {
        values[arg] = text;
      }
    }
    handlers.command(name, values);
  });
  return form;
}

/** The commands of a scene in a graph document, each with the names of its patch's `$arg`s. */
export function commandsOf(graph, sceneName) {
  const scene = graph && graph.scenes && graph.scenes[sceneName];
  const commands = scene && scene.commands && typeof scene.commands === "object" ? scene.commands : {};
  const argNames = (value, found) => {
    if (value && typeof value === "object") {
      const keys = Object.keys(value);
      if (!Array.isArray(value) && keys.length === 1 && keys[0] === "$arg" && typeof value.$arg === "string") found.add(value.$arg);
      else for (const key of keys) argNames(value[key], found);
    }
    return found;
  };
  return Object.keys(commands)
    .sort()
    .map((name) => ({ name, args: [...argNames(commands[name] && commands[name].patch, new Set())].sort() }));
}
