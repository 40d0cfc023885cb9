import { describe, expect, it } from "vitest";
import { ROW_OTHER, ROW_UNCLUSTERED } from "../colors";
import { applyClusterMoves, clusterCounts, columnBuffers, computeUpload, fillBase, normOf, paintValues, pullTargets, transferables, type Columns, type LayoutColumns } from "./upload";

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
  it("returns positions, colour values, flags and cluster counts for every point, and hands the columns back", () => {
    const pts = columns([1, 2, 3], [0, 1, -1]);
    const r = computeUpload({
      points: pts, layout: layout([1, 2, 3], [[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
      norm: null, pull: 0, colorBy: "cluster", hues: null,
    });
    expect(r.norm).not.toBeNull();
    expect(Array.from(r.flags)).toEqual([1, 1, 1]);
    expect(r.positions).toEqual(r.target);
    expect(Array.from(r.counts)).toEqual([1, 1, 1]);
    // Equal sizes: the smaller id takes the first hue; the unclustered point its own row.
    expect(Array.from(r.hues.subarray(0, 3))).toEqual([0, 1, -1]);
    expect(Array.from(r.values)).toEqual([0, 1, ROW_UNCLUSTERED]);
    expect(r.ascending).toBe(true);
    expect(r.returned).toBe(pts);
    // Every array goes back by transfer, none by copy.
    expect(new Set(transferables(r)).size).toBe(7 + columnBuffers(pts).length);
  });

  it("hides every point when there is no layout", () => {
    const r = computeUpload({ points: columns([1, 2], [0, 0]), layout: null, norm: null, pull: 0.25, colorBy: "kind", hues: null });
    expect(Array.from(r.flags)).toEqual([0, 0]);
    expect(r.norm).toBeNull();
  });

  it("keeps the hue of a cluster that stays among the largest", () => {
    // Cluster 5 had hue 3 before; it is still among the largest, so it keeps it.
    const prev = new Int32Array(12).fill(-1);
    prev[3] = 5;
    const r = computeUpload({ points: columns([1, 2, 3, 4], [5, 5, 2, 7]), layout: null, norm: null, pull: 0, colorBy: "cluster", hues: prev });
    expect(r.hues[3]).toBe(5);
    expect(r.values[0]).toBe(3);
  });
});

describe("paintValues", () => {
  it("gives clusters without a hue the shared grey row", () => {
    const pts = columns([1, 2, 3], [0, 1, 2]);
    const hues = new Int32Array(12).fill(-1);
    hues[0] = 1;
    const out = new Float32Array(3);
    paintValues("cluster", pts, hues, out);
    expect(Array.from(out)).toEqual([ROW_OTHER, 0, ROW_OTHER]);
  });

  it("scales ramp modes to [0, 1] by the largest value", () => {
    const pts = columns([1, 2, 3], [0, 0, 0]);
    pts.access = Uint32Array.from([0, 3, 15]);
    const out = new Float32Array(3);
    paintValues("usage", pts, new Int32Array(0), out);
    expect(out[0]).toBe(0);
    expect(out[2]).toBeCloseTo(1, 6);
    expect(out[1]).toBeCloseTo(Math.log1p(3) / Math.log1p(15), 6);
  });

  it("puts kinds and states on their table rows", () => {
    const pts = columns([1, 2], [0, 0]);
    pts.kinds = Uint8Array.from([3, 1]);
    const out = new Float32Array(2);
    paintValues("kind", pts, new Int32Array(0), out);
    expect(Array.from(out)).toEqual([3, 1]);
  });
});

describe("applyClusterMoves", () => {
  const points = (ids: number[], clusters: number[]) => {
    const c = columns(ids, clusters);
    return { ...c, index: { get: (id: number) => { const i = ids.indexOf(id); return i < 0 ? undefined : i; } } };
  };

  it("moves members between clusters and keeps the counts in step", () => {
    const p = points([1, 2, 3, 4], [0, 0, 1, -1]);
    const counts = applyClusterMoves(p, clusterCounts(p.clusters, p.n), [{ memory_id: 2, to: 1 }, { memory_id: 4, to: 3 }], []);
    expect(Array.from(p.clusters)).toEqual([0, 1, 1, 3]);
    expect(Array.from(counts)).toEqual(Array.from(clusterCounts(p.clusters, p.n)));
  });

  it("folds a merged cluster into the one it joined", () => {
    const p = points([1, 2, 3], [0, 2, 2]);
    const counts = applyClusterMoves(p, clusterCounts(p.clusters, p.n), [], [{ from_id: 2, into_id: 0 }]);
    expect(Array.from(p.clusters)).toEqual([0, 0, 0]);
    expect(counts[1]).toBe(3);
    expect(counts[3]).toBe(0);
  });
});
