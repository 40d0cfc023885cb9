import { describe, expect, it } from "vitest";
import { groupSections, headline, summarise } from "./legend";

function counts(sizes: number[], unclustered = 0): Int32Array {
  return Int32Array.from([unclustered, ...sizes]);
}

describe("the cluster legend", () => {
  it("says how many of the largest clusters are in colour and how many smaller ones are grey", () => {
    // 60 clusters; 10 have hues.
    const sizes = Array.from({ length: 60 }, (_, i) => 100 - i);
    const hues = Int32Array.from({ length: 10 }, (_, i) => i);
    const s = summarise(counts(sizes, 7), hues);
    expect(headline(s)).toBe("10 largest clusters in colour; 50 smaller clusters in grey");
    expect(s.coloured.map(([id]) => id)).toEqual([...Array(10).keys()]);
    expect(s.coloured[0]).toEqual([0, 100]);
    expect(s.otherMembers).toBe(sizes.slice(10).reduce((a, b) => a + b, 0));
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

  it("sorts clusters into their groups: coloured ones listed, smaller ones counted grey", () => {
    // Clusters 0..5; 0, 1, 4 coloured. Group 1 = {0, 2, 3}, group 2 = {1, 4}; 5 has no group.
    const c = counts([40, 30, 5, 4, 20, 2]);
    const s = summarise(c, Int32Array.from([0, 1, 4]));
    const g1 = { id: 1, label: "sourdough · rye" }, g2 = { id: 2, label: "marathon" };
    const groups = new Map([[0, g1], [2, g1], [3, g1], [1, g2], [4, g2]]);
    const secs = groupSections(s, c, groups)!;
    expect(secs.map((x) => x.group?.label ?? null)).toEqual(["sourdough · rye", "marathon", null]);
    expect(secs[0]).toEqual({ group: g1, coloured: [[0, 40]], grey: 2, greyMembers: 9, members: 49 });
    expect(secs[1]).toEqual({ group: g2, coloured: [[1, 30], [4, 20]], grey: 0, greyMembers: 0, members: 50 });
    expect(secs[2]).toEqual({ group: null, coloured: [], grey: 1, greyMembers: 2, members: 2 });
    // Without groups the legend is a flat list.
    expect(groupSections(s, c, new Map())).toBeNull();
  });
});
