// The X-ray's ranked table: one row per hit, near miss and connected bubble, with a line of
// reasons under it. The rows are kept and filled again from search to search: a new search
// changes their text, not the table's elements. Building ~40 rows of 15 cells afresh (a
// checkbox each) was 10–25 ms of the page's main thread per search, and the style of every
// new element came on top; with jobs running, that task and the selection that follows a
// search went over 50 ms together (README, "Main-thread blocking").

import { fmtNum, h } from "./dom";
import type { Hit } from "./types";
import { reasonText, SIGNAL_HEADS, SIGNALS } from "./viewkeys";

/// What a row does when a person clicks it or ticks its box.
export interface RowActions {
  select(id: number): void;
  /// The row's box was ticked (true) or cleared for memory `id`.
  mark(id: number, on: boolean): void;
}

/// A piece of a row's text, written to the page only when it changes: a write invalidates
/// the row's layout, and reading the page's text back to compare costs a call into it.
class Slot {
  readonly node = document.createTextNode("");
  private value = "";

  set(v: string): void {
    if (v === this.value) return;
    this.value = v;
    this.node.data = v;
  }
}

/// An attribute or style value written only when it changes (see `Slot`).
class Cached {
  private value: string | null = null;

  constructor(private readonly write: (v: string) => void) {}

  set(v: string): void {
    if (v === this.value) return;
    this.value = v;
    this.write(v);
  }
}

class RankedRow {
  readonly tr: HTMLTableRowElement;
  readonly why: HTMLTableRowElement;
  private readonly box: HTMLInputElement;
  private readonly rank = new Slot();
  private readonly kindText = new Slot();
  private readonly who = new Slot();
  private readonly text = new Slot();
  private readonly sigs = SIGNALS.map(() => new Slot());
  private readonly bars: Cached[];
  private readonly score = new Slot();
  private readonly mmr = new Slot();
  private readonly tokens = new Slot();
  private readonly packed = new Slot();
  private readonly rowId: Cached;
  private readonly rowClass: Cached;
  private readonly memTitle: Cached;
  private readonly kindClass: Cached;
  private readonly supersededTitle: Cached;
  private readonly supersededHidden: Cached;
  private readonly reasons: HTMLElement;
  private reasonsShown = "";
  private id = -1;
  private ticked = false;

  constructor(actions: RowActions) {
    this.box = h("input", { type: "checkbox", title: "a memory this query must find (for a golden query)",
      onclick: (e: Event) => e.stopPropagation(), onchange: () => {
        this.ticked = this.box.checked;
        actions.mark(this.id, this.box.checked);
      } });
    const kind = h("span", null, this.kindText.node);
    const superseded = h("span", { class: "state s-superseded" }, "superseded ");
    const mem = h("td", { class: "mem" }, kind, h("span", { class: "who" }, this.who.node), " ", superseded, h("span", { class: "text" }, this.text.node));
    const sigCells = this.sigs.map((slot) => h("td", { class: "num sig" }, slot.node));
    this.bars = sigCells.map((td) => new Cached((v) => td.style.setProperty("--v", v)));
    this.tr = h("tr", { onclick: () => actions.select(this.id) },
      h("td", { class: "rank" }, this.box, this.rank.node), mem, ...sigCells,
      h("td", { class: "num" }, this.score.node), h("td", { class: "num" }, this.mmr.node),
      h("td", { class: "num" }, this.tokens.node), h("td", null, this.packed.node));
    this.reasons = h("td", { colspan: String(SIGNALS.length + 5), "data-testid": "xray-why" });
    this.why = h("tr", null, h("td", null), this.reasons);
    this.rowId = new Cached((id) => {
      this.tr.dataset.id = id;
      this.why.dataset.id = id;
      this.box.setAttribute("aria-label", `expected #${id}`);
      this.box.dataset.testid = `xray-expect-${id}`;
    });
    this.rowClass = new Cached((cls) => {
      this.tr.className = `clickable ${cls}`;
      this.why.className = `why ${cls}`;
    });
    this.memTitle = new Cached((v) => { mem.title = v; });
    this.kindClass = new Cached((v) => { kind.className = v; });
    this.supersededTitle = new Cached((v) => { superseded.title = v; });
    this.supersededHidden = new Cached((v) => { superseded.hidden = v === "hidden"; });
  }

