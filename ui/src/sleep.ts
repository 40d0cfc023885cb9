// Sleep panel: run a consolidation cycle or a dry run (with the proposed changes as a diff),
// live progress per phase, the report, the history of cycles, undo, and the settings.

import { api, onProgress, waitJob, type CommandError } from "./api";
import { h, clear, fmtTime, fmtValue, toast } from "./dom";
import { kvTable, settingsForm } from "./kv";
import { bus, select } from "./store";
import { CurationPanel } from "./curate";
import { renderReview } from "./review";
import type { AutoSleepSettings, JobId, ProposedMemory, Review, SleepConfig, SleepReport } from "./types";

export class SleepPanel {
  readonly el: HTMLElement;
  private phasesEl: HTMLElement;
  private reportEl: HTMLElement;
  private historyEl: HTMLElement;
  private settingsEl: HTMLElement;
  private form: { el: HTMLElement; read: () => SleepConfig } | null = null;
  private runningJob: JobId<"sleep"> | null = null;
  private buttons: HTMLButtonElement[] = [];
  private backend: HTMLSelectElement;
  private curation = new CurationPanel();

  constructor() {
    this.phasesEl = h("div", { class: "phases", "data-testid": "sleep-phases" });
    this.reportEl = h("div", { class: "report", "data-testid": "sleep-report" });
    this.historyEl = h("div", { class: "history-list", "data-testid": "sleep-history" });
    this.settingsEl = h("details", { class: "section" }, h("summary", null, "Settings"));
    const review = h("button", { class: "primary", "data-testid": "sleep-review", title: "Compute the cycle, then accept or reject its proposals before anything is written", onclick: () => void this.run(true, false, true) }, "Review a cycle…");
    const run = h("button", { "data-testid": "sleep-run", title: "Run the whole cycle without review (it can still be undone)", onclick: () => void this.run(false) }, "Run without review");
    const dry = h("button", { "data-testid": "sleep-dry-run", onclick: () => void this.run(true) }, "Dry run");
    this.buttons = [review, run, dry];
    this.backend = h("select", { "aria-label": "compression backend", "data-testid": "sleep-backend" },
      h("option", { value: "extractive" }, "extractive (offline)"),
      h("option", { value: "chat", disabled: true }, "LLM endpoint (set one in Settings)"));
    this.el = h("section", { class: "panel-view sleep" },
      h("div", { class: "toolbar" }, review, run, dry, this.backend,
        h("span", { class: "muted" }, "Replay → compress → schemas → forget & decay. Nothing is ever hard-deleted; every cycle can be undone.")),
      h("div", { class: "cols" },
        h("div", { class: "col" }, h("h3", null, "Progress"), this.phasesEl, h("h3", null, "Report"), this.reportEl),
        h("div", { class: "col narrow" }, h("h3", null, "History"), this.historyEl, this.settingsEl, this.curation.el)));
    bus.on("data", () => { if (!this.el.hidden && this.el.isConnected) this.curation.dataChanged(); }, "sleep-curation");
    void onProgress((p) => {
      if (p.kind === "sleep" || p.kind === "sleep-undo") this.progress(p.stage, p.done, p.total);
    });
  }

  async refresh(): Promise<void> {
    void this.curation.refresh();
    const llm = await api.llmSettings().catch(() => null);
    const chat = this.backend.querySelector('option[value="chat"]') as HTMLOptionElement;
    chat.disabled = !llm;
    chat.textContent = llm ? `LLM: ${llm.model} at ${llm.base_url}` : "LLM endpoint (set one in Settings)";
    if (!llm) this.backend.value = "extractive";
    if (!this.form) {
      try {
        const cfg = await api.sleepConfig();
        this.form = settingsForm(cfg);
        this.settingsEl.append(this.autoSleepForm(await api.autoSleepSettings()), this.form.el);
      } catch (e) {
        this.settingsEl.append(h("p", { class: "muted" }, (e as Error).message));
      }
    }
    try {
      const hist = await api.sleepHistory(50);
      clear(this.historyEl);
      if (!hist.length) this.historyEl.append(h("p", { class: "muted" }, "No cycles yet."));
      for (const r of hist) {
        const created = r.created?.length ?? 0, changed = r.changed?.length ?? 0, forgotten = r.forgotten?.length ?? 0;
        this.historyEl.append(h("div", { class: "hrow clickable", "data-testid": `sleep-cycle-${r.id}`, onclick: () => this.showReport(r) },
          h("b", null, `#${r.id}`), h("span", { class: `state s-${r.status}` }, r.status), h("span", { class: "muted" }, fmtTime(r.started_at)),
          h("span", null, `+${created} ~${changed} −${forgotten}`),
          r.status !== "undone" ? h("button", { class: "small", onclick: (e: Event) => { e.stopPropagation(); void this.undo(r.id!); } }, "Undo") : null));
      }
    } catch (e) {
      clear(this.historyEl);
      this.historyEl.append(h("p", { class: "muted" }, (e as Error).message));
    }
  }

