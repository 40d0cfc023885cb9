import { describe, expect, it } from "vitest";
import { IdSet } from "./idset";

describe("IdSet", () => {
  it("holds any ids once, sorted", () => {
    const s = IdSet.of([9, 3, 3, 7, -1, 9]);
    expect([...s]).toEqual([-1, 3, 7, 9]);
    expect(s.size).toBe(4);
    expect(s.first()).toBe(-1);
  });

  it("answers membership for present and absent ids", () => {
    const s = IdSet.fromSorted(Int32Array.from([2, 4, 8, 16, 32]));
    for (const id of [2, 4, 8, 16, 32]) expect(s.has(id)).toBe(true);
    for (const id of [0, 3, 17, 33, -2]) expect(s.has(id)).toBe(false);
    expect(IdSet.empty.has(0)).toBe(false);
    expect(IdSet.empty.first()).toBeNull();
  });

  it("toggles an id in and out without changing the original", () => {
    const s = IdSet.of([1, 5]);
    expect([...s.toggle(3)]).toEqual([1, 3, 5]);
    expect([...s.toggle(5)]).toEqual([1]);
    expect([...s]).toEqual([1, 5]);
  });

  it("unites two sets by a merge, keeping shared ids once", () => {
    const u = IdSet.of([1, 4, 6]).union(IdSet.of([2, 4, 9]));
    expect([...u]).toEqual([1, 2, 4, 6, 9]);
    expect(IdSet.empty.union(u)).toBe(u);
  });

  it("takes the first ids without copying the rest", () => {
    expect(IdSet.of([5, 1, 3]).take(2)).toEqual([1, 3]);
  });
});
