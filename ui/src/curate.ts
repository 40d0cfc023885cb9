// Curation of a selection (lasso, shift-click, a cluster, a search's hits): merge, pin,
// unpin, tag, delete and restore. Every action is previewed first (what it changes, the
// merged text, which memories it leaves alone and why), runs only on confirmation, and
// offers its undo afterwards. Also the near-duplicate finder and the curation log.
// Memory text is shown as text, never as HTML.

import { api } from "./api";
import { modal } from "./dialogs";
import { h, clear, fmtInt, fmtTime, fmtValue, toast } from "./dom";
import { selectionLabel } from "./panels";
import { bus, select, state } from "./store";
import type { CurateAction, CurationReport, DuplicateGroup } from "./types";

const VERB: Record<string, string> = {
  merge: "Merge", delete: "Delete", restore: "Restore", pin: "Pin", unpin: "Unpin", tag: "Tag", set_importance: "Set importance",
  importance: "Set importance", relabel_cluster: "Rename cluster", relabel: "Rename cluster",
  move_to_cluster: "Move to cluster", move: "Move to cluster",
};

/// Asks for a cluster's new name, then previews the rename.
export function renameCluster(cluster: number, current: string): void {
  const input = h("input", { type: "text", value: current, "aria-label": "cluster name", "data-testid": "cluster-name" }) as HTMLInputElement;
  const go = h("button", { class: "primary", "data-testid": "cluster-name-ok" }, "Preview");
  const { close } = modal(`Rename cluster #${cluster}`,
    h("p", { class: "muted" }, "Liquid steps keep a name you give; a full re-clustering starts over. Undo restores the old name."),
    h("label", { class: "stack" }, "name", input),
    h("div", { class: "actions" }, go, h("button", { onclick: () => close() }, "Cancel")));
  go.addEventListener("click", () => {
    close();
    void preview({ op: "relabel_cluster", cluster, label: input.value });
  });
}

/// The action bar for a selection of `ids` (shown above the detail of its primary memory).
/// `selected` is the whole selection's size when only its first `ids.length` are acted on.
export function selectionActions(ids: number[], selected = ids.length): HTMLElement {
  const n = ids.length;
  const tagInput = h("input", { type: "text", placeholder: "tag", "aria-label": "tag", size: "8", "data-testid": "curate-tag-input" });
  const importance = h("input", { type: "number", min: "0", max: "1", step: "0.05", placeholder: "0–1", "aria-label": "importance", "data-testid": "curate-importance-input" }) as HTMLInputElement;
  return h("div", { class: "curate-bar", "data-testid": "curate-bar" },
    h("span", { class: "muted", "data-testid": "curate-count" }, selectionLabel(n, selected)),
    n > 1 ? h("button", { "data-testid": "curate-merge", onclick: () => void preview({ op: "merge", ids, text: null }) }, `Merge ${fmtInt(n)}…`) : null,
    h("button", { "data-testid": "curate-pin", title: "Pinned memories are never compressed, decayed, archived or forgotten by a sleep cycle", onclick: () => void preview({ op: "pin", ids }) }, "Pin"),
    h("button", { "data-testid": "curate-unpin", onclick: () => void preview({ op: "unpin", ids }) }, "Unpin"),
    n > 1 ? h("button", { "data-testid": "curate-delete", onclick: () => void preview({ op: "delete", ids }) }, `Delete ${fmtInt(n)}…`) : null,
    h("button", { "data-testid": "curate-restore", title: "Bring back deleted or forgotten memories of the selection", onclick: () => void preview({ op: "restore", ids }) }, "Restore"),
    tagInput,
    h("button", { "data-testid": "curate-tag", onclick: () => {
      const t = tagInput.value.trim();
      if (t) void preview({ op: "tag", ids, add: [t], remove: [] });
      else toast("type a tag first", "error");
    } }, "Tag"),
    moveSelect(ids),
    importance,
    h("button", { "data-testid": "curate-importance", onclick: () => {
      const v = Number(importance.value);
      if (importance.value !== "" && v >= 0 && v <= 1) void preview({ op: "set_importance", ids, importance: v });
      else toast("importance is a number from 0 to 1", "error");
    } }, "Set importance"));
}

/// "Move to cluster…": the clusters by label; choosing one previews the move.
function moveSelect(ids: number[]): HTMLSelectElement {
  const labels = [...state.clusterLabels.entries()].sort((a, b) => a[1].localeCompare(b[1]));
  const sel = h("select", { "aria-label": "move to cluster", "data-testid": "curate-move", title: "Place in a concept cluster; liquid steps leave it there" },
    h("option", { value: "" }, "Move to cluster…"),
    ...labels.map(([id, label]) => h("option", { value: String(id) }, `${label} (#${id})`))) as HTMLSelectElement;
  sel.addEventListener("change", () => {
    const cluster = Number(sel.value);
    sel.value = "";
    if (cluster || cluster === 0) void preview({ op: "move_to_cluster", ids, cluster });
  });
  return sel;
}

