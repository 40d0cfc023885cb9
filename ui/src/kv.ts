// Renders engine reports (sleep cycles, cluster runs, liquid steps) as key–value tables,
// whatever fields they carry. Values are shown as text.

import { h } from "./dom";

export function kvTable(obj: object, skip: string[] = []): HTMLElement {
  const rows = Object.entries(obj).filter(([k, v]) => !skip.includes(k) && v !== null && typeof v !== "object");
  return h("dl", { class: "grid" }, ...rows.flatMap(([k, v]) => [h("dt", null, k.replace(/_/g, " ")), h("dd", null, fmt(v))]));
}

export function fmt(v: unknown): string {
  if (typeof v === "number") return Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(3);
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (v === null || v === undefined) return "—";
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

/// A form over a flat settings object: numbers, booleans and strings become inputs; nested
/// objects become fieldsets. `read()` returns the edited copy, of the same type.
export function settingsForm<T extends object>(obj: T): { el: HTMLElement; read: () => T } {
  const readers: (() => void)[] = [];
  const out = structuredClone(obj) as Record<string, unknown>;
  const build = (src: Record<string, unknown>, dst: Record<string, unknown>, depth: number): HTMLElement => {
    const box = h("div", { class: depth ? "fieldset" : "settings" });
    for (const [k, v] of Object.entries(src)) {
      const label = k.replace(/_/g, " ");
      if (typeof v === "number") {
        const inp = h("input", { type: "number", step: "any", value: String(v), name: k });
        readers.push(() => { const x = Number(inp.value); if (Number.isFinite(x)) dst[k] = x; });
        box.append(h("label", null, label, inp));
      } else if (typeof v === "boolean") {
        const inp = h("input", { type: "checkbox", name: k });
        inp.checked = v;
        readers.push(() => { dst[k] = inp.checked; });
        box.append(h("label", { class: "check" }, inp, label));
      } else if (typeof v === "string") {
        const inp = h("input", { type: "text", value: v, name: k });
        readers.push(() => { dst[k] = inp.value; });
        box.append(h("label", null, label, inp));
      } else if (v && typeof v === "object" && !Array.isArray(v)) {
        box.append(h("div", { class: "fs-title muted" }, label), build(v as Record<string, unknown>, dst[k] as Record<string, unknown>, depth + 1));
      }
    }
    return box;
  };
  const el = build(obj as Record<string, unknown>, out, 0);
  return { el, read: () => { readers.forEach((r) => r()); return structuredClone(out) as T; } };
}
