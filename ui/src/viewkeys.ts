// What a view shows, as text: the key that lets the list skip refilling a row that would
// look the same, the X-ray's signal columns, and how a hit's reasons read.
// No DOM here (unit-tested under Node).

import type { EntityKind } from "./bindings";
import type { Memory, Reason } from "./types";

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