/// A logged field's value as a person reads it (a cluster membership by its label).
function showField(field: string, v: unknown): string {
  if (field === "cluster") {
    if (v === null || v === undefined) return "no cluster";
    const c = (v as { cluster: number; by_person?: boolean });
    const label = state.clusterLabels.get(c.cluster) ?? `cluster ${c.cluster}`;
    return `${label} (#${c.cluster})${c.by_person ? ", placed by a person" : ""}`;
  }
  return fmtValue(v);
}

/// Previews `action`, shows what it would do, and runs it on confirmation.
export async function preview(action: CurateAction): Promise<void> {
  let p: CurationReport;
  try {
    p = await api.curate(action, true);
  } catch (e) {
    toast((e as Error).message, "error");
    return;
  }
  const verb = VERB[action.op] ?? action.op;
  const text = action.op === "merge"
    ? h("textarea", { rows: "4", "aria-label": "merged text", "data-testid": "merge-text" }) as HTMLTextAreaElement
    : null;
  if (text && p.merged) text.value = p.merged.text;
  const changes = h("table", { class: "diff-table" },
    h("thead", null, h("tr", null, h("th", null, "memory"), h("th", null, "field"), h("th", null, "before"), h("th", null, "after"))),
    h("tbody", null, ...p.changed.slice(0, 200).map((c) =>
      h("tr", null, h("td", null, `#${c.memory_id}`), h("td", null, c.field), h("td", { class: "old" }, showField(c.field, c.old)), h("td", { class: "new" }, showField(c.field, c.new))))));
  const sources = action.op === "merge" ? await sourceTexts(action.ids) : null;
  const go = h("button", { class: "primary", "data-testid": "curate-confirm" }, verb);
  const summary = action.op === "merge"
    ? `${action.ids.length} memories become one new ${p.merged?.kind ?? "memory"}; the sources are archived (kept, linked from it) and come back with Undo.`
    : p.relabel
      ? `Cluster #${p.relabel.cluster} "${p.relabel.old}" becomes "${p.relabel.new}"; liquid steps keep the name, Undo restores the old one.`
      : `${p.changed.length} change${p.changed.length === 1 ? "" : "s"}; Undo reverts ${p.changed.length === 1 ? "it" : "them"} exactly.`;
  const { close } = modal(`${verb}: preview`,
    h("p", { "data-testid": "curate-summary" }, summary),
    sources,
    text ? h("label", { class: "stack" }, `Merged text (drafted from the source that says the most; edit it):`, text) : null,
    p.changed.length ? changes : null,
    p.notes.length ? h("ul", { class: "muted" }, ...p.notes.map((n) => h("li", null, n))) : null,
    h("div", { class: "actions" }, go, h("button", { onclick: () => close() }, "Cancel")));
  go.addEventListener("click", async () => {
    go.disabled = true;
    const run: CurateAction = action.op === "merge" && text ? { ...action, text: text.value } : action;
    try {
      const done = await api.curate(run, false);
      close();
      offerUndo(done);
      bus.emit("data");
      const merged = done.merged?.id;
      if (merged !== undefined && merged !== null) select([merged], merged);
    } catch (e) {
      go.disabled = false;
      toast((e as Error).message, "error");
    }
  });
}

async function sourceTexts(ids: number[]): Promise<HTMLElement> {
  const rows = await Promise.all(ids.slice(0, 50).map((id) => api.get(id).then((d) => d.memory).catch(() => null)));
  return h("div", { class: "merge-sources", "data-testid": "merge-sources" },
    ...rows.filter((m) => m !== null).map((m) =>
      h("div", { class: "created-item" }, h("span", { class: `kind k-${m!.kind}` }, m!.kind), h("span", { class: "id" }, `#${m!.id}`),
        h("span", { class: "muted" }, ` ${m!.who ?? ""}`), h("div", { class: "text" }, m!.text))),
    ids.length > 50 ? h("p", { class: "muted" }, `… and ${ids.length - 50} more`) : null);
}

/// A notice that the curation ran, with its Undo, for 12 seconds.
function offerUndo(r: CurationReport): void {
  const what = r.merged ? `Merged ${r.merged.sources.length} memories into #${r.merged.id}`
    : r.relabel ? `Cluster #${r.relabel.cluster} renamed "${r.relabel.new}"` : `${VERB[r.op] ?? r.op}: ${r.changed.length} changed`;
  const t = toast(`${what} (curation #${r.id}). `, "info", {
    label: "Undo", testid: "curate-undo",
    run: () => void undoCuration(r.id!, r.merged?.id ?? null).then(() => t.remove()),
  });
  t.dataset.testid = "curate-done";
}

