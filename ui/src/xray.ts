// Retrieval X-ray: how a query was routed, every candidate's signals, fused and MMR scores,
// where the cut fell (near misses below it), and the context packed under the token budget.

import { h, clear, fmtNum } from "./dom";
import { bus, select, state } from "./store";
import type { Hit, Reason, SearchResponse } from "./types";

const SIGNALS = ["semantic", "lexical", "recency", "actor", "spatial", "usage", "neighbour", "graph", "temporal"] as const;
const SIGNAL_HEADS: Record<(typeof SIGNALS)[number], string> = {
  semantic: "sema", lexical: "lexi", recency: "rece", actor: "acto", spatial: "spat", usage: "usag",
  neighbour: "neig", graph: "grap", temporal: "time",
};

/** One reason a hit matched, as a person reads it. */
export function reasonText(r: Reason): string {
  switch (r.kind) {
    case "date": {
      const what = r.phrase === null ? `happened ${r.date}` : `"${r.phrase}" = ${r.date}`;
      return r.gap_days === 0 ? `${what}, within ${r.asked}` : `${what}, ${r.gap_days} d from ${r.asked}`;
    }
    case "dated": return `"${r.phrase}" = ${r.date}`;
    case "entity": return `names ${r.names.join(", ")}`;
    case "pattern": return `holds ${r.found.map((f) => `"${f}"`).join(", ")}`;
    case "link": return r.from === null ? `reached by a ${r.link} link` : `${r.link} #${r.from}`;
  }
}

export class Xray {
  readonly el: HTMLElement;
  readonly spaceSlot: HTMLElement;
  private summary: HTMLElement;
  private table: HTMLElement;
  private context: HTMLElement;

  constructor() {
    this.summary = h("div", { class: "xray-summary", "data-testid": "xray-summary" });
    this.table = h("div", { class: "xray-table" });
    this.context = h("div", { class: "xray-context" });
    this.spaceSlot = h("div", { class: "xray-space" });
    this.el = h("section", { class: "xray" },
      this.spaceSlot,
      h("div", { class: "xray-side" }, this.summary, this.table, this.context));
    bus.on("search", () => this.render(), "xray");
    bus.on("selection", () => this.highlight(), "xray");
    this.render();
  }

  private render(): void {
    const r = state.search;
    clear(this.summary);
    clear(this.table);
    clear(this.context);
    if (!r) {
      this.summary.append(h("p", { class: "muted" },
        "Type a query in the search box above. The query appears in the 3D view with lines to its hits (teal) and to the near misses just below the cut (amber)."));
      return;
    }
    const t = r.timings;
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
      ...[questionLine(r)].filter((x): x is HTMLElement => x !== null),
      h("div", { class: "kv muted" },
        `embed ${fmtNum(t.embed_ms, 1)} · vector ${fmtNum(t.vector_ms, 1)} · lexical ${fmtNum(t.lexical_ms, 1)} · score ${fmtNum(t.score_ms, 1)} · pack ${fmtNum(t.pack_ms, 1)} · total ${fmtNum(t.total_ms, 1)} ms`),
      h("div", { class: "kv muted" }, "weights ",
        ...Object.entries(r.weights).map(([k, v]) => h("span", { class: "w" }, `${k} ${fmtNum(v, 2)}`))));
    const head = h("tr", null, h("th", null, "#"), h("th", null, "memory"),
      ...SIGNALS.map((s) => h("th", { class: "num", title: s }, SIGNAL_HEADS[s])),
      h("th", { class: "num" }, "score"), h("th", { class: "num" }, "MMR"), h("th", { class: "num" }, "tok"), h("th", null, "ctx"));
    const body = h("tbody", null);
    const row = (hit: Hit, cls: string) => {
      const tr = h("tr", { class: `clickable ${cls}`, "data-id": String(hit.memory.id), onclick: () => select([hit.memory.id], hit.memory.id) },
        h("td", null, hit.rank === null ? "·" : String(hit.rank)),
        h("td", { class: "mem", title: hit.memory.text }, h("span", { class: `kind k-${hit.memory.kind}` }, hit.memory.kind[0]),
          h("span", { class: "who" }, hit.memory.who ?? ""), " ",
          hit.memory.superseded_by !== null
            ? h("span", { class: "state s-superseded", title: `replaced by #${hit.memory.superseded_by}` }, "superseded ")
            : null,
          h("span", { class: "text" }, hit.memory.text.slice(0, 300))),
        ...SIGNALS.map((s) => {
          const v = hit.signals[s];
          const td = h("td", { class: "num sig" }, v ? fmtNum(v, 2) : "");
          td.style.setProperty("--v", String(Math.max(0, Math.min(1, v))));
          return td;
        }),
        h("td", { class: "num" }, fmtNum(hit.score, 3)),
        h("td", { class: "num" }, hit.mmr_score === null ? "" : `${fmtNum(hit.mmr_score, 3)}${hit.mmr_rank ? ` (${hit.mmr_rank})` : ""}`),
        h("td", { class: "num" }, String(hit.tokens)),
        h("td", null, hit.packed ? "✓" : ""));
      body.append(tr);
      // Why it matched, on a line of its own under the row: dates, entities, links.
      if (hit.reasons.length) {
        body.append(h("tr", { class: `why ${cls}`, "data-id": String(hit.memory.id) },
          h("td", null),
          h("td", { colspan: String(SIGNALS.length + 5), "data-testid": "xray-why" },
            ...hit.reasons.map((x) => h("span", { class: "reason" }, reasonText(x))))));
      }
    };
    r.hits.forEach((x) => row(x, "hit"));
    if (r.near_misses.length) {
      body.append(h("tr", { class: "cut" }, h("td", { colspan: String(SIGNALS.length + 6) }, `cut at k = ${r.hits.length} · near misses below`)));
      r.near_misses.forEach((x) => row(x, "miss"));
    }
    if (r.connected.length) {
      body.append(h("tr", { class: "cut" }, h("td", { colspan: String(SIGNALS.length + 6) }, "connected bubbles of the top results")));
      r.connected.forEach((x) => row(x, "connected"));
    }
    this.table.append(h("table", { class: "ranked", "data-testid": "xray-table" }, h("thead", null, head), body));
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
    this.highlight();
  }

  private highlight(): void {
    for (const tr of this.table.querySelectorAll("tr[data-id]")) {
      tr.classList.toggle("selected", state.selection.has(Number((tr as HTMLElement).dataset.id)));
    }
  }
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
