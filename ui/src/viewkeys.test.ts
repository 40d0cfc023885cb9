// The key that lets the list skip refilling a row when a store change leaves what it shows as
// it was (main-thread blocking, README).
import { describe, expect, it } from "vitest";
import type { Memory } from "./bindings";
import { rowKey } from "./viewkeys";

const mem = (id: number, over: Partial<Memory> = {}): Memory => ({
  id, kind: "episodic", text: `memory ${id}`, who: "Ana", occurred_at: 1_700_000_000_000, created_at: 1_700_000_000_000,
  state: "active", superseded_by: null, deleted_at: null, access_count: 0, last_accessed: null, ...over,
} as unknown as Memory);

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

