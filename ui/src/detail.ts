// Detail pane: every field of the selected memory, its provenance chain, links, history
// (including what sleep cycles did to it), and edit / delete / restore.

import { api } from "./api";
import { h, append, clear, fmtInt, fmtTime, fmtNum, toast } from "./dom";
import { bus, select, state } from "./store";
import { selectionActions } from "./curate";
import { timed } from "./render/perf";
import type { HistoryEntry, Memory, MemoryDetail, MemorySleepEvent, MemoryUpdate, MemState } from "./types";
import { STATES } from "./types";

export class Detail {
  readonly el: HTMLElement;
  private body: HTMLElement;
  private current: MemoryDetail | null = null;
  private sleeps: MemorySleepEvent[] = [];
  /// What the pane shows, serialised: a store change that leaves the memory as it was
  /// redraws nothing (while a job runs a change arrives every second, and the pane's style,
  /// layout and paint are most of what a redraw costs).
  private shown = "";
  private loading = 0;

  constructor() {
    this.body = h("div", { class: "detail-body", "data-testid": "detail" });
    this.el = h("section", { class: "detail panel" }, this.body);
    bus.on("selection", () => void this.load(), "detail");
    bus.on("data", () => void this.load(true), "detail");
    bus.on("asof", () => void this.load(), "detail");
    this.empty();
  }

  private empty(): void {
    clear(this.body);
    this.body.append(h("div", { class: "placeholder" },
      h("p", null, "Select a memory in the list, the 3D view or the graph."),
      h("p", { class: "muted" }, "Shift-click adds to the selection; drag with Shift in the 3D view to lasso.")));
  }

  /// Shows the primary selection; `unlessSame` keeps the pane as it is when the memory, its
  /// sleep history and the selection's size are what it already shows.
  async load(unlessSame = false): Promise<void> {
    const id = state.primary;
    const token = ++this.loading;
    if (id === null) {
      this.current = null;
      this.shown = "";
      this.empty();
      return;
    }
    try {
      const [d, sleeps] = await Promise.all([api.get(id), api.memorySleepHistory(id).catch(() => [])]);
      if (token !== this.loading) return;
      const shown = JSON.stringify([d, sleeps, state.selection.size]);
      if (unlessSame && shown === this.shown && this.current) return;
      this.shown = shown;
      this.current = d;
      this.sleeps = sleeps;
      // (a span of its own: the page's main-thread record, render/perf.ts)
      timed("detail.render", () => this.render(d));
    } catch (e) {
      if (token !== this.loading) return;
      this.shown = "";
      clear(this.body);
      this.body.append(h("div", { class: "placeholder error" }, (e as Error).message));
    }
  }

