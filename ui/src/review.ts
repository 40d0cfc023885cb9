// Sleep review: a dry run's proposals, grouped (summaries and state changes per concept
// cluster, state changes per transition), each accepted or rejected alone or per group;
// "Commit" writes only the accepted ones, as one cycle that can be undone. A schema needs
// every summary it is built on, so rejecting a summary rejects the schemas over it.
// Memory text is shown as text, never as HTML.

import { api } from "./api";
import { h, toast } from "./dom";
import { select, state } from "./store";
import type { ClusterInfo, FieldChange, ProposedMemory, Review, SleepReport } from "./types";

/// The cluster label of a memory (from the point columns), or "no cluster".
function clusterOf(id: number, labels: Map<number, string>): string {
  const p = state.points;
  const row = p?.index.get(id);
  if (!p || row === undefined) return "no cluster";
  const c = p.clusters[row];
  return c < 0 ? "no cluster" : labels.get(c) ?? `cluster ${c}`;
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    let g = m.get(k);
    if (!g) m.set(k, (g = []));
    g.push(t);
  }
  return new Map([...m.entries()].sort((a, b) => b[1].length - a[1].length));
}

/// A checkbox bound to a set of keys of `accepted`: checked when all are accepted.
function groupBox(keys: string[], accepted: Set<string>, changed: () => void, testid?: string): HTMLInputElement {
  const box = h("input", { type: "checkbox", "data-testid": testid }) as HTMLInputElement;
  box.checked = keys.every((k) => accepted.has(k));
  box.addEventListener("click", (e) => e.stopPropagation());
  box.addEventListener("change", () => {
    for (const k of keys) box.checked ? accepted.add(k) : accepted.delete(k);
    changed();
  });
  return box;
}

export interface ReviewView {
  el: HTMLElement;
}

