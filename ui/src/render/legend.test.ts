import { describe, expect, it } from "vitest";
import { headline, summarise } from "./legend";

function counts(sizes: number[], unclustered = 0): Int32Array {
  return Int32Array.from([unclustered, ...sizes]);
}

describe("the cluster legend", () => {
  it("says how many of the largest clusters are in colour and how many others are grey", () => {
    // 60 clusters; 12 have hues.
    const sizes = Array.from({ length: 60 }, (_, i) => 100 - i);
    const hues = Int32Array.from({ length: 12 }, (_, i) => i);
    const s = summarise(counts(sizes, 7), hues);
    expect(headline(s)).toBe("12 largest clusters in colour; 48 others grey");
    expect(s.coloured.map(([id]) => id)).toEqual([...Array(12).keys()]);
    expect(s.coloured[0]).toEqual([0, 100]);
    expect(s.otherMembers).toBe(sizes.slice(12).reduce((a, b) => a + b, 0));
    expect(s.unclustered).toBe(7);
  });

  it("lists the coloured clusters largest first, whatever hue they hold", () => {
    const s = summarise(counts([5, 50, 20]), Int32Array.from([0, 2, 1, -1]));
    expect(s.coloured).toEqual([[1, 50], [2, 20], [0, 5]]);
    expect(headline(s)).toBe("all 3 clusters in colour");
  });

  it("says so when there are no clusters yet", () => {
    expect(headline(summarise(counts([], 40), new Int32Array(12).fill(-1)))).toMatch(/^no clusters yet/);
  });
});
