// Memory browser: filters, a sortable virtualised list over the whole store (pages fetched
// on demand), and search results when a query is active.

import { api } from "./api";
import { h, clear, fmtTime, fmtInt, toast } from "./dom";
import { timed } from "./render/perf";
import { bus, select, state } from "./store";
import type { Kind, ListQuery, MemState, Memory, SortKey, Stats } from "./types";
import { KINDS, STATES } from "./types";

import { listWindow, ROW } from "./virtual";
import { rowKey } from "./viewkeys";

const PAGE = 200;
/// The least time between two listings that follow a drag of the time scrubber (ms).
const ASOF_LIST_MS = 250;

export class Browser {
  readonly el: HTMLElement;
  private listEl: HTMLElement;
  private spacer: HTMLElement;
  private rowsEl: HTMLElement;
  private countEl: HTMLElement;
  private pages = new Map<number, Memory[] | "loading">();
  private total = 0;
  private sort: SortKey = "id";
  private descending = true;
  private generation = 0;
  /// List requests on their way, and whether a reload waits for them to answer.
  private listing = 0;
  private reloadWaiting = false;
  /// When the list last followed the time scrubber, and its next follow when one waits.
  private asofListed = -Infinity;
  private asofTimer: ReturnType<typeof setTimeout> | null = null;
  private convSelect: HTMLSelectElement;
  private whoInput: HTMLInputElement;
  private whoList: HTMLDataListElement;
  private fromInput: HTMLInputElement;
  private toInput: HTMLInputElement;
  private clusterSelect: HTMLSelectElement;
  private staleDays: HTMLInputElement;
  private staleDaysLabel: HTMLElement;
  private supersededChips: HTMLElement[] = [];
  private rowPool: HTMLElement[] = [];
  /// What each pooled row shows (`rowKey`).
  private rowKeys = new WeakMap<HTMLElement, string>();
  /// The conversations the conversation filter lists, as last filled.
  private convKey = "";
  /// The list's height and scroll position, kept from its resize and scroll events: reading
  /// them from the element in render() forced a synchronous layout of the whole page after
  /// every search and selection.
  private viewH = 0;
  private top = 0;
  /// Ranked rows when a search is active (replaces the listing).
  private searchRows: Memory[] | null = null;

