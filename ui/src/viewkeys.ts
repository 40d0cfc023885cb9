// What a view shows, as text: the keys that let the list and the X-ray's table skip a
// redraw when a store change leaves what they show as it was, and how a hit's reasons read.
// No DOM here (unit-tested under Node).

import type { EntityKind } from "./bindings";
import { fmtNum } from "./dom";
import type { Hit, Memory, Reason, SearchResponse } from "./types";

export const SIGNALS = ["semantic", "lexical", "recency", "actor", "spatial", "usage", "neighbour", "graph", "temporal"] as const;
export const SIGNAL_HEADS: Record<(typeof SIGNALS)[number], string> = {
  semantic: "sema", lexical: "lexi", recency: "rece", actor: "acto", spatial: "spat", usage: "usag",
  neighbour: "neig", graph: "grap", temporal: "time",
};

/// How a reason names the kind of entity a question's answer is.
const ANSWER_KINDS: Record<EntityKind, string> = {
  place: "a place", title: "a title", person: "a person", organisation: "an organisation", possession: "a thing owned", name: "a name",
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
    case "answer": return `${ANSWER_KINDS[r.entity]}: ${r.names.join(", ")}`;
    case "pattern": return `holds ${r.found.map((f) => `"${f}"`).join(", ")}`;
    case "link": return r.from === null ? `reached by a ${r.link} link` : `${r.link} #${r.from}`;
  }
}

/// Everything a list row shows of a memory (row `i` while its page loads): two rows with
/// the same key look the same.
export function rowKey(m: Memory | null, i: number, stale: boolean): string {
  if (!m) return `loading ${i}`;
  return [m.id, m.kind, m.who ?? "", m.occurred_at ?? m.created_at, m.state, m.superseded_by ?? "", m.deleted_at ?? "", stale, m.text].join("\u0001");
}

/** Everything the ranked table and the packed context show of a search, as displayed (a
 *  signal to 2 decimals, a score to 3): two searches with the same key draw the same table. */
export function tableKey(r: SearchResponse): string {
  const hit = (x: Hit) => [x.rank, x.memory.id, x.memory.kind, x.memory.who, x.memory.superseded_by, x.memory.text,
    SIGNALS.map((s) => x.signals[s] ? fmtNum(x.signals[s], 2) : ""), fmtNum(x.score, 3),
    x.mmr_score === null ? null : fmtNum(x.mmr_score, 3), x.mmr_rank, x.tokens, x.packed, x.attention ? fmtNum(x.attention, 3) : null,
    x.reasons.map(reasonText)];
  return JSON.stringify([r.query, r.as_of, r.hits.map(hit), r.near_misses.map(hit), r.connected.map(hit), r.context, r.used_tokens, r.budget_tokens]);
}
