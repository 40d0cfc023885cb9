// Golden queries panel: the saved queries with the memories each must find (added from the
// Retrieval X-ray), running them all (R@k and NDCG@k per query and overall, compared with
// the run before), and the stored runs: by hand, and before and after each sleep cycle.

import { api, onProgress, waitJob } from "./api";
import { h, clear, fmtTime, toast } from "./dom";
import { fmtChange, groupRuns, queryDeltas, type RunGroup } from "./panels";
import { bus, select } from "./store";
import type { GoldenEntry, GoldenRun } from "./types";

const HISTORY = 50;

export class GoldenPanel {
  readonly el: HTMLElement;
  private listEl: HTMLElement;
  private runEl: HTMLElement;
  private historyEl: HTMLElement;
  private statusEl: HTMLElement;
  private runBtn: HTMLButtonElement;
  private entries: GoldenEntry[] = [];
  private running = false;

  constructor() {
    this.listEl = h("div", { "data-testid": "golden-list" });
    this.runEl = h("div", { "data-testid": "golden-run" });
    this.historyEl = h("div", { class: "history-list", "data-testid": "golden-history" });
    this.statusEl = h("span", { class: "muted", "data-testid": "golden-status" });
    this.runBtn = h("button", { class: "primary", "data-testid": "golden-run-all", onclick: () => void this.runAll() }, "Run all golden queries");
    this.el = h("section", { class: "panel-view golden" },
      h("div", { class: "toolbar" }, this.runBtn, this.statusEl),
      h("p", { class: "muted intro" },
        "A golden query is a search with the memories it must find in its top k. Running them all measures recall (R@k: the share of expected memories found) and ranking (NDCG@k); every sleep cycle runs them before and after itself, so a cycle that loses a memory shows here. Add one from the Retrieval X-ray: search, tick the hits that must be found, then “Save as golden query”."),
      h("div", { class: "cols" },
        h("div", { class: "col" }, h("h3", null, "Golden queries"), this.listEl, h("h3", null, "Latest run"), this.runEl),
        h("div", { class: "col narrow" }, h("h3", null, "Runs and sleep cycles"), this.historyEl)));
    void onProgress((p) => {
      if (p.kind === "golden") this.statusEl.textContent = `running: ${p.done} / ${p.total} queries`;
    });
    bus.on("golden", () => { if (this.el.isConnected && !this.el.hidden) void this.refresh(); }, "golden");
  }

  async refresh(): Promise<void> {
    try {
      const [entries, runs] = await Promise.all([api.goldenList(), api.goldenHistory(HISTORY)]);
      this.entries = entries;
      this.renderList(runs[0] ?? null);
      this.renderHistory(runs);
      if (!this.running) this.renderRun(runs.find((r) => r.stage === "manual") ?? runs[0] ?? null);
      if (!this.running) this.statusEl.textContent = `${entries.length} golden ${entries.length === 1 ? "query" : "queries"}`;
      this.runBtn.disabled = this.running || entries.length === 0;
    } catch (e) {
      clear(this.listEl);
      this.listEl.append(h("p", { class: "placeholder error" }, (e as Error).message));
    }
  }

  private renderList(latest: GoldenRun | null): void {
    clear(this.listEl);
    if (!this.entries.length) {
      this.listEl.append(h("p", { class: "placeholder" }, "No golden queries yet."));
      return;
    }
    const last = new Map((latest?.outcomes ?? []).map((o) => [o.query_id, o]));
    const body = h("tbody", null);
    for (const { golden: g, memories } of this.entries) {
      const found = new Set(last.get(g.id)?.ranked.slice(0, g.k) ?? []);
      const byId = new Map(memories.map((m) => [m.id, m]));
      const expected = h("ul", { class: "expected" }, ...g.expected.map((id) => {
        const m = byId.get(id);
        const mark = last.has(g.id) ? (found.has(id) ? "✓" : "✗") : "";
        return h("li", { class: `clickable ${mark === "✗" ? "missed" : ""}`, title: m?.text ?? "", onclick: () => select([id], id) },
          mark ? h("span", { class: mark === "✓" ? "ok" : "error", title: mark === "✓" ? "found in the top k by the latest run" : "not found in the top k by the latest run" }, `${mark} `) : null,
          h("span", { class: "muted" }, `#${id} `),
          m ? `${m.who ? m.who + ": " : ""}${m.text}` : h("i", { class: "error" }, "deleted for good"),
          m?.deleted_at ? h("span", { class: "state s-forgotten" }, " deleted") : null);
      }));
      const o = last.get(g.id);
      body.append(h("tr", { "data-testid": `golden-query-${g.id}` },
        h("td", { class: "q" }, h("div", null, g.query), expected),
        h("td", { class: "num" }, String(g.k)),
        h("td", { class: "num", title: "R@k in the latest run" }, o ? o.recall.toFixed(2) : "—"),
        h("td", null, h("button", { class: "small danger", title: "Remove this golden query and its past results", onclick: () => void this.remove(g.id, g.query) }, "Remove"))));
    }
    this.listEl.append(h("table", { class: "golden-table" },
      h("thead", null, h("tr", null, h("th", null, "query and the memories it must find"), h("th", { class: "num" }, "k"), h("th", { class: "num" }, "R@k"), h("th", null, ""))),
      body));
  }

