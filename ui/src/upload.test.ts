import { describe, expect, it } from "vitest";
import { categorical } from "./colors";
import { columnBuffers, computeUpload, fillBase, normOf, pullTargets, transferables, type Columns, type LayoutColumns } from "./upload";

function columns(ids: number[], clusters: number[]): Columns {
  const n = ids.length;
  return {
    n,
    ids: Int32Array.from(ids),
    clusters: Int32Array.from(clusters),
    times: Float32Array.from(ids, (_, i) => i),
    access: new Uint32Array(n),
    importance: new Float32Array(n).fill(0.5),
    energy: new Float32Array(n),
    kinds: new Uint8Array(n),
    states: new Uint8Array(n),
  };
}

function layout(ids: number[], coords: number[][]): LayoutColumns {
  return { dims: 3, ids: Int32Array.from(ids), coords: Float32Array.from(coords.flat()) };
}

const unit = { cx: 0, cy: 0, cz: 0, s: 1 };

describe("fillBase", () => {
  it("places each point at its own layout row when both id lists are ascending", () => {
    // Point 2 is missing from the layout; layout row 3 has no point.
    const ids = Int32Array.from([1, 2, 4]);
    const lay = layout([1, 3, 4], [[1, 1, 1], [9, 9, 9], [4, 4, 4]]);
    const base = new Float32Array(9).fill(7), flags = new Float32Array(3);
    fillBase(ids, 3, lay, unit, base, flags);
    expect(Array.from(flags)).toEqual([1, 0, 1]);
    expect(Array.from(base)).toEqual([1, 1, 1, 0, 0, 0, 4, 4, 4]);
  });

  it("finds the rows of ids in any order", () => {
    const ids = Int32Array.from([4, 1, 2]);
    const lay = layout([2, 4, 1], [[2, 0, 0], [4, 0, 0], [1, 0, 0]]);
    const base = new Float32Array(9), flags = new Float32Array(3);
    fillBase(ids, 3, lay, unit, base, flags);
    expect(Array.from(flags)).toEqual([1, 1, 1]);
    expect([base[0], base[3], base[6]]).toEqual([4, 1, 2]);
  });

  it("centres and scales by the layout's frame, and fills z with 0 for 2D layouts", () => {
    const lay: LayoutColumns = { dims: 2, ids: Int32Array.from([1, 2]), coords: Float32Array.from([0, 0, 2, 4]) };
    const base = new Float32Array(6), flags = new Float32Array(2);
    fillBase(Int32Array.from([1, 2]), 2, lay, { cx: 1, cy: 2, cz: 5, s: 0.5 }, base, flags);
    expect(Array.from(base)).toEqual([-0.5, -1, 0, 0.5, 1, 0]);
  });
});

describe("normOf", () => {
  it("puts the mean at the origin", () => {
    const n = normOf(layout([1, 2, 3, 4], [[1, 0, 0], [3, 0, 0], [1, 2, 0], [3, 2, 4]]));
    expect([n.cx, n.cy, n.cz]).toEqual([2, 1, 1]);
    expect(n.s).toBeGreaterThan(0);
  });
});

describe("pullTargets", () => {
  const base = Float32Array.from([0, 0, 0, 2, 0, 0, 10, 10, 10, 5, 5, 5]);
  const flags = Float32Array.from([1, 1, 1, 0]);
  const clusters = Int32Array.from([0, 0, -1, 0]);

  it("moves clustered points the pull's share toward their cluster's mean, ignoring hidden points", () => {
    const out = new Float32Array(12), place = new Float32Array(12);
    pullTargets(base, flags, clusters, 4, 0.5, out, place);
    // Cluster 0's visible members are at x=0 and x=2: mean x=1.
    expect(Array.from(out.subarray(0, 3))).toEqual([0.5, 0, 0]);
    expect(Array.from(out.subarray(3, 6))).toEqual([1.5, 0, 0]);
    // Unclustered and hidden points stay where they are.
    expect(Array.from(out.subarray(6, 9))).toEqual([10, 10, 10]);
    expect(Array.from(out.subarray(9, 12))).toEqual([5, 5, 5]);
    expect(place).toEqual(out);
  });

  it("is the projection itself at pull 0", () => {
    const out = new Float32Array(12);
    pullTargets(base, flags, clusters, 4, 0, out, null);
    expect(out).toEqual(base);
  });
});

describe("computeUpload", () => {
  it("returns positions, colours and flags for every point, and hands the columns back", () => {
    const pts = columns([1, 2, 3], [0, 1, -1]);
    const r = computeUpload({
      seq: 7, points: pts, layout: layout([1, 2, 3], [[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
      norm: null, pull: 0, colorBy: "cluster",
    });
    expect(r.seq).toBe(7);
    expect(r.norm).not.toBeNull();
    expect(Array.from(r.flags)).toEqual([1, 1, 1]);
    expect(r.positions).toEqual(r.target);
    const want = new Float32Array(3);
    categorical(1, want, 0);
    expect(Array.from(r.colors.subarray(3, 6))).toEqual(Array.from(want));
    categorical(-1, want, 0);
    expect(Array.from(r.colors.subarray(6, 9))).toEqual(Array.from(want));
    expect(r.returned).toBe(pts);
    // Every array goes back by transfer, none by copy.
    expect(new Set(transferables(r)).size).toBe(5 + columnBuffers(pts).length);
  });

  it("hides every point when there is no layout", () => {
    const r = computeUpload({ seq: 1, points: columns([1, 2], [0, 0]), layout: null, norm: null, pull: 0.25, colorBy: "kind" });
    expect(Array.from(r.flags)).toEqual([0, 0]);
    expect(r.norm).toBeNull();
  });
});
