// Retrieval X-ray: how a query was routed, every candidate's signals, fused and MMR scores,
// where the cut fell (near misses below it), and the context packed under the token budget.

import { api, type Tuning } from "./api";
import { h, clear, fmtInt, fmtNum, toast } from "./dom";
import { normaliseWeights, sameWeights, WEIGHT_HELP, WEIGHT_KEYS, weightSum } from "./panels";
import { recordSpan, timed } from "./render/perf";
import { bus, select, state } from "./store";
import type { Hit, SearchArgs, SearchDefaults, SearchResponse, Weights } from "./types";
import { RankedTable } from "./xray_rows";

export class Xray {
  readonly el: HTMLElement;
  readonly spaceSlot: HTMLElement;
  private summary: HTMLElement;
  private tuningEl: HTMLDetailsElement;
  private goldenBar: HTMLElement;
  private table: HTMLElement;
  private context: HTMLElement;
  /// The request of the search shown (set by whoever ran it): what a golden query keeps.
  request: Omit<SearchArgs, "as_of"> | null = null;
  /// The tuning searches run with (null fields: the defaults).
  private applied: Tuning = { window: null, weights: null };
  private defaults: SearchDefaults | null = null;
  private windowInput: HTMLInputElement;
  private weightInputs = new Map<string, HTMLInputElement>();
  private sumEl: HTMLElement;
  private packEl: HTMLElement;
  private inForceEl: HTMLElement;
  /// Memories a person ticked as expected for a golden query, and the query they belong to.
  private marked = new Set<number>();
  private markedFor = "";
  /// The ranked table: its rows are kept and only what differs is written (xray_rows.ts).
  private ranked = new RankedTable({
    select: (id) => select([id], id),
    mark: (id, on) => {
      if (on) this.marked.add(id);
      else this.marked.delete(id);
      if (state.search) this.renderGoldenBar(state.search);
    },
  });

  /// `rerun` runs the current search again (with the tuning now applied).
  constructor(private readonly rerun: () => void) {
    this.summary = h("div", { class: "xray-summary", "data-testid": "xray-summary" });
    this.goldenBar = h("div", { class: "golden-bar", "data-testid": "xray-golden" });
    this.table = h("div", { class: "xray-table" });
    this.context = h("div", { class: "xray-context" });
    this.spaceSlot = h("div", { class: "xray-space" });
    this.windowInput = h("input", { type: "number", step: "256", "data-testid": "tune-window", "aria-label": "context window in tokens", oninput: () => this.showDraft() });
    this.sumEl = h("span", { "data-testid": "tune-sum" });
    this.packEl = h("span", { class: "muted" });
    this.inForceEl = h("span", { class: "in-force", "data-testid": "xray-in-force" }, "defaults");
    const weights = WEIGHT_KEYS.map((k) => {
      const inp = h("input", { type: "number", min: "0", max: "1", step: "0.05", "data-testid": `tune-${k}`, "aria-label": `${k} weight`, oninput: () => this.showDraft() });
      this.weightInputs.set(k, inp);
      return h("label", { title: WEIGHT_HELP[k] }, k, inp);
    });
    this.tuningEl = h("details", { class: "tuning", "data-testid": "xray-tuning" },
      h("summary", null, "Token budget and fusion weights · in force: ", this.inForceEl),
      h("div", { class: "tune-row" },
        h("label", { title: "The model's context window; the system prompt's and the answer's reserves come out of it, the rest is the budget the packed context fills" }, "context window (tokens)", this.windowInput),
        this.packEl),
      h("div", { class: "tune-row weights" }, ...weights),
      h("div", { class: "tune-row" }, this.sumEl,
        h("span", { class: "muted" }, "Weights apply in fusion mode; the direct route moves the lexical weight to semantic.")),
      h("div", { class: "tune-row" },
        h("button", { class: "primary small", "data-testid": "tune-apply", onclick: () => this.apply() }, "Re-run the search with these"),
        h("button", { class: "small", "data-testid": "tune-reset", onclick: () => this.reset() }, "Reset to defaults")));
    this.el = h("section", { class: "xray", "data-testid": "xray" },
      this.spaceSlot,
      h("div", { class: "xray-side" }, this.tuningEl, this.summary, this.goldenBar, this.table, this.context));
    bus.on("search", () => this.renderSoon(), "xray");
    bus.on("whatif", () => this.renderSoon(), "xray");
    bus.on("selection", () => this.highlight(), "xray");
    this.render();
    void this.loadDefaults();
  }