  /** One run: overall scores, then each query's R@k and NDCG@k against the run before. */
  private renderRun(run: GoldenRun | null, before: GoldenRun | null = null): void {
    clear(this.runEl);
    if (!run) {
      this.runEl.append(h("p", { class: "placeholder" }, "Not run yet."));
      return;
    }
    const title = run.cycle_id === null ? `By hand, ${fmtTime(run.run_at)} UTC` : `${stageLabel(run.stage)} sleep cycle #${run.cycle_id}, ${fmtTime(run.run_at)} UTC`;
    this.runEl.append(
      h("div", { class: "kv", "data-testid": "golden-run-summary" },
        h("b", null, title),
        h("span", null, "mean R@k ", h("b", null, run.mean_recall.toFixed(2))),
        h("span", null, "mean NDCG@k ", h("b", null, run.mean_ndcg.toFixed(2))),
        h("span", { class: run.regressions ? "error" : "muted" }, `${run.regressions} ${run.regressions === 1 ? "query" : "queries"} worse than before`)),
      deltaTable(queryDeltas(before, run), before ? "before → after the cycle" : "previous run → this run"));
  }

  private renderHistory(runs: GoldenRun[]): void {
    clear(this.historyEl);
    if (!runs.length) {
      this.historyEl.append(h("p", { class: "placeholder" }, "No runs yet. Run the golden queries, or run a sleep cycle: it runs them before and after itself."));
      return;
    }
    for (const g of groupRuns(runs)) this.historyEl.append(this.groupRow(g));
  }

  private groupRow(g: RunGroup): HTMLElement {
    if (g.kind === "manual") {
      return h("div", { class: "hrow clickable", "data-testid": `golden-history-run-${g.run.id}`, onclick: () => this.renderRun(g.run) },
        h("b", null, "by hand"), h("span", { class: "muted" }, fmtTime(g.run.run_at)),
        h("span", null, `R@k ${g.run.mean_recall.toFixed(2)}`),
        g.run.regressions ? h("span", { class: "error" }, `${g.run.regressions} worse`) : null);
    }
    const b = g.before?.mean_recall ?? null, a = g.after?.mean_recall ?? null;
    const worse = g.after?.regressions ?? 0;
    return h("div", { class: "hrow clickable", "data-testid": `golden-history-cycle-${g.cycle}`, onclick: () => this.renderRun(g.after ?? g.before, g.after ? g.before : null) },
      h("b", null, `cycle #${g.cycle}`), h("span", { class: "muted" }, fmtTime(g.at)),
      h("span", { title: "mean R@k before → after the cycle" }, `R@k ${fmtChange(b, a)}`),
      worse ? h("span", { class: "error" }, `${worse} worse`) : null);
  }

  private async runAll(): Promise<void> {
    this.running = true;
    this.runBtn.disabled = true;
    this.statusEl.textContent = "running…";
    try {
      const run = await waitJob(await api.goldenRun());
      this.running = false;
      await this.refresh();
      this.renderRun(run);
      this.statusEl.textContent = `ran ${run.outcomes.length} ${run.outcomes.length === 1 ? "query" : "queries"}: mean R@k ${run.mean_recall.toFixed(2)}`;
    } catch (e) {
      this.running = false;
      this.runBtn.disabled = false;
      this.statusEl.textContent = "";
      toast(`golden run failed: ${(e as Error).message}`, "error");
    }
  }

  private async remove(id: number, query: string): Promise<void> {
    try {
      await api.goldenRemove(id);
      toast(`golden query “${query}” removed`);
      await this.refresh();
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }
}

function stageLabel(stage: string): string {
  return stage === "before_sleep" ? "Before" : stage === "after_sleep" ? "After" : stage;
}

function deltaTable(rows: ReturnType<typeof queryDeltas>, what: string): HTMLElement {
  const body = h("tbody", null, ...rows.map((r) => {
    const worse = r.before !== null && r.after !== null && (r.after < r.before - 1e-9 || (r.ndcgBefore !== null && r.ndcgAfter !== null && r.ndcgAfter < r.ndcgBefore - 1e-9));
    return h("tr", { class: worse ? "worse" : "" },
      h("td", { class: "q" }, r.query),
      h("td", { class: "num" }, String(r.k)),
      h("td", { class: "num" }, fmtChange(r.before, r.after)),
      h("td", { class: "num" }, fmtChange(r.ndcgBefore, r.ndcgAfter)));
  }));
  return h("table", { class: "golden-table", "data-testid": "golden-outcomes" },
    h("thead", null, h("tr", null, h("th", null, "query"), h("th", { class: "num" }, "k"),
      h("th", { class: "num", title: what }, "R@k"), h("th", { class: "num", title: what }, "NDCG@k"))),
    body);
}