/// Undoes curation `id`; `mergedId`: the memory it merged into, if any (selected now, so
/// the detail pane moves to the sources).
export async function undoCuration(id: number, mergedId: number | null = null): Promise<void> {
  try {
    const r = await api.curateUndo(id);
    toast(`curation #${id} (${r.op}) undone`);
    // The merged memory is gone: show its sources, back as they were.
    if (r.merged && mergedId !== null && state.primary === mergedId) select(r.merged.sources, r.merged.sources[0]);
    bus.emit("data");
  } catch (e) {
    toast((e as Error).message, "error");
  }
}

/// Near-duplicate groups (with a threshold to set) and the curation log, for the Sleep view.
export class CurationPanel {
  readonly el: HTMLElement;
  private groupsEl = h("div", { class: "dup-groups", "data-testid": "dup-groups" });
  private logEl = h("div", { class: "history-list", "data-testid": "curation-log" });
  private threshold = h("input", { type: "number", min: "0.5", max: "1", step: "0.01", value: "0.92", "aria-label": "similarity threshold" }) as HTMLInputElement;

  constructor() {
    this.el = h("div", { class: "curation" },
      h("h3", null, "Near-duplicates"),
      h("div", { class: "toolbar" }, h("label", null, "cosine ≥ ", this.threshold),
        h("button", { "data-testid": "dup-find", onclick: () => void this.find() }, "Find")),
      h("p", { class: "muted small" }, "Same kind and speaker, the same numbers; turns only within their conversation, and not short ones (\"Thanks!\")."),
      this.groupsEl,
      h("h3", null, "Curations"), this.logEl);
  }

  /// The store changed: the log, and the duplicate groups if they are shown.
  dataChanged(): void {
    void this.refresh();
    if (state.duplicates) void this.find();
  }

  async refresh(): Promise<void> {
    try {
      const log = await api.curations(30);
      clear(this.logEl);
      if (!log.length) this.logEl.append(h("p", { class: "muted" }, "No curations yet: select memories and merge, pin or tag them."));
      for (const r of log) {
        this.logEl.append(h("div", { class: "hrow", "data-testid": `curation-${r.id}` },
          h("b", null, `#${r.id}`), h("span", null, VERB[r.op] ?? r.op), h("span", { class: `state s-${r.status}` }, r.status),
          h("span", { class: "muted" }, `${fmtTime(r.at)} · ${r.by}`),
          h("span", null, r.merged ? `${r.merged.sources.length} → 1` : r.relabel ? `cluster #${r.relabel.cluster}` : `${r.changed.length} changed`),
          r.status !== "undone" ? h("button", { class: "small", onclick: () => void undoCuration(r.id!, r.merged?.id ?? null).then(() => this.refresh()) }, "Undo") : null));
      }
    } catch (e) {
      clear(this.logEl);
      this.logEl.append(h("p", { class: "muted" }, (e as Error).message));
    }
  }

  private async find(): Promise<void> {
    let groups: DuplicateGroup[];
    try {
      groups = await api.duplicates(Number(this.threshold.value));
    } catch (e) {
      clear(this.groupsEl);
      this.groupsEl.append(h("p", { class: "error" }, (e as Error).message));
      return;
    }
    // Replaced in one go once the answer is in, so the list never stands empty meanwhile.
    clear(this.groupsEl);
    const total = groups.reduce((s, g) => s + g.ids.length, 0);
    state.duplicates = groups.map((g) => g.ids);
    bus.emit("duplicates");
    this.groupsEl.append(h("p", { "data-testid": "dup-count" }, `${groups.length} group${groups.length === 1 ? "" : "s"} (${total} memories), linked in pink in the Space `,
      groups.length ? h("button", { class: "small", onclick: () => { state.duplicates = null; bus.emit("duplicates"); this.groupsEl.replaceChildren(); } }, "Clear") : null));
    for (const g of groups.slice(0, 100)) {
      this.groupsEl.append(h("div", { class: "dup-group" },
        h("div", null, h("b", null, `${g.ids.length} × ${g.kind}`), h("span", { class: "muted" }, ` by ${g.who ?? "?"} · min cosine ${g.min_similarity.toFixed(3)}`),
          h("button", { class: "small", title: "select the group (it is highlighted in the Space)", onclick: () => select(g.ids, g.ids[0]) }, "Select"),
          h("button", { class: "small", "data-testid": "dup-merge", onclick: () => void preview({ op: "merge", ids: g.ids, text: null }) }, "Merge group…")),
        ...g.texts.slice(0, 3).map((t) => h("div", { class: "text small" }, t))));
    }
  }
}