  constructor() {
    const kindChips = h("div", { class: "chips", "data-testid": "kind-filter" },
      ...KINDS.map((k) => this.chip(k, () => this.toggle(state.filter.kinds, k))));
    // "superseded": only the facts another fact replaced, which are hidden otherwise.
    // "stale": those, and the facts a newer fact contradicts that were not confirmed (said
    // again, or retrieved by a search) in the last N days. The two are exclusive.
    const supersededChip = h("button", { class: "chip", "aria-pressed": "false", "data-testid": "filter-superseded",
      title: "facts another fact replaced: a new value, or a contradiction (hidden otherwise)",
      onclick: () => this.setSuperseded(state.filter.superseded === "only" ? "hide" : "only") }, "superseded");
    const staleChip = h("button", { class: "chip", "aria-pressed": "false", "data-testid": "filter-stale",
      title: "stale facts: those another fact replaced, and those a newer fact contradicts that were not said again or retrieved in the last N days",
      onclick: () => this.setSuperseded(state.filter.superseded === "stale" ? "hide" : "stale") }, "stale");
    this.staleDays = h("input", { type: "number", min: "1", max: "3650", value: "30", class: "days",
      "aria-label": "days without confirmation", "data-testid": "filter-stale-days",
      title: "days without confirmation after which a contradicted fact is stale", onchange: () => {
        const d = Number(this.staleDays.value);
        const ok = Number.isInteger(d) && d >= 1 && d <= 3650;
        this.staleDays.classList.toggle("invalid", !ok);
        if (!ok) return;
        state.filter.stale_days = d;
        this.filterChanged();
      } });
    this.supersededChips = [supersededChip, staleChip];
    const stateChips = h("div", { class: "chips", "data-testid": "state-filter" },
      ...STATES.map((s) => this.chip(s, () => this.toggle(state.filter.states, s))), supersededChip, staleChip,
      this.staleDaysLabel = h("label", { class: "days-label", hidden: true }, this.staleDays, "days"));
    this.convSelect = h("select", { "aria-label": "conversation", onchange: () => {
      state.filter.conversation = this.convSelect.value || null;
      this.filterChanged();
    } }, h("option", { value: "" }, "all conversations"));
    this.whoList = h("datalist", { id: "who-list" });
    this.whoInput = h("input", { type: "text", placeholder: "actor (who)", list: "who-list",
      "aria-label": "actor", onchange: () => {
        state.filter.who = this.whoInput.value.trim() || null;
        this.filterChanged();
      } });
    const parse = (inp: HTMLInputElement, end: boolean): number | null => {
      const v = inp.value.trim();
      if (!v) {
        inp.classList.remove("invalid");
        return null;
      }
      const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? v + (end ? "T23:59:59.999Z" : "T00:00:00Z") : v);
      inp.classList.toggle("invalid", Number.isNaN(t));
      return Number.isNaN(t) ? null : t;
    };
    const dateChange = () => {
      state.filter.from = parse(this.fromInput, false);
      state.filter.to = parse(this.toInput, true);
      this.filterChanged();
    };
    this.fromInput = h("input", { type: "text", placeholder: "from YYYY-MM-DD", "aria-label": "from", onchange: dateChange });
    this.toInput = h("input", { type: "text", placeholder: "to YYYY-MM-DD", "aria-label": "to", onchange: dateChange });
    this.clusterSelect = h("select", { "aria-label": "cluster", hidden: true, onchange: () => this.clusterChanged() },
      h("option", { value: "" }, "all clusters"));
    const sortSelect = h("select", { "aria-label": "sort", onchange: () => {
      this.sort = sortSelect.value as SortKey;
      this.reload();
    } },
      ...([["id", "newest id"], ["occurred_at", "time"], ["importance", "importance"],
        ["access_count", "usage"], ["updated_at", "last changed"], ["last_accessed", "last used"]] as const)
        .map(([v, l]) => h("option", { value: v }, l)));
    const dirBtn = h("button", { class: "icon", title: "sort direction", onclick: () => {
      this.descending = !this.descending;
      dirBtn.textContent = this.descending ? "↓" : "↑";
      this.reload();
    } }, "↓");
    this.countEl = h("div", { class: "count", "data-testid": "browser-count" });
    this.spacer = h("div", { class: "spacer" });
    this.rowsEl = h("div", { class: "rows" });
    this.listEl = h("div", { class: "list", tabindex: "0", "data-testid": "memory-list" }, this.spacer, this.rowsEl);
    this.listEl.addEventListener("scroll", () => {
      this.top = this.listEl.scrollTop;
      this.render();
    }, { passive: true });
    this.listEl.addEventListener("keydown", (e) => this.onKey(e));
    new ResizeObserver(() => {
      this.viewH = this.listEl.clientHeight;
      this.top = this.listEl.scrollTop;
      this.render();
    }).observe(this.listEl);
    this.el = h("section", { class: "browser panel" },
      h("div", { class: "filters" },
        h("div", { class: "row" }, kindChips),
        h("div", { class: "row" }, stateChips),
        h("div", { class: "row" }, this.convSelect, this.whoInput, this.whoList),
        h("div", { class: "row" }, this.fromInput, this.toInput),
        h("div", { class: "row" }, this.clusterSelect),
        h("div", { class: "row" }, h("span", { class: "muted" }, "sort"), sortSelect, dirBtn, this.countEl)),
      this.listEl);
    bus.on("selection", () => this.markSelection(), "browser");
    bus.on("search", () => this.showSearch(), "browser");
    // With a search shown, the search runs again on a change (main.ts) and its answer
    // redraws the rows ("search"): listing the old answer first would draw them twice.
    bus.on("data", () => { if (!state.search) this.reload(); }, "browser");
    bus.on("asof", () => this.followTime(), "browser");
    bus.on("clusters", () => this.fillClusters(), "browser");
  }

  private chip(label: string, onToggle: () => void): HTMLElement {
    const b = h("button", { class: "chip", "aria-pressed": "false", onclick: () => {
      onToggle();
      b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "true" ? "false" : "true");
    } }, label);
    return b;
  }

  /// Shows superseded facts only, stale facts only, or neither (hidden, the default).
  private setSuperseded(v: "hide" | "only" | "stale"): void {
    state.filter.superseded = v;
    state.filter.stale_days = v === "stale" ? Number(this.staleDays.value) || 30 : null;
    const [sup, stale] = this.supersededChips;
    sup.setAttribute("aria-pressed", String(v === "only"));
    stale.setAttribute("aria-pressed", String(v === "stale"));
    this.staleDaysLabel.hidden = v !== "stale";
    this.filterChanged();
  }

  private toggle<T extends Kind | MemState>(list: T[], v: T): void {
    const i = list.indexOf(v);
    if (i >= 0) list.splice(i, 1);
    else list.push(v);
    this.filterChanged();
  }

  private filterChanged(): void {
    bus.emit("filter");
    this.reload();
  }

  private clusterChanged(): void {
    state.filter.cluster = this.clusterSelect.value ? Number(this.clusterSelect.value) : null;
    this.filterChanged();
  }

  fillClusters(): void {
    const labels = state.clusterLabels;
    const cur = this.clusterSelect.value;
    clear(this.clusterSelect);
    this.clusterSelect.append(h("option", { value: "" }, "all clusters"));
    for (const [id, label] of labels) this.clusterSelect.append(h("option", { value: String(id) }, `#${id} ${label}`));
    this.clusterSelect.value = cur;
    this.clusterSelect.hidden = labels.size === 0;
  }

  setStats(s: Stats): void {
    // Counts move with every import batch: the options are rebuilt only when they differ.
    const key = JSON.stringify(s.conversations);
    if (key === this.convKey) return;
    this.convKey = key;
    const cur = this.convSelect.value;
    clear(this.convSelect);
    this.convSelect.append(h("option", { value: "" }, "all conversations"));
    for (const [c, n] of s.conversations) this.convSelect.append(h("option", { value: c }, `${c} (${fmtInt(n)})`));
    this.convSelect.value = cur;
  }

  setActors(actors: string[]): void {
    clear(this.whoList);
    for (const a of actors) this.whoList.append(h("option", { value: a }));
  }

  private query(offset: number): ListQuery {
    return { filter: state.filter, sort: this.sort, descending: this.descending, offset, limit: PAGE };
  }

  /// Lists the store as of the scrubber's instant, at most every ASOF_LIST_MS: a drag moves
  /// it every frame, and a listing per step (the engine's read, the rows' re-render) took a
  /// core from the frames. A follow that waits lists the latest instant, so the instant the
  /// scrubber rests on is always listed.
  private followTime(): void {
    if (this.asofTimer !== null) return;
    const go = () => {
      this.asofTimer = null;
      this.asofListed = performance.now();
      this.reload();
    };
    const wait = this.asofListed + ASOF_LIST_MS - performance.now();
    if (wait <= 0) go();
    else this.asofTimer = setTimeout(go, wait);
  }

  reload(): void {
    if (state.search) {
      this.showSearch();
      return;
    }
    this.searchRows = null;
    this.generation++;
    this.pages.clear();
    this.listEl.scrollTop = this.top = 0;
    // While a listing is on its way, ask again only once it has answered: a drag of the time
    // scrubber reloads at every step, the engine lists one instant at a time, and a queue of
    // stale listings would hold up everything asked after them.
    if (this.listing > 0) {
      this.reloadWaiting = true;
      return;
    }
    void this.fetch(0);
  }

  private showSearch(): void {
    const r = state.search;
    if (!r) {
      this.searchRows = null;
      this.reload();
      return;
    }
    this.searchRows = r.hits.map((hit) => hit.memory);
    this.total = this.searchRows.length;
    this.countEl.textContent = `${r.hits.length} results`;
    this.listEl.scrollTop = this.top = 0;
    this.render();
  }

  private async fetch(page: number): Promise<void> {
    const gen = this.generation;
    this.pages.set(page, "loading");
    this.listing++;
    try {
      const res = await api.list(this.query(page * PAGE));
      if (gen !== this.generation) return;
      this.pages.set(page, res.memories);
      this.total = res.total;
      const noun = res.total === 1 ? "memory" : "memories";
      this.countEl.textContent = `${fmtInt(res.total)} ${noun}${res.as_of === null ? "" : " then"}`;
      timed("browser.page", () => this.render());
    } catch (e) {
      this.pages.delete(page);
      toast(`listing failed: ${(e as Error).message}`, "error");
    } finally {
      this.listing--;
      if (this.listing === 0 && this.reloadWaiting) {
        this.reloadWaiting = false;
        this.reload();
      }
    }
  }

  private rowAt(i: number): Memory | null | undefined {
    if (this.searchRows) return this.searchRows[i];
    const page = Math.floor(i / PAGE);
    const p = this.pages.get(page);
    if (p === undefined) {
      void this.fetch(page);
      return null;
    }
    if (p === "loading") return null;
    return p[i - page * PAGE];
  }

  /// Renders only the visible rows, reusing a pool of row elements.
  private render(): void {
    const { height, first, count, offset } = listWindow(this.total, this.top, this.viewH || 600);
    this.spacer.style.height = `${height}px`;
    while (this.rowPool.length < count) {
      const r = h("div", { class: "mrow", role: "option" });
      r.addEventListener("click", (e) => {
        const id = Number(r.dataset.id);
        if (!Number.isFinite(id)) return;
        if ((e as MouseEvent).shiftKey || (e as MouseEvent).ctrlKey || (e as MouseEvent).metaKey) {
          select(state.selection.toggle(id), id);
        } else select([id], id);
      });
      this.rowPool.push(r);
      this.rowsEl.append(r);
    }
    for (let j = 0; j < this.rowPool.length; j++) {
      const r = this.rowPool[j];
      if (j >= count) {
        r.hidden = true;
        continue;
      }
      const i = first + j;
      const m = this.rowAt(i);
      r.hidden = false;
      r.style.transform = `translateY(${offset + j * ROW}px)`;
      this.fillRow(r, m ?? null, i);
    }
  }

  /// A new selection only changes which drawn rows are marked.
  private markSelection(): void {
    for (const r of this.rowPool) {
      const sel = String(!!r.dataset.id && state.selection.has(Number(r.dataset.id)));
      if (r.dataset.sel === sel) continue;
      r.dataset.sel = sel;
      r.classList.toggle("selected", sel === "true");
    }
  }

  private fillRow(r: HTMLElement, m: Memory | null, i: number): void {
    const sel = String(!!m && state.selection.has(m.id));
    if (r.dataset.sel !== sel) {
      r.dataset.sel = sel;
      r.classList.toggle("selected", sel === "true");
    }
    // A row is filled again only when what it shows differs (a store change lists the same
    // memories again every second while a job runs; an edited memory keeps its id).
    const stale = state.filter.superseded === "stale" && !this.searchRows;
    const key = rowKey(m, i, stale);
    if (this.rowKeys.get(r) === key) return;
    this.rowKeys.set(r, key);
    r.dataset.id = m ? String(m.id) : "";
    r.classList.toggle("deleted", !!m?.deleted_at);
    clear(r);
    if (!m) {
      r.removeAttribute("data-testid");
      r.append(h("div", { class: "meta muted" }, `#${i + 1} …`));
      return;
    }
    r.setAttribute("data-testid", `memory-row-${m.id}`);
    r.append(
      h("div", { class: "meta" },
        h("span", { class: `kind k-${m.kind}` }, m.kind),
        h("span", { class: "who" }, m.who ?? "—"),
        h("span", { class: "muted" }, fmtTime(m.occurred_at ?? m.created_at)),
        m.state !== "active" ? h("span", { class: `state s-${m.state}` }, m.state) : null,
        m.superseded_by !== null ? h("span", { class: "state s-superseded", title: `replaced by #${m.superseded_by}` }, "superseded") : null,
        // Under the stale filter, a fact no other fact replaced is listed because a newer
        // fact contradicts it and it was not confirmed in the filter's days.
        m.superseded_by === null && stale
          ? h("span", { class: "state s-superseded", title: `a newer fact contradicts it, and it was not said again or retrieved in the last ${state.filter.stale_days ?? 30} days` }, "contradicted")
          : null,
        h("span", { class: "id muted" }, `#${m.id}`)),
      h("div", { class: "text" }, m.text));
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    e.preventDefault();
    const ids: number[] = [];
    if (this.searchRows) ids.push(...this.searchRows.map((m) => m.id));
    const cur = state.primary;
    if (this.searchRows) {
      const i = cur === null ? -1 : ids.indexOf(cur);
      const next = ids[Math.max(0, Math.min(ids.length - 1, i + (e.key === "ArrowDown" ? 1 : -1)))];
      if (next !== undefined) select([next], next);
    } else {
      this.listEl.scrollTop += e.key === "ArrowDown" ? ROW : -ROW;
    }
  }
}