  /** Auto-sleep: on/off and the threshold, saved in the store (it survives restarts). */
  private autoSleepForm(s: AutoSleepSettings): HTMLElement {
    const on = h("input", { type: "checkbox", "data-testid": "auto-sleep-enabled" }) as HTMLInputElement;
    on.checked = s.enabled;
    const every = h("input", { type: "number", min: "1", value: String(s.every), "aria-label": "episodes per cycle" }) as HTMLInputElement;
    const save = h("button", { class: "small", onclick: () => {
      api.setAutoSleep({ ...s, enabled: on.checked, every: Math.max(1, Number(every.value) || s.every) })
        .then(() => toast(on.checked ? "auto-sleep on" : "auto-sleep off"))
        .catch((e) => toast((e as Error).message, "error"));
    } }, "Save");
    return h("div", { class: "auto-sleep" },
      h("label", null, on, " Auto-sleep after "), every, h("span", null, " new episodes "), save);
  }

  private progress(stage: string, done: number, total: number): void {
    let row = this.phasesEl.querySelector(`[data-phase="${CSS.escape(stage)}"]`) as HTMLElement | null;
    if (!row) {
      row = h("div", { class: "phase", "data-phase": stage }, h("span", { class: "name" }, stage), h("progress", { max: "1", value: "0" }), h("span", { class: "muted n" }));
      this.phasesEl.append(row);
    }
    const bar = row.querySelector("progress") as HTMLProgressElement;
    bar.max = Math.max(1, total);
    bar.value = done;
    (row.querySelector(".n") as HTMLElement).textContent = `${done}/${total}`;
  }

  private async run(dryRun: boolean, force = false, reviewAfter = false, review: Review | null = null): Promise<void> {
    if (this.runningJob !== null) return;
    clear(this.phasesEl);
    clear(this.reportEl);
    this.buttons.forEach((b) => (b.disabled = true));
    const cancel = h("button", { class: "small", onclick: () => this.runningJob !== null && void api.cancelJob(this.runningJob) }, "Cancel");
    this.phasesEl.append(cancel);
    try {
      this.runningJob = await api.sleepRun(dryRun, this.form?.read() ?? null, this.backend.value, force, review);
      const report = await waitJob(this.runningJob);
      if (reviewAfter) {
        clear(this.reportEl);
        const view = await renderReview(report, (accepted) => this.run(false, false, false, accepted));
        this.reportEl.append(view.el);
      } else {
        this.showReport(report);
      }
      if (!dryRun) {
        toast(`sleep cycle #${report.id} finished`);
        bus.emit("data");
      }
      await this.refresh();
    } catch (e) {
      toast((e as Error).message, "error");
      if ((e as CommandError).code === "loss_guard") this.offerForce(e as Error);
      await this.refresh();
    } finally {
      this.runningJob = null;
      cancel.remove();
      this.buttons.forEach((b) => (b.disabled = false));
    }
  }

  /** The loss guard refused the cycle: say what it would have done and offer to force it. */
  private offerForce(e: Error): void {
    clear(this.reportEl);
    this.reportEl.append(h("div", { class: "guard", "data-testid": "loss-guard" },
      h("p", { class: "error" }, e.message),
      h("p", { class: "muted" }, "A dry run lists every state change it would make. Pinned memories are never touched."),
      h("div", { class: "actions" },
        h("button", { onclick: () => void this.run(true) }, "Dry run"),
        h("button", { class: "danger", "data-testid": "sleep-force", onclick: () => void this.run(false, true) }, "Run anyway"))));
  }

