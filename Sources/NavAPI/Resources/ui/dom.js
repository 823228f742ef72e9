// Building DOM nodes. Every string becomes a text node or an attribute value, never markup:
// what the server sends (scene names, params, state, problem details) cannot inject anything.

/**
 * Makes an element. `attrs`: `class` (string or array, falsy items dropped), `text`,
 * `dataset` (object), `on` (event name → handler), `hidden`/`disabled`/… booleans, any other
 * attribute as a string. Children: nodes, strings (text), arrays of those; null/false skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") {
      const names = Array.isArray(value) ? value.filter(Boolean) : [value];
      if (names.length) node.className = names.join(" ");
    } else if (name === "text") {
      node.textContent = String(value);
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else if (name === "on") {
      for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    } else if (value === true) {
      node.setAttribute(name, "");
    } else {
      node.setAttribute(name, String(value));
    }
  }
  append(node, children);
  return node;
}

/** Appends children (nodes, strings, nested arrays; null/false/undefined skipped). */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces every child of `parent`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** The element with this id (the page's fixed skeleton, index.html). */
export function $(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`index.html has no #${id}`);
  return node;
}

/** JSON pretty-printed for a <pre>. */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

/** `true` when `value` is an object with no members (or null/undefined). */
export function isEmpty(value) {
  return value === null || value === undefined || (typeof value === "object" && Object.keys(value).length === 0);
}

/** A parameter value as the path shows it (strings bare, others as JSON). */
export function paramText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}