/// Renders the review of dry run `r`; `commit` receives the accepted proposals.
export async function renderReview(r: SleepReport, commit: (review: Review) => Promise<void>): Promise<ReviewView> {
  const clusters: ClusterInfo[] = await api.clusters().catch(() => []);
  const labels = new Map(clusters.map((c) => [c.id, c.label]));
  const summaries = r.created.map((c, i) => ({ c, i })).filter((x) => x.c.kind === "summary");
  const schemas = r.created.map((c, i) => ({ c, i })).filter((x) => x.c.kind === "schema");
  const states = r.changed.filter((c) => c.field === "state");
  const decays = r.changed.filter((c) => c.field === "importance");
  // Every proposal accepted to begin with; keys: s<index>, k<index>, m<memory>, decay.
  const accepted = new Set<string>([
    ...summaries.map((x) => `s${x.i}`), ...schemas.map((x) => `k${x.i}`), ...states.map((c) => `m${c.memory_id}`),
    ...(decays.length ? ["decay"] : []),
  ]);
  const all = new Set(accepted);
  const count = h("span", { "data-testid": "review-count" });
  const boxes: { box: HTMLInputElement; keys: string[] }[] = [];
  const refresh = () => {
    // A schema over a rejected summary cannot be written.
    for (const x of schemas) {
      if (x.c.derived_from_proposed.some((j) => !accepted.has(`s${j}`))) accepted.delete(`k${x.i}`);
    }
    for (const b of boxes) b.box.checked = b.keys.every((k) => accepted.has(k));
    count.textContent = `${accepted.size} of ${all.size} proposals accepted`;
  };
  const bind = (keys: string[], testid?: string) => {
    const box = groupBox(keys, accepted, refresh, testid);
    boxes.push({ box, keys });
    return box;
  };

  // Each summary with its sources (a click shows one in the detail pane and the Space).
  const summaryItem = (x: { c: ProposedMemory; i: number }) =>
    h("div", { class: "review-item" }, bind([`s${x.i}`], "review-summary"),
      h("div", null, h("span", { class: "text" }, x.c.text),
        h("div", { class: "muted small" }, `from ${x.c.derived_from.length} memories: `,
          ...x.c.derived_from.slice(0, 16).map((id) => h("button", { class: "link", onclick: () => select([id], id) }, `#${id}`)),
          x.c.derived_from.length > 16 ? " …" : "")));
  const stateItem = (c: FieldChange) =>
    h("label", { class: "review-item" }, bind([`m${c.memory_id}`]), `#${c.memory_id} `, h("span", { class: "muted" }, `${String(c.old)} → ${String(c.new)}`));

  const section = (title: string, groups: Map<string, HTMLElement[]>, keysOf: Map<string, string[]>, testid: string) =>
    h("details", { class: "review-section", open: true, "data-testid": testid },
      h("summary", null, title),
      ...[...groups.entries()].map(([name, items]) =>
        h("details", { class: "review-group" },
          h("summary", null, bind(keysOf.get(name)!, `${testid}-group`), ` ${name} (${items.length})`),
          ...items.slice(0, 300), items.length > 300 ? h("p", { class: "muted" }, `… ${items.length - 300} more (the group box accepts or rejects them all)`) : null)));

  const bySummaryCluster = groupBy(summaries, (x) => clusterOf(x.c.derived_from[0] ?? -1, labels));
  const summaryGroups = new Map([...bySummaryCluster].map(([k, xs]) => [k, xs.map(summaryItem)]));
  const summaryKeys = new Map([...bySummaryCluster].map(([k, xs]) => [k, xs.map((x) => `s${x.i}`)]));
  const byTransition = groupBy(states, (c) => `${String(c.old)} → ${String(c.new)} · ${clusterOf(c.memory_id, labels)}`);
  const stateGroups = new Map([...byTransition].map(([k, cs]) => [k, cs.map(stateItem)]));
  const stateKeys = new Map([...byTransition].map(([k, cs]) => [k, cs.map((c) => `m${c.memory_id}`)]));

  const commitBtn = h("button", { class: "primary", "data-testid": "review-commit" }, "Commit accepted");
  commitBtn.addEventListener("click", async () => {
    if (!accepted.size) {
      toast("nothing is accepted: accept a proposal, or close the review", "error");
      return;
    }
    commitBtn.disabled = true;
    try {
      await commit({
        now_ms: r.config.now_ms ?? r.started_at,
        summaries: summaries.filter((x) => accepted.has(`s${x.i}`)).map((x) => x.c.derived_from),
        schemas: schemas.filter((x) => accepted.has(`k${x.i}`)).map((x) => x.c.text),
        states: states.filter((c) => accepted.has(`m${c.memory_id}`)).map((c) => c.memory_id),
        decay: accepted.has("decay"),
      });
    } finally {
      commitBtn.disabled = false;
    }
  });
  const setAll = (on: boolean) => {
    for (const k of all) on ? accepted.add(k) : accepted.delete(k);
    refresh();
  };
  const el = h("div", { class: "review", "data-testid": "sleep-review" },
    h("p", null, "Review: accept or reject each proposal, or a whole group. Only accepted proposals are written, as one cycle that can be undone."),
    h("div", { class: "actions" }, commitBtn,
      h("button", { "data-testid": "review-accept-all", onclick: () => setAll(true) }, "Accept all"),
      h("button", { "data-testid": "review-reject-all", onclick: () => setAll(false) }, "Reject all"), count),
    summaries.length ? section(`Summaries (${summaries.length}), by concept cluster`, summaryGroups, summaryKeys, "review-summaries") : null,
    schemas.length
      ? h("details", { class: "review-section", open: true, "data-testid": "review-schemas" }, h("summary", null, `Schemas (${schemas.length})`),
        ...schemas.map((x) => h("label", { class: "review-item" }, bind([`k${x.i}`], "review-schema"), h("span", { class: "text" }, x.c.text),
          h("span", { class: "muted" }, ` · over ${x.c.derived_from.length + x.c.derived_from_proposed.length} summaries`
            + (x.c.derived_from_proposed.length ? ` (${x.c.derived_from_proposed.length} proposed here: rejecting one rejects this schema)` : "")))))
      : null,
    states.length ? section(`State changes (${states.length}), by transition and cluster`, stateGroups, stateKeys, "review-states") : null,
    decays.length
      ? h("label", { class: "review-item" }, bind(["decay"], "review-decay"), `Importance decay of ${decays.length} memories`)
      : null);
  refresh();
  return { el };
}
