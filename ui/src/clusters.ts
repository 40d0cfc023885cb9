// Cluster panel: concept clusters (k-means) with size, energy and label; the liquid
// clustering loop (start, pause, single step, rate and thresholds) with its live step
// events; and the merge timeline.

import { renameCluster } from "./curate";
import { api, onEvent, waitJob } from "./api";
import { h, clear, fmtTime, fmtNum, toast } from "./dom";
import { clusterColor, cssColor } from "./colors";
import { kvTable, settingsForm } from "./kv";
import { bus, select, state } from "./store";
import type { ClusterInfo, ClusterMerge, LiquidParams, LiquidStep } from "./types";


export class ClusterPanel {
  readonly el: HTMLElement;
  private listEl: HTMLElement;
  private mergesEl: HTMLElement;
  private liquidEl: HTMLElement;
  private stepLog: HTMLElement;
  private kInput: HTMLInputElement;
  private form: { el: HTMLElement; read: () => LiquidParams } | null = null;
  private paramsEl: HTMLElement;
  private runBtn: HTMLButtonElement;
  private startBtn: HTMLButtonElement;

  constructor() {
    this.listEl = h("div", { class: "cluster-list", "data-testid": "cluster-list" });
    this.mergesEl = h("div", { class: "merges", "data-testid": "cluster-merges" });
    this.liquidEl = h("div", { class: "liquid-status", "data-testid": "liquid-status" });
    this.stepLog = h("ol", { class: "steplog" });
    this.paramsEl = h("div", {});
    this.kInput = h("input", { type: "number", min: "2", max: "512", placeholder: "auto", "aria-label": "k", class: "k" });
    this.runBtn = h("button", { class: "primary", "data-testid": "cluster-run", onclick: () => void this.recluster() }, "Recompute clusters");
    this.startBtn = h("button", { "data-testid": "liquid-start", onclick: () => void this.toggleLoop() }, "Start loop");
    this.el = h("section", { class: "panel-view clusters" },
      h("div", { class: "toolbar" }, this.runBtn, h("label", { class: "muted" }, "k ", this.kInput),
        h("span", { class: "sep" }),
        h("span", null, "Liquid loop"), this.startBtn,
        h("button", { "data-testid": "liquid-step", onclick: () => void this.step() }, "Single step")),
      h("div", { class: "cols" },
        h("div", { class: "col" }, h("h3", null, "Clusters"), this.listEl),
        h("div", { class: "col narrow" }, h("h3", null, "Liquid loop"), this.liquidEl,
          h("details", { class: "section" }, h("summary", null, "Rate and thresholds"), this.paramsEl),
          h("h4", null, "Recent steps"), this.stepLog,
          h("h3", null, "Merge timeline"), this.mergesEl)));
    void onEvent("somna://liquid-step", (s) => this.onStep(s));
    // The swatches follow the 3D view's palette: the largest clusters in their hues, the rest grey.
    bus.on("hues", () => { if (this.shown) this.renderClusters(this.shown); }, "clusters");
    // Labels changed (a rename, here or by another process): show them.
    bus.on("clusters", () => { if (this.shown && !this.el.hidden) void this.refresh(); }, "clusters-panel");
    void onEvent("somna://liquid-state", (s) => this.setRunning(s.running));
  }

  private refreshToken = 0;