  /// The tuning the next search runs with.
  get tuning(): Tuning {
    return this.applied;
  }

  private async loadDefaults(): Promise<void> {
    try {
      this.defaults = await api.searchDefaults();
    } catch {
      return;
    }
    this.windowInput.min = String(this.defaults.window_min);
    this.windowInput.max = String(this.defaults.window_max);
    this.fill(this.defaults.window, this.defaults.weights);
  }

  private fill(window: number, weights: Weights): void {
    this.windowInput.value = String(window);
    for (const k of WEIGHT_KEYS) this.weightInputs.get(k)!.value = String(Number(weights[k].toFixed(4)));
    this.showDraft();
  }

  private draftWeights(): Weights {
    const w = {} as Weights;
    for (const k of WEIGHT_KEYS) w[k] = Number(this.weightInputs.get(k)!.value);
    return w;
  }

  /// The sum of the weights typed and the budget the window leaves, as they are typed.
  private showDraft(): void {
    const d = this.defaults;
    const sum = weightSum(this.draftWeights());
    const ok = normaliseWeights(this.draftWeights()) !== null;
    this.sumEl.textContent = !ok
      ? "each weight must be between 0 and 1, and not all 0"
      : Math.abs(sum - 1) < 1e-6 ? "weights sum to 1" : `weights sum to ${fmtNum(sum, 2)}: they are scaled to sum to 1 when the search runs`;
    this.sumEl.className = ok ? "muted" : "error";
    const win = Number(this.windowInput.value);
    if (d) {
      const okWin = Number.isInteger(win) && win >= d.window_min && win <= d.window_max;
      this.windowInput.classList.toggle("invalid", !okWin);
      this.packEl.textContent = okWin
        ? `budget ${fmtInt(Math.max(0, win - d.system_reserve - d.output_reserve))} tokens (window − ${fmtInt(d.system_reserve)} system − ${fmtInt(d.output_reserve)} answer)`
        : `the window must be a whole number from ${fmtInt(d.window_min)} to ${fmtInt(d.window_max)}`;
    }
  }

  private apply(): void {
    const d = this.defaults;
    if (!d) return;
    const win = Number(this.windowInput.value);
    if (!(Number.isInteger(win) && win >= d.window_min && win <= d.window_max)) {
      toast(`The context window must be a whole number from ${fmtInt(d.window_min)} to ${fmtInt(d.window_max)} tokens.`, "error");
      return;
    }
    const w = normaliseWeights(this.draftWeights());
    if (!w) {
      toast("Each weight must be between 0 and 1, and not all of them 0.", "error");
      return;
    }
    this.applied = {
      window: win === d.window ? null : win,
      weights: sameWeights(w, d.weights) ? null : w,
    };
    this.fill(win, w);
    this.showInForce();
    if (state.search) this.rerun();
  }

  private reset(): void {
    const d = this.defaults;
    if (!d) return;
    this.applied = { window: null, weights: null };
    this.fill(d.window, d.weights);
    this.showInForce();
    if (state.search) this.rerun();
  }

  private showInForce(): void {
    const parts = [
      this.applied.weights ? "your weights" : "default weights",
      this.applied.window ? `a ${fmtInt(this.applied.window)}-token window` : "the default window",
    ];
    this.inForceEl.textContent = parts.join(", ");
    this.inForceEl.classList.toggle("custom", this.applied.weights !== null || this.applied.window !== null);
  }