  private render(d: MemoryDetail): void {
    const m = d.memory;
    clear(this.body);
    const multi = state.selection.size > 1
      ? h("div", { class: "multi" }, `${fmtInt(state.selection.size)} selected · showing #${m.id}`)
      : null;
    const actions = h("div", { class: "actions" },
      h("button", { onclick: () => this.edit(m), "data-testid": "edit" }, "Edit"),
      m.deleted_at
        ? h("button", { onclick: () => void this.restore(m.id), "data-testid": "restore" }, "Restore")
        : h("button", { onclick: () => void this.remove(m.id, false), "data-testid": "delete" }, "Delete"),
      h("button", { class: "danger", onclick: () => void this.remove(m.id, true) }, "Delete permanently"));
    // Up to 10,000 selected memories are acted on at once (the engine's limit per action).
    const ids = state.selection.size > 1 ? state.selection.take(10_000) : [m.id];
    // As it was at the time scrubber's instant: read-only (an edit would change it now).
    const past = d.as_of !== null
      ? h("div", { class: "past-note", "data-testid": "detail-past" },
        `As it was at ${new Date(d.as_of).toISOString().replace("T", " ").slice(0, 19)} UTC. Go back to now to change it.`)
      : null;
    append(this.body,
      multi,
      past,
      past ? null : selectionActions(ids, Math.max(ids.length, state.selection.size)),
      h("header", null,
        h("span", { class: `kind k-${m.kind}` }, m.kind),
        h("span", { class: "id" }, `#${m.id}`),
        h("span", { class: `state s-${m.state}` }, m.state),
        m.pinned ? h("span", { class: "state s-pinned", title: "never compressed, decayed, archived or forgotten by a sleep cycle", "data-testid": "pinned" }, "pinned") : null,
        m.deleted_at ? h("span", { class: "state s-deleted" }, `deleted ${fmtTime(m.deleted_at)}`) : null,
        m.superseded_by !== null
          ? h("span", { class: "state s-superseded", "data-testid": "superseded" },
            `superseded by #${m.superseded_by}${m.valid_to === null ? "" : ` on ${fmtTime(m.valid_to)}`}`)
          : null),
      h("div", { class: "mtext", "data-testid": "detail-text" }, m.text),
      past ? null : actions,
      section("5W1H", grid([
        ["who", m.who], ["what", m.what], ["when", m.when], ["where", m.where], ["why", m.why], ["how", m.how],
      ])),
      section("Scores and provenance", grid([
        ["importance", fmtNum(m.importance)], ["novelty", fmtNum(m.novelty)],
        ["L-score", fmtNum(m.l_score)], ["source", m.source],
        ["accesses", String(m.access_count)], ["last used", fmtTime(m.last_accessed)],
        ["tokens", m.tokens === null ? "—" : String(m.tokens)],
        ["conversation", m.conversation], ["session", m.session],
        ["occurred", fmtTime(m.occurred_at)], ["created", fmtTime(m.created_at)], ["updated", fmtTime(m.updated_at)],
        ["tags", m.tags.length ? m.tags.join(", ") : "—"],
      ])),
      detailsSection(m),
      Object.keys(m.metadata ?? {}).length
        ? section("Metadata", h("pre", { class: "json" }, JSON.stringify(m.metadata, null, 2)))
        : null,
      d.provenance.length
        ? section(`Provenance chain (${d.provenance.length})`, h("div", { class: "mini-list" }, ...d.provenance.map(miniRow)))
        : null,
      section(`Links (${d.links.length})`, d.links.length
        ? h("table", { class: "links" },
          h("tbody", null, ...d.links.slice(0, 200).map((l) => {
            const other = l.src === m.id ? l.dst : l.src;
            const dir = l.src === m.id ? "→" : "←";
            return h("tr", { class: "clickable", onclick: () => select([other], other) },
              h("td", null, `${dir} #${other}`), h("td", null, l.kind), h("td", { class: "num" }, fmtNum(l.score)));
          })))
        : h("p", { class: "muted" }, "none")),
      section("Sleep history", sleepList(this.sleeps)),
      section(`History (${d.history.length})`, historyList(d.history, "no changes")),
    );
  }

  private edit(m: Memory): void {
    const field = (name: string, value: string | null) =>
      h("label", null, name, h("input", { type: "text", name, value: value ?? "" }));
    const text = h("textarea", { name: "text", rows: "6", "data-testid": "edit-text" });
    text.value = m.text;
    const importance = h("input", { type: "number", name: "importance", min: "0", max: "1", step: "0.01", value: String(m.importance) });
    const stateSel = h("select", { name: "state" }, ...STATES.map((s) => h("option", { value: s }, s)));
    stateSel.value = m.state;
    const tags = h("input", { type: "text", name: "tags", value: m.tags.join(", ") });
    const form = h("form", { class: "edit-form" },
      h("label", null, "text", text),
      field("who", m.who), field("when", m.when), field("where", m.where), field("why", m.why), field("how", m.how),
      h("label", null, "importance", importance),
      h("label", null, "state", stateSel),
      h("label", null, "tags (comma-separated)", tags),
      h("div", { class: "actions" },
        h("button", { type: "submit", class: "primary", "data-testid": "save" }, "Save"),
        h("button", { type: "button", onclick: () => this.current && this.render(this.current) }, "Cancel")));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const fd = new FormData(form);
      const upd: MemoryUpdate = {};
      const str = (k: "who" | "when" | "where" | "why" | "how") => {
        const v = String(fd.get(k) ?? "");
        if (v !== (m[k] ?? "")) upd[k] = v;
      };
      const t = String(fd.get("text") ?? "");
      if (t !== m.text) upd.text = t;
      str("who"); str("when"); str("where"); str("why"); str("how");
      const imp = Number(fd.get("importance"));
      if (imp !== m.importance) upd.importance = imp;
      const st = String(fd.get("state")) as MemState;
      if (st !== m.state) upd.state = st;
      const tg = String(fd.get("tags") ?? "").split(",").map((x) => x.trim()).filter(Boolean);
      if (tg.join(",") !== m.tags.join(",")) upd.tags = tg;
      void this.save(m.id, upd);
    });
    clear(this.body);
    this.body.append(h("header", null, h("span", { class: "id" }, `Editing #${m.id}`)), form);
    text.focus();
  }

  private async save(id: number, upd: MemoryUpdate): Promise<void> {
    if (Object.keys(upd).length === 0) {
      if (this.current) this.render(this.current);
      return;
    }
    try {
      await api.update(id, upd);
      toast(`memory #${id} saved`);
      bus.emit("data");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private async remove(id: number, hard: boolean): Promise<void> {
    if (hard && !confirm(`Delete memory #${id} permanently? This cannot be undone.`)) return;
    try {
      await api.remove(id, hard);
      toast(hard ? `memory #${id} deleted permanently` : `memory #${id} deleted (restorable)`);
      if (hard) select([]);
      bus.emit("data");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }

  private async restore(id: number): Promise<void> {
    try {
      await api.restore(id);
      toast(`memory #${id} restored`);
      bus.emit("data");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  }
}

function section(title: string, ...content: (Node | null)[]): HTMLElement {
  return h("details", { class: "section", open: true }, h("summary", null, title), ...content);
}

function grid(rows: [string, string | null][]): HTMLElement {
  return h("dl", { class: "grid" }, ...rows.flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v ?? "—")]));
}

