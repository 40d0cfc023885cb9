// The keys that let the list, the X-ray table and the detail pane skip a redraw when a store
// change leaves what they show as it was (main-thread blocking, README).
import { describe, expect, it } from "vitest";
import type { Hit, Memory, SearchResponse } from "./bindings";
import { rowKey, tableKey } from "./viewkeys";

const mem = (id: number, over: Partial<Memory> = {}): Memory => ({
  id, kind: "episodic", text: `memory ${id}`, who: "Ana", occurred_at: 1_700_000_000_000, created_at: 1_700_000_000_000,
  state: "active", superseded_by: null, deleted_at: null, access_count: 0, last_accessed: null, ...over,
} as unknown as Memory);

const hit = (id: number, score: number, over: Partial<Hit> = {}): Hit => ({
  memory: mem(id), rank: 1, origin: "vector", score, mmr_score: null, mmr_rank: null, tokens: 5, packed: true, attention: null, reasons: [],
  signals: { semantic: 0.8123, lexical: 0, recency: 0.5, actor: 0, spatial: 0, usage: 0.1, neighbour: 0, graph: 0, temporal: 0 },
  ...over,
} as unknown as Hit);

const search = (hits: Hit[], over: Partial<SearchResponse> = {}): SearchResponse => ({
  query: "garden", hits, near_misses: [], connected: [], context: hits.map((x) => x.memory.id), used_tokens: 10, budget_tokens: 100,
  as_of: null, timings: { embed_ms: 1, vector_ms: 1, lexical_ms: 1, score_ms: 1, pack_ms: 1, total_ms: 5 }, ...over,
} as unknown as SearchResponse);

describe("rowKey", () => {
  it("is the same for a memory whose shown fields did not change (its access count did)", () => {
    expect(rowKey(mem(1), 0, false)).toBe(rowKey(mem(1, { access_count: 7, last_accessed: 5 } as Partial<Memory>), 0, false));
  });
  it("differs when the text, the state, a supersession, a deletion or the stale mark changes", () => {
    const k = rowKey(mem(1), 0, false);
    expect(rowKey(mem(1, { text: "edited" }), 0, false)).not.toBe(k);
    expect(rowKey(mem(1, { state: "archived" }), 0, false)).not.toBe(k);
    expect(rowKey(mem(1, { superseded_by: 2 }), 0, false)).not.toBe(k);
    expect(rowKey(mem(1, { deleted_at: 3 }), 0, false)).not.toBe(k);
    expect(rowKey(mem(1), 0, true)).not.toBe(k);
    expect(rowKey(mem(2), 0, false)).not.toBe(k);
  });
  it("tells a loading row by its place", () => {
    expect(rowKey(null, 3, false)).not.toBe(rowKey(null, 4, false));
  });
});

describe("tableKey", () => {
  it("ignores what the table does not show: timings, access counts, digits beyond those drawn", () => {
    const a = search([hit(1, 0.51234)]);
    const b = search([{ ...hit(1, 0.51238), memory: mem(1, { access_count: 9 } as Partial<Memory>) }], { timings: { embed_ms: 9, vector_ms: 9, lexical_ms: 9, score_ms: 9, pack_ms: 9, total_ms: 45 } });
    expect(tableKey(b)).toBe(tableKey(a));
  });
  it("changes with the ranking, a shown score, the packed context, the query or the instant", () => {
    const k = tableKey(search([hit(1, 0.5), hit(2, 0.4)]));
    expect(tableKey(search([hit(2, 0.4), hit(1, 0.5)]))).not.toBe(k);
    expect(tableKey(search([hit(1, 0.52), hit(2, 0.4)]))).not.toBe(k);
    expect(tableKey(search([hit(1, 0.5), hit(2, 0.4)], { context: [1] }))).not.toBe(k);
    expect(tableKey(search([hit(1, 0.5), hit(2, 0.4)], { query: "gardens" }))).not.toBe(k);
    expect(tableKey(search([hit(1, 0.5), hit(2, 0.4)], { as_of: 1 }))).not.toBe(k);
    expect(tableKey(search([hit(1, 0.5, { reasons: [{ kind: "entity", names: ["Ana"] }] as unknown as Hit["reasons"] }), hit(2, 0.4)]))).not.toBe(k);
  });
});
