// The hover tooltip of the 3D view: the memory's id, kind, state and cluster at once, then
// its speaker, time and text once fetched (cached). Memory text is untrusted: text nodes only.

import { append, clear, fmtTime, h } from "../dom";
import type { Memory } from "../types";

export interface TooltipHead {
  id: number;
  /// "episode · active · cluster label"
  meta: string;
}

export class Tooltip {
  readonly el = h("div", { class: "tooltip", hidden: true, "data-testid": "tooltip" });
  private shownId: number | null = null;
  private readonly cache = new Map<number, Memory>();

  constructor(private readonly fetch: (id: number) => Promise<Memory>) {}

  /// Shows the tooltip for a memory beside (x, y).
  show(head: TooltipHead, x: number, y: number): void {
    this.el.style.transform = `translate(${Math.round(x + 14)}px, ${Math.round(y + 10)}px)`;
    if (this.shownId === head.id) return;
    this.shownId = head.id;
    const cached = this.cache.get(head.id);
    this.fill(head, cached ?? null);
    if (cached) return;
    this.fetch(head.id).then((m) => {
      if (this.cache.size > 2000) this.cache.clear();
      this.cache.set(head.id, m);
      this.fill(head, m);
    }, () => {});
  }

  hide(): void {
    this.el.hidden = true;
    this.shownId = null;
  }

  private fill(head: TooltipHead, m: Memory | null): void {
    if (this.shownId !== head.id) return;
    clear(this.el);
    append(this.el,
      h("div", { class: "meta" }, h("b", null, `#${head.id}`), ` ${head.meta}`),
      m ? h("div", { class: "meta muted" }, `${m.who ?? "—"} · ${fmtTime(m.occurred_at ?? m.created_at)}`) : null,
      h("div", { class: "text" }, m ? m.text.slice(0, 280) : "…"));
    this.el.hidden = false;
  }
}
