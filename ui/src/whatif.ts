// What-if panel: change the decay model and half-life, the lifecycle and forgetting
// thresholds and the fusion weights, and see, without writing anything, which memories would
// change state and when (a count over time and the list), how the golden queries would rank,
// and how the current search would re-rank. "Apply" saves the settings (recorded, undoable).

import { api } from "./api";
import { h, clear, fmtInt, fmtNum, fmtTime, toast } from "./dom";
import { bus, select, state } from "./store";
import type {
  Bucket, DecayModel, SearchResponse, Settings, SettingsChange, SettingsPatch, Transition, Weights, WhatIfReport,
} from "./types";
import { KNOBS, WEIGHTS, diff, differs, isEmptyPatch, patchOf, whenText } from "./whatif_model";

export class WhatIfPanel {
  readonly el: HTMLElement;
  private saved: Settings | null = null;
  private decaySel: HTMLSelectElement;
  private inputs = new Map<string, HTMLInputElement>();
  private weightInputs = new Map<keyof Weights, HTMLInputElement>();
  private horizon: HTMLInputElement;
  private weightSum: HTMLElement;
  private summaryEl: HTMLElement;
  private chartEl: HTMLElement;
  private listEl: HTMLElement;
  private goldenEl: HTMLElement;
  private searchEl: HTMLElement;
  private historyEl: HTMLElement;
  private applyBtn: HTMLButtonElement;
  private token = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor() {
    this.decaySel = h("select", { "aria-label": "decay model", "data-testid": "whatif-decay", onchange: () => this.schedule() },
      h("option", { value: "exponential" }, "exponential"), h("option", { value: "power_law" }, "power law"));
    const knobs = KNOBS.map((k) => {
      const inp = h("input", { type: "number", step: k.step, min: "0", "data-testid": `whatif-${k.key}`, oninput: () => this.schedule() });
      this.inputs.set(k.key, inp);
      return h("label", { title: k.title }, k.label, inp);
    });
    const weights = WEIGHTS.map((w) => {
      const inp = h("input", { type: "number", step: "0.05", min: "0", max: "1", "data-testid": `whatif-w-${w}`, oninput: () => this.schedule() });
      this.weightInputs.set(w, inp);
      return h("label", null, w, inp);
    });
    this.horizon = h("input", { type: "number", min: "1", max: "3650", step: "30", value: "180", "data-testid": "whatif-horizon", oninput: () => this.schedule() });
    this.weightSum = h("span", { class: "muted", "data-testid": "whatif-weight-sum" });
    this.applyBtn = h("button", { class: "primary", "data-testid": "whatif-apply", disabled: true, onclick: () => void this.apply() }, "Apply");
    const reset = h("button", { "data-testid": "whatif-reset", onclick: () => this.fill() }, "Reset to saved");
    this.summaryEl = h("div", { class: "whatif-summary", "data-testid": "whatif-summary" });
    this.chartEl = h("div", { class: "whatif-chart", "data-testid": "whatif-chart" });
    this.listEl = h("div", { class: "whatif-list", "data-testid": "whatif-transitions" });
    this.goldenEl = h("div", { "data-testid": "whatif-golden" });
    this.searchEl = h("div", { "data-testid": "whatif-search" });
    this.historyEl = h("div", { class: "history-list", "data-testid": "whatif-history" });
    this.el = h("section", { class: "panel-view whatif" },
      h("div", { class: "toolbar" }, this.applyBtn, reset,
        h("span", { class: "muted" }, "Try settings: nothing is written until Apply, and an applied change can be undone.")),
      h("div", { class: "cols" },
        h("div", { class: "col" },
          this.summaryEl, this.chartEl,
          h("h3", null, "Memories that would change state"), this.listEl,
          h("h3", null, "Golden queries"), this.goldenEl,
          h("h3", null, "Current search"), this.searchEl),
        h("div", { class: "col narrow" },
          h("h3", null, "Decay"), h("div", { class: "settings" }, h("label", null, "model", this.decaySel), ...knobs.slice(0, 3)),
          h("h3", null, "Lifecycle and forgetting"), h("div", { class: "settings" }, ...knobs.slice(3)),
          h("h3", null, "Fusion weights"), h("div", { class: "settings" }, ...weights), this.weightSum,
          h("h3", null, "Simulation"), h("div", { class: "settings" }, h("label", null, "horizon (days)", this.horizon)),
          h("h3", null, "Applied changes"), this.historyEl)));
    bus.on("search", () => { if (this.el.isConnected && !this.el.hidden) this.schedule(); }, "whatif");
  }