  async refresh(): Promise<void> {
    if (!this.form) {
      try {
        this.form = settingsForm(await api.liquidDefaults());
        this.paramsEl.append(this.form.el, h("button", { class: "small", onclick: () => void api.liquidSetParams(this.form!.read()).then(() => toast("liquid parameters applied")) }, "Apply"));
      } catch (e) {
        this.paramsEl.append(h("p", { class: "muted" }, (e as Error).message));
      }
    }
    // Refreshes overlap (a liquid step's, a change's, a recluster's): only the latest one
    // renders, so an older answer never paints over a newer one (a rename shown, then lost).
    const token = ++this.refreshToken;
    try {
      const [cs, merges, status] = await Promise.all([api.clusters(), api.clusterMerges(), api.liquidStatus()]);
      if (token !== this.refreshToken) return;
      this.renderClusters(cs);
      this.renderMerges(merges);
      this.setRunning(status.running);
      clear(this.liquidEl);
      this.liquidEl.append(kvTable(status));
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private shown: ClusterInfo[] | null = null;

  private renderClusters(cs: ClusterInfo[]): void {
    this.shown = cs;
    clear(this.listEl);
    if (!cs.length) {
      this.listEl.append(h("p", { class: "muted" }, "No clusters yet: press “Recompute clusters”."));
      return;
    }
    const max = Math.max(...cs.map((c) => c.size), 1);
    this.listEl.append(h("table", { class: "clusters-table" },
      h("thead", null, h("tr", null, h("th", null, ""), h("th", null, "label"), h("th", null, "group"), h("th", { class: "num" }, "size"), h("th", { class: "num" }, "energy"), h("th", null, ""))),
      h("tbody", null, ...cs.sort((a, b) => b.size - a.size).map((c) => {
        const sw = h("span", { class: "sw round" });
        sw.style.background = cssColor(clusterColor(c.id, state.hues));
        const bar = h("div", { class: "sizebar" });
        bar.style.width = `${(100 * c.size) / max}%`;
        return h("tr", { class: "clickable", "data-testid": `cluster-${c.id}`, onclick: () => this.focus(c.id) },
          h("td", null, sw), h("td", null, h("div", null, c.label || `cluster ${c.id}`), bar),
          h("td", { class: "muted", "data-testid": `cluster-group-${c.id}` }, c.group ? c.group.label : ""),
          h("td", { class: "num" }, String(c.size)), h("td", { class: "num" }, fmtNum(c.energy, 2)),
          h("td", { class: "muted" }, `#${c.id} `,
            h("button", { class: "small", title: "Name this cluster; liquid steps keep a name you give", "data-testid": `cluster-rename-${c.id}`,
              onclick: (e: Event) => { e.stopPropagation(); renameCluster(c.id, c.label); } }, "Rename…")));
      }))));
  }

  private renderMerges(ms: ClusterMerge[]): void {
    clear(this.mergesEl);
    if (!ms.length) {
      this.mergesEl.append(h("p", { class: "muted" }, "No merges yet."));
      return;
    }
    this.mergesEl.append(h("ol", { class: "timeline" }, ...ms.slice().reverse().slice(0, 100).map((m) =>
      h("li", null, h("span", { class: "muted" }, fmtTime(m.merged_at)), ` #${m.from_id} → #${m.into_id} `,
        h("span", { class: "muted" }, `cos ${fmtNum(m.similarity, 3)}`)))));
  }

  /// Selects a cluster's members (shown in the 3D view and the graph).
  private focus(id: number): void {
    const p = state.points;
    if (!p) return;
    const ids: number[] = [];
    for (let i = 0; i < p.n; i++) if (p.clusters[i] === id) ids.push(p.ids[i]);
    select(ids, ids[0] ?? null);
  }

  private async recluster(): Promise<void> {
    this.runBtn.disabled = true;
    try {
      const k = this.kInput.value ? Number(this.kInput.value) : null;
      const job = await api.clusterRun(k);
      const r = await waitJob(job);
      toast(`clustered into ${r.k} clusters${r.named_by ? `, named by ${r.named_by}` : ""}${r.note ? ` (${r.note})` : ""}`);
      bus.emit("data");
      await this.refresh();
    } catch (e) {
      toast((e as Error).message, "error");
    } finally {
      this.runBtn.disabled = false;
    }
  }

  private running = false;
  private setRunning(on: boolean): void {
    this.running = on;
    this.startBtn.textContent = on ? "Pause loop" : "Start loop";
    this.startBtn.setAttribute("aria-pressed", String(on));
  }

  private async toggleLoop(): Promise<void> {
    try {
      if (this.running) await api.liquidPause();
      else await api.liquidStart(this.form?.read() ?? null);
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private async step(): Promise<void> {
    try {
      await api.liquidStep(this.form?.read() ?? null);
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private onStep(s: LiquidStep): void {
    const moved = s.moved.length;
    const merged = s.merged.length;
    const relabelled = s.relabelled.length;
    this.stepLog.prepend(h("li", { "data-testid": "liquid-step-row" }, `step ${s.step}: ${moved} moved, ${merged} merged${relabelled ? `, ${relabelled} relabelled` : ""}`,
      h("span", { class: "muted" }, ` · ${fmtNum(s.millis, 1)} ms`)));
    while (this.stepLog.children.length > 30) this.stepLog.lastChild?.remove();
    clear(this.liquidEl);
    this.liquidEl.append(kvTable(s, ["moved", "merged", "relabelled"]));
    if (moved || merged || relabelled) void this.refreshSoon();
  }

  private pending = false;
  private async refreshSoon(): Promise<void> {
    if (this.pending) return;
    this.pending = true;
    setTimeout(() => {
      this.pending = false;
      void this.refresh();
    }, 500);
  }
}