function miniRow(m: Memory): HTMLElement {
  return h("div", { class: "mini clickable", onclick: () => select([m.id], m.id) },
    h("span", { class: `kind k-${m.kind}` }, m.kind), h("span", { class: "id" }, `#${m.id}`), h("span", { class: "text" }, m.text));
}

function detailsSection(m: Memory): HTMLElement | null {
  const d = m.details;
  if (d.type === "summary") {
    return section("Summary", grid([
      ["key concepts", d.key_concepts.join(", ")], ["themes", d.themes.join(", ")],
      ["relationships", d.relationships.join("; ")], ["confidence", fmtNum(d.confidence)],
      ["episodes", d.source_episode_ids.map((x) => `#${x}`).join(" ")],
    ]));
  }
  if (d.type === "schema") {
    return section("Schema", grid([
      ["name", d.name], ["description", d.description], ["core concepts", d.core_concepts.join(", ")],
      ["confidence", fmtNum(d.confidence)], ["related", d.related_memory_ids.map((x) => `#${x}`).join(" ")],
    ]), h("ul", { class: "examples" }, ...d.examples.map((x) => h("li", null, x))));
  }
  return null;
}

function historyList(entries: HistoryEntry[], none: string): HTMLElement {
  if (!entries.length) return h("p", { class: "muted" }, none);
  return h("ol", { class: "history" }, ...entries.slice().reverse().map((e) =>
    h("li", null,
      h("div", { class: "meta" }, h("b", null, e.event), h("span", null, e.actor), h("span", { class: "muted" }, fmtTime(e.created_at)),
        e.cause ? h("span", { class: "muted" }, e.cause) : null),
      e.old_value || e.new_value
        ? h("div", { class: "diff" },
          e.old_value ? h("pre", { class: "old" }, JSON.stringify(e.old_value, null, 1)) : null,
          e.new_value ? h("pre", { class: "new" }, JSON.stringify(e.new_value, null, 1)) : null)
        : null)));
}

function sleepList(events: MemorySleepEvent[]): HTMLElement {
  if (!events.length) return h("p", { class: "muted" }, "no sleep cycle has touched it");
  const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  return h("ol", { class: "history" }, ...events.map((e) =>
    h("li", null,
      h("div", { class: "meta" }, h("b", null, `cycle #${e.cycle}`), h("span", { class: `state s-${e.status}` }, e.status),
        h("span", { class: "muted" }, fmtTime(e.started_at))),
      e.event === "changed"
        ? h("div", null, `${e.field}: `, h("span", { class: "old" }, show(e.old)), " → ", h("span", { class: "new" }, show(e.new)))
        : e.event === "forgotten"
          ? h("div", { class: "error" }, "forgotten (restorable by undoing the cycle or editing its state)")
          : h("div", { class: e.created !== null ? "clickable" : "", onclick: () => e.created !== null && select([e.created], e.created) },
            `consolidated into ${e.created !== null ? `#${e.created}` : "a memory since removed"}`))));
}