  /// Rebuilds the X-ray in a task of its own after the next frame. Done at once, the 3D
  /// view's frame for the same search, the list's rows and the table's style, layout and
  /// paint ran as one task of the page's main thread: over 50 ms, often, without a GPU
  /// (README, "Main-thread blocking"). `data-pending` is on the X-ray while a rebuild is queued.
  private renderSoon(): void {
    if (this.el.dataset.pending !== undefined) return;
    this.el.dataset.pending = "";
    requestAnimationFrame(() => setTimeout(() => {
      delete this.el.dataset.pending;
      timed("search:xray.table", () => this.render());
    }, 0));
  }

  private render(): void {
    const r = state.search;
    clear(this.summary);
    clear(this.goldenBar);
    if (r?.query !== this.markedFor) {
      this.marked.clear();
      this.markedFor = r?.query ?? "";
    }
    clear(this.context);
    if (!r) {
      clear(this.table);
      this.summary.append(h("p", { class: "muted" },
        "Type a query in the search box above. The query appears in the 3D view with lines to its hits (teal) and to the near misses just below the cut (amber)."));
      return;
    }
    const t = r.timings;
    const t0 = performance.now();
    this.summary.append(
      h("div", { class: "kv" },
        h("span", null, "route ", h("b", null, r.route)), h("span", { class: "muted" }, r.route_reason),
        r.hits.length
          ? h("button", { class: "small", "data-testid": "xray-select-hits", title: "Select every hit (to merge, pin or tag them from the detail pane)",
            onclick: () => select(r.hits.map((x) => x.memory.id), r.hits[0].memory.id) }, `Select the ${r.hits.length} hits`)
          : null),
      h("div", { class: "kv" },
        h("span", null, "mode ", h("b", null, r.mode)),
        h("span", null, "vector ", h("b", null, r.vector_path)),
        h("span", null, `${r.candidates_considered} candidates`),
        r.actors.length ? h("span", null, "actors ", h("b", null, r.actors.join(", "))) : null),
      ...[questionLine(r), whatifLine(r)].filter((x): x is HTMLElement => x !== null),
      h("div", { class: "kv muted" },
        `embed ${fmtNum(t.embed_ms, 1)} · vector ${fmtNum(t.vector_ms, 1)} · lexical ${fmtNum(t.lexical_ms, 1)} · score ${fmtNum(t.score_ms, 1)} · pack ${fmtNum(t.pack_ms, 1)} · total ${fmtNum(t.total_ms, 1)} ms`),
      h("div", { class: "kv muted", "data-testid": "xray-weights" },
        r.mode === "context" ? "context mode: no fusion weights" : `${this.applied.weights ? "your weights" : "default weights"}${r.route === "direct" ? " (direct route: lexical moved to semantic)" : ""}: `,
        ...(r.mode === "context" ? [] : WEIGHT_KEYS.map((k) => h("span", { class: "w" }, `${k} ${fmtNum(r.weights[k], 2)}`)))));
    this.renderGoldenBar(r);
    recordSpan("xray.summary", t0);
    timed("xray.rows", () => this.ranked.show(r.hits, r.near_misses, r.connected, (id) => this.marked.has(id)));
    if (this.ranked.el.parentElement !== this.table) this.table.append(this.ranked.el);
    const t1 = performance.now();
    const byId = new Map<number, Hit>();
    for (const x of [...r.hits, ...r.near_misses, ...r.connected]) byId.set(x.memory.id, x);
    const pct = r.budget_tokens ? Math.min(100, (100 * r.used_tokens) / r.budget_tokens) : 0;
    const bar = h("div", { class: "budget" }, h("div", { class: "fill" }));
    (bar.firstChild as HTMLElement).style.width = `${pct}%`;
    this.context.append(
      h("h4", null, `Packed context · ${r.used_tokens} / ${r.budget_tokens} tokens · ${r.context.length} memories`), bar,
      h("ol", { class: "packed" }, ...r.context.map((id) => {
        const x = byId.get(id);
        return h("li", { class: "clickable", onclick: () => select([id], id) },
          h("span", { class: "muted" }, `#${id} ${x?.attention ? `attn ${fmtNum(x.attention, 3)}` : ""} `),
          x ? `${x.memory.who ? x.memory.who + ": " : ""}${x.memory.text}` : "");
      })));
    recordSpan("xray.context", t1);
    this.highlight();
  }