  /** Loads the saved settings (first time) and simulates. */
  async refresh(): Promise<void> {
    try {
      if (!this.saved) {
        this.saved = await api.settings();
        this.fill();
      } else {
        this.schedule(0);
      }
      await this.refreshHistory();
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  /** Puts the saved settings into the form. */
  private fill(): void {
    const s = this.saved;
    if (!s) return;
    this.decaySel.value = s.sleep.decay;
    for (const k of KNOBS) this.inputs.get(k.key)!.value = String(k.get(s));
    for (const w of WEIGHTS) this.weightInputs.get(w)!.value = String(s.weights[w]);
    this.schedule(0);
  }

  private patch(): SettingsPatch | null {
    if (!this.saved) return null;
    const values: Record<string, number> = {};
    for (const k of KNOBS) values[k.key] = Number(this.inputs.get(k.key)!.value);
    const weights = { ...this.saved.weights };
    for (const w of WEIGHTS) weights[w] = Number(this.weightInputs.get(w)!.value);
    const sum = WEIGHTS.reduce((a, w) => a + weights[w], 0);
    this.weightSum.textContent = `sum ${fmtNum(sum, 2)}${Math.abs(sum - 1) > 1e-6 ? " (must be 1)" : ""}`;
    this.weightSum.className = Math.abs(sum - 1) > 1e-6 ? "error" : "muted";
    return patchOf(this.saved, this.decaySel.value as DecayModel, values, weights);
  }

  /** Simulates after the typing pauses. */
  private schedule(ms = 250): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = null; void this.simulate(); }, ms);
  }

  private async simulate(): Promise<void> {
    const patch = this.patch();
    if (!patch) return;
    const token = ++this.token;
    const query = state.search?.query ?? null;
    this.summaryEl.classList.add("busy");
    try {
      const r = await api.whatIf({
        patch, query, k: state.search ? Math.min(200, Math.max(1, state.search.hits.length || 10)) : null,
        horizon_days: Number(this.horizon.value) || 180, limit: 300, now_ms: null,
      });
      if (token !== this.token) return;
      state.whatif = isEmptyPatch(patch) ? null : r.search;
      bus.emit("whatif");
      this.applyBtn.disabled = isEmptyPatch(patch);
      this.render(r, patch);
    } catch (e) {
      if (token !== this.token) return;
      this.applyBtn.disabled = true;
      clear(this.summaryEl);
      this.summaryEl.append(h("p", { class: "error", "data-testid": "whatif-error" }, (e as Error).message));
    } finally {
      if (token === this.token) this.summaryEl.classList.remove("busy");
    }
  }

  private render(r: WhatIfReport, patch: SettingsPatch): void {
    const l = r.lifecycle;
    clear(this.summaryEl);
    this.summaryEl.append(
      h("p", null, isEmptyPatch(patch) ? "The saved settings, unchanged: change a setting on the right." : `Proposed: ${describe(r)}`),
      h("div", { class: "kv" },
        h("span", null, "next cycle ", h("b", { "data-testid": "whatif-next" }, `${fmtInt(l.next_cycle_before)} → ${fmtInt(l.next_cycle_after)}`), " state changes"),
        h("span", null, `within ${fmtInt(r.horizon_days)} days `, h("b", null, `${fmtInt(l.transitions_before)} → ${fmtInt(l.transitions_after)}`), " transitions"),
        h("span", null, h("b", { "data-testid": "whatif-differing" }, fmtInt(l.differing)), " moved by the change"),
        h("span", { class: "muted" }, `${fmtInt(l.simulated)} memories · ${fmtNum(r.timings.total_ms, 0)} ms · nothing written`)));
    clear(this.chartEl);
    this.chartEl.append(chart(l.series), h("div", { class: "whatif-legend muted" },
      h("span", null, h("span", { class: "sw", style: "background:#5b6478" }), "saved settings"),
      h("span", null, h("span", { class: "sw", style: "background:var(--accent2)" }), "proposed"),
      h("span", null, "state changes per stretch of time; the first bar is the next sleep cycle")));
    this.renderList(r);
    this.renderGolden(r);
    this.renderSearch(r);
  }

  private renderList(r: WhatIfReport): void {
    clear(this.listEl);
    const rows = r.lifecycle.transitions;
    if (!rows.length) {
      this.listEl.append(h("p", { class: "muted" }, "No memory changes state within the horizon."));
      return;
    }
    const body = h("tbody", null, ...rows.map((t: Transition) => {
      const moved = differs(t);
      return h("tr", { class: `clickable${moved ? " moved" : ""}`, "data-testid": "whatif-row", onclick: () => select([t.memory_id], t.memory_id) },
        h("td", null, `#${t.memory_id}`), h("td", null, t.kind),
        h("td", null, h("span", { class: `state s-${t.from}` }, t.from), " → ", h("span", { class: `state s-${t.to}` }, t.to)),
        h("td", { class: "num" }, whenText(r.now, t.before_at)), h("td", { class: "num" }, whenText(r.now, t.after_at)),
        h("td", { class: "text" }, t.text));
    }));
    this.listEl.append(
      h("p", { class: "muted" }, `${rows.length} listed, those the change moves first (highlighted). Saved = with the saved settings; proposed = with yours. A change happens at the first sleep cycle from then on.`),
      h("table", { class: "diff-table" },
        h("thead", null, h("tr", null, h("th", null, "memory"), h("th", null, "kind"), h("th", null, "change"), h("th", { class: "num" }, "saved"), h("th", { class: "num" }, "proposed"), h("th", null, "text"))),
        body));
  }

  private renderGolden(r: WhatIfReport): void {
    clear(this.goldenEl);
    const g = r.golden;
    if (!g.queries.length) {
      this.goldenEl.append(h("p", { class: "muted" }, "No golden queries saved (somna golden add)."));
      return;
    }
    const ranks = (v: (number | null)[]) => v.map((x) => (x === null ? "–" : String(x))).join(", ");
    this.goldenEl.append(
      h("p", null, "mean R@k ", h("b", { "data-testid": "whatif-golden-mean" }, `${fmtNum(g.mean_recall_before, 3)} → ${fmtNum(g.mean_recall_after, 3)}`),
        ` · ${g.improved} improve · ${g.regressed} regress`),
      h("table", { class: "diff-table" },
        h("thead", null, h("tr", null, h("th", null, "query"), h("th", { class: "num" }, "R@k"), h("th", null, "ranks of the expected memories"))),
        h("tbody", null, ...g.queries.map((q) => h("tr", { class: q.after_recall < q.before_recall ? "worse" : q.after_recall > q.before_recall ? "better" : "" },
          h("td", { class: "text" }, q.query),
          h("td", { class: "num" }, `${fmtNum(q.before_recall, 2)} → ${fmtNum(q.after_recall, 2)}`),
          h("td", { class: "mono" }, `${ranks(q.before_ranks)} → ${ranks(q.after_ranks)}`))))));
  }

  private renderSearch(r: WhatIfReport): void {
    clear(this.searchEl);
    if (!r.search) {
      this.searchEl.append(h("p", { class: "muted" }, "Search above to see how the current query would re-rank."));
      return;
    }
    const { before, after } = r.search;
    const rank = (s: SearchResponse, id: number) => {
      const i = s.hits.findIndex((x) => x.memory.id === id);
      return i < 0 ? "out" : `#${i + 1}`;
    };
    const n = Math.max(before.hits.length, after.hits.length);
    const rows: HTMLElement[] = [];
    for (let i = 0; i < n; i++) {
      const b = before.hits[i], a = after.hits[i];
      rows.push(h("tr", null, h("td", { class: "num" }, String(i + 1)),
        b ? h("td", { class: "clickable", onclick: () => select([b.memory.id], b.memory.id) }, `#${b.memory.id} `, h("span", { class: "muted" }, fmtNum(b.score, 3))) : h("td", null),
        b ? h("td", { class: "text" }, b.memory.text) : h("td", null),
        a ? h("td", { class: "clickable", onclick: () => select([a.memory.id], a.memory.id) }, `#${a.memory.id} `, h("span", { class: "muted" }, fmtNum(a.score, 3))) : h("td", null),
        a ? h("td", { class: "num", "data-testid": "whatif-search-move" }, rank(before, a.memory.id) === `#${i + 1}` ? "=" : `was ${rank(before, a.memory.id)}`) : h("td", null),
        a ? h("td", { class: "text" }, a.memory.text) : h("td", null)));
    }
    this.searchEl.append(
      h("p", null, `"${before.query}": saved settings (left) → proposed (right), each over the store as the next sleep cycle would leave it.`),
      h("table", { class: "diff-table" },
        h("thead", null, h("tr", null, h("th", { class: "num" }, "#"), h("th", null, "saved"), h("th", null, ""), h("th", null, "proposed"), h("th", null, "move"), h("th", null, ""))),
        h("tbody", null, ...rows)));
  }

  private async apply(): Promise<void> {
    const patch = this.patch();
    if (!patch || isEmptyPatch(patch)) return;
    try {
      const c = await api.applySettings(patch);
      this.saved = c.new;
      toast(`settings saved (change #${c.id}; undo below)`);
      this.fill();
      await this.refreshHistory();
      bus.emit("settings");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private async refreshHistory(): Promise<void> {
    const log = await api.settingsHistory(20);
    clear(this.historyEl);
    if (!log.length) this.historyEl.append(h("p", { class: "muted" }, "None yet: the defaults are in use."));
    for (const c of log) {
      this.historyEl.append(h("div", { class: "hrow", "data-testid": `whatif-change-${c.id}` },
        h("b", null, `#${c.id}`), h("span", { class: `state s-${c.status}` }, c.status), h("span", { class: "muted" }, fmtTime(c.at)),
        h("span", { class: "small" }, changes(c).join(", ")),
        c.status !== "undone" ? h("button", { class: "small", onclick: () => void this.undo(c.id) }, "Undo") : null));
    }
  }

  private async undo(id: number): Promise<void> {
    try {
      const c = await api.settingsUndo(id);
      this.saved = await api.settings();
      toast(`settings change #${c.id} undone`);
      this.fill();
      await this.refreshHistory();
      bus.emit("settings");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }
}

function describe(r: WhatIfReport): string {
  return diff(r.before, r.after).join("; ");
}

function changes(c: SettingsChange): string[] {
  return diff(c.old, c.new);
}

/** Transitions per stretch of time, saved (grey) beside proposed (teal), as SVG bars. */
export function chart(series: Bucket[]): SVGSVGElement {
  const NS = "http://www.w3.org/2000/svg";
  const W = 640, H = 150, left = 36, bottom = 20, top = 8;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "whatif-svg");
  svg.setAttribute("role", "img");
  const max = Math.max(1, ...series.map((b) => Math.max(b.before, b.after)));
  const slot = (W - left) / Math.max(1, series.length);
  const y = (v: number) => top + (H - top - bottom) * (1 - v / max);
  const el = (tag: string, attrs: Record<string, string | number>, text?: string) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  el("line", { x1: left, x2: W, y1: y(0), y2: y(0), class: "axis" });
  el("text", { x: left - 4, y: y(max) + 4, "text-anchor": "end", class: "tick" }, fmtInt(max));
  el("text", { x: left - 4, y: y(0), "text-anchor": "end", class: "tick" }, "0");
  series.forEach((b, i) => {
    const x = left + i * slot;
    const w = Math.max(1, slot / 2 - 1);
    el("rect", { x, y: y(b.before), width: w, height: y(0) - y(b.before), class: "bar-before" }).append(
      title(`${label(b)}: ${b.before} with the saved settings`));
    el("rect", { x: x + w, y: y(b.after), width: w, height: y(0) - y(b.after), class: "bar-after" }).append(
      title(`${label(b)}: ${b.after} with the proposed settings`));
  });
  const ticks = [0, Math.floor(series.length / 2), series.length - 1].filter((v, i, a) => v >= 0 && a.indexOf(v) === i);
  for (const i of ticks) {
    el("text", { x: left + i * slot + slot / 2, y: H - 5, "text-anchor": "middle", class: "tick" }, i === 0 ? "next" : `day ${Math.round(series[i].to_day)}`);
  }
  function title(t: string): SVGTitleElement {
    const e = document.createElementNS(NS, "title");
    e.textContent = t;
    return e;
  }
  return svg;
}

function label(b: Bucket): string {
  return b.to_day === 0 ? "next cycle" : `days ${Math.round(b.from_day)}–${Math.round(b.to_day)}`;
}
