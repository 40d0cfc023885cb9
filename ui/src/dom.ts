// DOM helpers. Everything shown from the store goes through `textContent`: memory text is
// untrusted and is never parsed as HTML anywhere in the UI.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | undefined | null>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") {
        el.addEventListener(k.slice(2), v as EventListener);
      } else if (k === "class") {
        el.className = String(v);
      } else if (k === "value" && "value" in el) {
        (el as HTMLInputElement).value = String(v);
      } else if (v === true) {
        el.setAttribute(k, "");
      } else {
        el.setAttribute(k, String(v));
      }
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: Element, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function $(sel: string, root: ParentNode = document): HTMLElement {
  const el = root.querySelector(sel);
  if (!el) throw new Error(`missing element ${sel}`);
  return el as HTMLElement;
}

export function fmtTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  const d = new Date(ms);
  return d.toISOString().replace("T", " ").slice(0, 16);
}

export function fmtNum(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return "—";
  return x.toFixed(digits);
}

export function fmtInt(x: number): string {
  return x.toLocaleString("en-US");
}

/// Shows a transient message at the bottom of the window.
/// A short notice; `action` adds a button after the message (e.g. Undo), and the notice
/// then stays for 12 seconds. Returns the notice (a caller may remove it early).
export function toast(
  message: string,
  kind: "info" | "error" = "info",
  action?: { label: string; testid: string; run: () => void },
): HTMLElement {
  let host = document.getElementById("toasts");
  if (!host) {
    host = h("div", { id: "toasts" });
    document.body.append(host);
  }
  const button = action ? h("button", { class: "small", "data-testid": action.testid, onclick: () => action.run() }, action.label) : null;
  const t = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message, button);
  host.append(t);
  setTimeout(() => t.remove(), action ? 12000 : kind === "error" ? 8000 : 3500);
  return t;
}

/// A field value as text: "—" for none, strings as they are, anything else as JSON.
export function fmtValue(v: unknown): string {
  if (v === null || v === undefined) return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}