  /// "Save as golden query": the query, its options and the ticked memories.
  private renderGoldenBar(r: SearchResponse): void {
    clear(this.goldenBar);
    const k = h("input", { type: "number", min: "1", max: "200", value: String(this.request?.k ?? r.hits.length), "aria-label": "golden k", "data-testid": "golden-k" });
    const n = this.marked.size;
    const past = r.as_of !== null;
    const save = h("button", { class: "small", "data-testid": "golden-save", disabled: n === 0 || past,
      title: past ? "Golden queries are run on the store as it is now: return to now first" : "Save this query and the ticked memories as a golden query",
      onclick: () => void this.saveGolden(r, Number(k.value)) }, "Save as golden query");
    this.goldenBar.append(
      h("span", { class: "muted" }, n ? `${n} ${n === 1 ? "memory" : "memories"} ticked as expected` : "Tick the memories this query must find to save it as a golden query"),
      h("label", null, "in the top ", k), save);
  }

  private async saveGolden(r: SearchResponse, k: number): Promise<void> {
    const req = this.request;
    try {
      const g = await api.goldenAdd({
        query: r.query, expected: [...this.marked], k,
        filters: req?.filters ?? null, mode: req?.mode ?? r.mode, route: req?.route ?? null,
      });
      toast(`Saved golden query #${g.id}: “${g.query}” must find ${g.expected.length} ${g.expected.length === 1 ? "memory" : "memories"} in its top ${g.k}`);
      bus.emit("golden");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private highlight(): void {
    for (const tr of this.table.querySelectorAll("tr[data-id]")) {
      tr.classList.toggle("selected", state.selection.has(Number((tr as HTMLElement).dataset.id)));
    }
  }
}

/** The What-if panel's proposed settings, when they were tried on this query: how its top
 *  hits would move (saved → proposed rank), and what would newly enter the top k. */
function whatifLine(r: SearchResponse): HTMLElement | null {
  const w = state.whatif;
  if (!w || w.before.query !== r.query) return null;
  const rank = (s: SearchResponse, id: number) => {
    const i = s.hits.findIndex((x) => x.memory.id === id);
    return i < 0 ? "out" : String(i + 1);
  };
  const moves = w.before.hits
    .map((x) => ({ id: x.memory.id, from: rank(w.before, x.memory.id), to: rank(w.after, x.memory.id) }))
    .filter((m) => m.from !== m.to);
  const entered = w.after.hits.filter((x) => rank(w.before, x.memory.id) === "out")
    .map((x) => ({ id: x.memory.id, from: "out", to: rank(w.after, x.memory.id) }));
  const all = [...moves, ...entered];
  return h("div", { class: "kv whatif-moves", "data-testid": "xray-whatif" },
    h("span", { class: "muted" }, "what-if (proposed settings)"),
    all.length
      ? h("span", null, ...all.slice(0, 12).map((m) => h("span", { class: "w clickable", onclick: () => select([m.id], m.id) }, `#${m.id} ${m.from}→${m.to}`)))
      : h("span", null, "the same ranking"));
}

/** What the search read in the question: a "when" question, the times and entities it names. */
function questionLine(r: SearchResponse): HTMLElement | null {
  const q = r.question;
  if (!q.asks_when && !q.times.length && !q.entities.length) return null;
  return h("div", { class: "kv", "data-testid": "xray-question" },
    h("span", { class: "muted" }, "the question"),
    q.asks_when ? h("span", null, "asks ", h("b", null, "when")) : null,
    q.times.length ? h("span", null, "names ", h("b", null, q.times.join("; "))) : null,
    q.entities.length ? h("span", null, "about ", h("b", null, q.entities.join(", "))) : null);
}

export function searchSummary(r: SearchResponse): string {
  const then = r.as_of === null ? "" : ` · as of ${new Date(r.as_of).toISOString().replace("T", " ").slice(0, 19)} UTC`;
  return `${r.hits.length} hits · ${r.route} · ${fmtNum(r.timings.total_ms, 1)} ms${then}`;
}