  /// Shows `hit` as a row of class `cls` (hit, miss or connected), its box ticked or not.
  fill(hit: Hit, cls: string, ticked: boolean): void {
    const m = hit.memory;
    this.id = m.id;
    this.rowId.set(String(m.id));
    this.rowClass.set(cls);
    if (this.ticked !== ticked) {
      this.ticked = ticked;
      this.box.checked = ticked;
    }
    this.rank.set(hit.rank === null ? "·" : String(hit.rank));
    this.memTitle.set(m.text);
    this.kindClass.set(`kind k-${m.kind}`);
    this.kindText.set(m.kind[0]);
    this.who.set(m.who ?? "");
    this.supersededHidden.set(m.superseded_by === null ? "hidden" : "shown");
    if (m.superseded_by !== null) this.supersededTitle.set(`replaced by #${m.superseded_by}`);
    this.text.set(m.text.slice(0, 160));
    SIGNALS.forEach((s, i) => {
      const v = hit.signals[s];
      this.sigs[i].set(v ? fmtNum(v, 2) : "");
      // The bar is 52 px at 1: to the hundredth is to half a pixel.
      this.bars[i].set(fmtNum(Math.max(0, Math.min(1, v)), 2));
    });
    this.score.set(fmtNum(hit.score, 3));
    this.mmr.set(hit.mmr_score === null ? "" : `${fmtNum(hit.mmr_score, 3)}${hit.mmr_rank ? ` (${hit.mmr_rank})` : ""}`);
    this.tokens.set(String(hit.tokens));
    this.packed.set(hit.packed ? "✓" : "");
    // Why it matched, on a line of its own under the row: dates, entities, links.
    const reasons = hit.reasons.map(reasonText);
    const key = reasons.join("\n");
    if (key !== this.reasonsShown) {
      this.reasonsShown = key;
      this.reasons.replaceChildren(...reasons.map((x) => h("span", { class: "reason" }, x)));
    }
  }

  /// The row, and its line of reasons when it has any.
  get elements(): HTMLTableRowElement[] {
    return this.reasonsShown ? [this.tr, this.why] : [this.tr];
  }
}

/// The ranked table, its rows kept from one search to the next.
export class RankedTable {
  readonly el: HTMLTableElement;
  private readonly body: HTMLTableSectionElement;
  private readonly rows: RankedRow[] = [];
  /// The lines above the near misses and above the connected bubbles.
  private readonly missText = new Slot();
  private readonly missLine = cutLine(this.missText.node);
  private readonly connectedLine = cutLine("connected bubbles of the top results");

  constructor(private readonly actions: RowActions) {
    const head = h("tr", null, h("th", null, "#"), h("th", null, "memory"),
      ...SIGNALS.map((s) => h("th", { class: "num", title: s }, SIGNAL_HEADS[s])),
      h("th", { class: "num" }, "score"), h("th", { class: "num" }, "MMR"), h("th", { class: "num" }, "tok"), h("th", null, "ctx"));
    this.body = h("tbody", null);
    this.el = h("table", { class: "ranked", "data-testid": "xray-table" }, h("thead", null, head), this.body);
  }

  /// Shows the hits, then the near misses and the connected bubbles under lines that say
  /// what they are; `ticked` says which boxes are ticked.
  show(hits: Hit[], nearMisses: Hit[], connected: Hit[], ticked: (id: number) => boolean): void {
    const out: HTMLTableRowElement[] = [];
    let used = 0;
    const add = (list: Hit[], cls: string) => {
      for (const hit of list) {
        const row = (this.rows[used] ??= new RankedRow(this.actions));
        used++;
        row.fill(hit, cls, ticked(hit.memory.id));
        out.push(...row.elements);
      }
    };
    add(hits, "hit");
    if (nearMisses.length) {
      this.missText.set(`cut at k = ${hits.length} · near misses below`);
      out.push(this.missLine);
      add(nearMisses, "miss");
    }
    if (connected.length) {
      out.push(this.connectedLine);
      add(connected, "connected");
    }
    // Rows stay where they are when their place did not change: moving a row out of the
    // table and back costs its style and layout again.
    let at: ChildNode | null = this.body.firstChild;
    for (const row of out) {
      if (at === row) {
        at = at.nextSibling;
        continue;
      }
      this.body.insertBefore(row, at);
    }
    while (at) {
      const next: ChildNode | null = at.nextSibling;
      at.remove();
      at = next;
    }
  }
}

function cutLine(text: string | Text): HTMLTableRowElement {
  return h("tr", { class: "cut" }, h("td", { colspan: String(SIGNALS.length + 6) }, text));
}