  private async undo(id: number): Promise<void> {
    if (!confirm(`Undo sleep cycle #${id}? Everything it created is removed and everything it changed is restored.`)) return;
    try {
      const job = await api.sleepUndo(id);
      const report = await waitJob(job);
      toast(`sleep cycle #${id} undone`);
      this.showReport(report);
      bus.emit("data");
      await this.refresh();
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private showReport(r: SleepReport): void {
    clear(this.reportEl);
    this.reportEl.append(
      h("div", { class: "kv" }, h("b", null, r.dry_run ? "Dry run (nothing written)" : `Cycle #${r.id}`),
        h("span", { class: `state s-${r.status}` }, r.status), h("span", { class: "muted" }, `${fmtTime(r.started_at)} · ${r.trigger}`)),
      kvTable(r, ["id", "trigger", "status", "started_at", "ended_at", "dry_run"]),
      h("h4", null, "Phases"),
      h("table", { class: "phases-table" },
        h("thead", null, h("tr", null, h("th", null, "phase"), h("th", { class: "num" }, "ms"), h("th", null, "committed"), h("th", null, "counts"))),
        h("tbody", null, ...(r.phases ?? []).map((p) =>
          h("tr", null, h("td", null, String(p.name ?? "")), h("td", { class: "num" }, String(p.millis ?? "")),
            h("td", null, p.committed ? "yes" : "no"),
            h("td", { class: "mono small" }, Object.entries(p.counts ?? {}).map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`).join(" · ")))))),
      r.loss ? h("p", { "data-testid": "loss-budget", class: lossClass(r) },
        `Loss guard: ${r.dry_run ? "would archive or forget" : "archived or forgot"} ${r.loss.lost} of ${r.loss.live} live memories `
        + `(${(share(r) * 100).toFixed(1)}%; limit ${(r.loss.limit_share * 100).toFixed(0)}%${r.loss.forced ? ", forced" : ""}).`) : "",
      ...(r.notes.length
        ? [h("h4", null, "Notes"), h("ul", null, ...r.notes.map((n) => h("li", null, n)))]
        : []));
    const created = r.created ?? [];
    if (created.length) {
      this.reportEl.append(h("h4", null, `${r.dry_run ? "Would create" : "Created"} (${created.length})`),
        h("div", { class: "created" }, ...created.slice(0, 200).map((c) => this.createdItem(c))));
    }
    const changed = r.changed ?? [];
    if (changed.length) {
      this.reportEl.append(h("h4", null, `${r.dry_run ? "Would change" : "Changed"} (${changed.length})`),
        h("table", { class: "diff-table" }, h("thead", null, h("tr", null, h("th", null, "memory"), h("th", null, "field"), h("th", null, "before"), h("th", null, "after"))),
          h("tbody", null, ...changed.slice(0, 300).map((c) => {
            const id = Number(c.memory_id);
            return h("tr", { class: "clickable", onclick: () => select([id], id) },
              h("td", null, `#${id}`), h("td", null, String(c.field ?? "")),
              h("td", { class: "old" }, fmtValue(c.old)), h("td", { class: "new" }, fmtValue(c.new)));
          }))));
    }
    const forgotten = r.forgotten ?? [];
    if (forgotten.length) {
      this.reportEl.append(h("h4", null, `${r.dry_run ? "Would forget" : "Forgotten"} (${forgotten.length})`),
        h("div", { class: "idlist" }, ...forgotten.slice(0, 300).map((id) =>
          h("button", { class: "small", onclick: () => select([id], id) }, `#${id}`))));
    }
  }

  private createdItem(c: ProposedMemory): HTMLElement {
    const id = c.id;
    return h("div", { class: `created-item ${id !== null ? "clickable" : ""}`, onclick: () => id !== null && select([id], id) },
      h("span", { class: `kind k-${c.kind}` }, c.kind), id !== null ? h("span", { class: "id" }, `#${id}`) : null,
      h("div", { class: "text" }, c.text),
      c.derived_from.length
        ? h("div", { class: "muted" }, `from ${c.derived_from.length} memories`, c.backend ? ` · ${c.backend}` : "")
        : null);
  }
}

function share(r: SleepReport): number {
  return r.loss && r.loss.live ? r.loss.lost / r.loss.live : 0;
}

function lossClass(r: SleepReport): string {
  return r.loss && !r.loss.forced && share(r) > r.loss.limit_share ? "error" : "muted";
}
