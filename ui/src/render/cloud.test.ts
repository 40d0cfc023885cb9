import { afterEach, describe, expect, it } from "vitest";
import { colorTable, ROW_OTHER } from "../colors";
import { IdSet } from "../idset";
import { RowIndex, type LayoutData, type PointData } from "../store";
import type { UploadProtocol } from "../workers/protocol";
import { serve, WorkerProxy, type Port } from "../workers/proxy";
import { uploadHandlers } from "../workers/upload_handlers";
import { PointCloud } from "./cloud";
import type { PointProps, PointsRenderer } from "./points";

/// Maps x, y in [-1, 1] straight to a 100 × 100 canvas: screen x = (x + 1) · 50.
const FLAT = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

class FakeRenderer {
  props: Partial<PointProps> = {};
  invalidated: string[] = [];
  canvasSize = { width: 100, height: 100 };
  setProps(p: Partial<PointProps>): boolean {
    Object.assign(this.props, p);
    return true;
  }
  invalidate(col: string): void {
    this.invalidated.push(col);
  }
  viewProjection(): number[] {
    return FLAT;
  }
}

const channels: MessageChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

/// A cloud whose worker is the real upload handlers behind the real proxy (over a MessageChannel).
function cloud(): { c: PointCloud; r: FakeRenderer } {
  const ch = new MessageChannel();
  channels.push(ch);
  serve<UploadProtocol>(ch.port2 as unknown as Port, uploadHandlers);
  const proxy = new WorkerProxy<UploadProtocol>(ch.port1 as unknown as Port);
  const r = new FakeRenderer();
  return { c: new PointCloud(r as unknown as PointsRenderer, () => proxy), r };
}

function points(n: number, cluster: (i: number) => number = (i) => i % 3): PointData {
  const ids = Int32Array.from({ length: n }, (_, i) => i + 1);
  return {
    n, t0: 0, ids, clusters: Int32Array.from({ length: n }, (_, i) => cluster(i)),
    times: new Float32Array(n), access: new Uint32Array(n), importance: new Float32Array(n), energy: new Float32Array(n),
    kinds: Uint8Array.from({ length: n }, (_, i) => i % 4), states: new Uint8Array(n), index: new RowIndex(ids),
  };
}

/// A 2D layout: point i at x = -1 for even i, +1 for odd i; y spread over [-0.5, 0.5].
function layout(n: number): LayoutData {
  return {
    method: "pca", dims: 2, ids: Int32Array.from({ length: n }, (_, i) => i + 1),
    coords: Float32Array.from({ length: n * 2 }, (_, j) => (j % 2 === 0 ? ((j / 2) % 2 === 0 ? -1 : 1) : ((j - 1) / 2 / n) - 0.5)),
  };
}

describe("PointCloud", () => {
  it("installs an upload from the worker: every point shown, coloured and counted; the layout's buffers moved", async () => {
    const { c, r } = cloud();
    const p = points(6), lay = layout(6);
    c.pull = 0;
    expect(await c.setData(p, lay, false)).toBe(true);
    expect(lay.coords.length).toBe(0); // transferred to the worker
    expect(c.shown).toBe(p);
    expect(Array.from(r.props.flags!)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(Array.from(c.counts)).toEqual([0, 2, 2, 2]);
    expect(Array.from(r.props.values!)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(r.props.table).toEqual(colorTable("cluster"));
    // Even rows sit left of the centre, odd rows right.
    expect(c.positionOf(1)![0]).toBeLessThan(0);
    expect(c.positionOf(2)![0]).toBeGreaterThan(0);
  });

  it("lets a later upload supersede one still in the worker", async () => {
    const { c } = cloud();
    const first = c.setData(points(4), layout(4), false);
    const second = c.setData(points(5), layout(5), false);
    expect(await first).toBe(false);
    expect(await second).toBe(true);
    expect(c.shown!.n).toBe(5);
  });

  it("marks the selected points and unmarks the ones selected before, for small and large selections", async () => {
    const { c, r } = cloud();
    await c.setData(points(200), layout(200), false);
    const flags = () => Array.from(r.props.flags!);
    c.paintSelection(IdSet.of([2, 3]));
    expect(flags().filter((f) => f === 2)).toHaveLength(2);
    expect(flags()[1]).toBe(2);
    // 100 ids: matched by a merge of the sorted lists.
    c.paintSelection(IdSet.of(Array.from({ length: 100 }, (_, i) => 2 * i + 1)));
    const marked = flags().flatMap((f, i) => (f === 2 ? [i] : []));
    expect(marked).toEqual(Array.from({ length: 100 }, (_, i) => 2 * i));
    c.paintSelection(IdSet.empty);
    expect(flags().every((f) => f === 1)).toBe(true);
    expect(r.props.dim).toBe(1);
  });

  it("finds the ids inside a lasso in the worker", async () => {
    const { c, r } = cloud();
    c.pull = 0;
    await c.setData(points(10), layout(10), false);
    // The left half of the canvas holds the even rows: ids 1, 3, 5, 7, 9.
    const out = await c.lasso([0, 0, 50, 0, 50, 100, 0, 100]);
    expect([...out!.ids]).toEqual([1, 3, 5, 7, 9]);
    // Marking the lasso's own selection uses its rows: the same points.
    c.paintSelection(out!.ids);
    expect(Array.from(r.props.flags!)).toEqual([2, 1, 2, 1, 2, 1, 2, 1, 2, 1]);
  });

  it("recolours in place and switches the colour table", async () => {
    const { c, r } = cloud();
    await c.setData(points(4), layout(4), false);
    expect(c.recolor("kind")).toBe(true);
    expect(Array.from(r.props.values!)).toEqual([0, 1, 2, 3]);
    expect(r.props.table).toEqual(colorTable("kind"));
    expect(r.invalidated).toContain("values");
  });

  it("applies a liquid step to the clusters, the counts and the hues", async () => {
    const { c, r } = cloud();
    // 14 clusters of sizes 14 down to 1: clusters 12 and 13 are grey.
    const sizes = Array.from({ length: 14 }, (_, k) => 14 - k);
    const cl = sizes.flatMap((s, k) => Array(s).fill(k));
    await c.setData(points(cl.length, (i) => cl[i]), null, false);
    expect(c.hues).not.toContain(13);
    // Every member of cluster 0 moves to cluster 13, which becomes the largest.
    const moved = cl.flatMap((k, i) => (k === 0 ? [{ memory_id: i + 1, to: 13 }] : []));
    c.moveClusters(moved, []);
    expect(c.counts[14]).toBe(15);
    expect(c.counts[1]).toBe(0);
    expect(c.hues).toContain(13);
    expect(c.hues).not.toContain(0);
    c.recolor("cluster");
    expect(r.props.values![0]).toBe(c.hues.indexOf(13));
    // Cluster 13 took the hue cluster 0 gave up; cluster 12 (2 members) is 13th largest: grey.
    expect(c.hues.indexOf(13)).toBe(0);
    expect(r.props.values![cl.length - 2]).toBe(ROW_OTHER);
  });
});
