// The per-point work of a 3D-view data upload: placing the layout's coordinates on the
// points, drawing each point toward its cluster's centre, counting cluster sizes and giving
// each point its colour value. A data upload runs it in the upload worker: the main thread
// transfers the layout and copies of the columns it needs, and installs the finished arrays.
// Recolouring and re-targeting run the same functions on the main thread.

import { assignHues, clusterRows, type ColorBy } from "../colors";

/// The point columns an upload reads (PointData without its row index).
export interface Columns {
  n: number;
  ids: Int32Array;
  clusters: Int32Array;
  times: Float32Array;
  access: Uint32Array;
  importance: Float32Array;
  energy: Float32Array;
  kinds: Uint8Array;
  states: Uint8Array;
}

export interface LayoutColumns {
  dims: number;
  ids: Int32Array;
  coords: Float32Array;
}

/// Centre and scale that map a projection into the view's unit frame.
export interface Norm {
  cx: number;
  cy: number;
  cz: number;
  s: number;
}

export interface UploadRequest {
  points: Columns;
  layout: LayoutColumns | null;
  /// The frame of earlier layouts of the same method (null: compute it from this layout).
  norm: Norm | null;
  pull: number;
  colorBy: ColorBy;
  /// The cluster each hue went to last time (kept where the cluster is still among the largest).
  hues: Int32Array | null;
}

export interface UploadResult {
  norm: Norm | null;
  /// Projected positions, normalised; hidden points (not in the layout) are at 0.
  base: Float32Array<ArrayBuffer>;
  /// Where each point is drawn (`base` pulled toward its cluster's centre), and a copy of it
  /// for the drawn positions.
  target: Float32Array<ArrayBuffer>;
  positions: Float32Array<ArrayBuffer>;
  /// Each point's colour: a table row or a position along the ramp (see colors.ts).
  values: Float32Array<ArrayBuffer>;
  /// 0: hidden (not in the layout), 1: visible. Selection marks are the main thread's.
  flags: Float32Array<ArrayBuffer>;
  /// Members per cluster id + 1 (entry 0: unclustered), and the clusters given hues.
  counts: Int32Array<ArrayBuffer>;
  hues: Int32Array<ArrayBuffer>;
  /// Whether the point ids are strictly ascending (rows can then be matched by a merge).
  ascending: boolean;
  /// Milliseconds spent on each stage.
  parts: { fill: number; pull: number; colors: number };
  /// The request's point columns, handed back for reuse by the next upload.
  returned: Columns;
}

/// The largest cluster id among the points (-1: none is clustered).
export function maxCluster(clusters: Int32Array, n: number): number {
  let max = -1;
  for (let i = 0; i < n; i++) if (clusters[i] > max) max = clusters[i];
  return max;
}

/// Members of each cluster, indexed by cluster id + 1 (entry 0 counts the unclustered).
export function clusterCounts(clusters: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const counts = new Int32Array(Math.max(0, maxCluster(clusters, n)) + 2);
  for (let i = 0; i < n; i++) counts[clusters[i] + 1]++;
  return counts;
}

/// The frame of a layout: its mean at the origin and its 95th-percentile radius at 1
/// (from a sample of at most about 5,000 rows).
export function normOf(layout: LayoutColumns): Norm {
  const d = layout.dims, c = layout.coords, m = layout.ids.length;
  let cx = 0, cy = 0, cz = 0;
  for (let j = 0; j < m; j++) {
    cx += c[j * d]; cy += c[j * d + 1]; cz += d > 2 ? c[j * d + 2] : 0;
  }
  cx /= m; cy /= m; cz /= m;
  const r: number[] = [];
  for (let j = 0; j < m; j += Math.max(1, Math.floor(m / 5000))) {
    const dx = c[j * d] - cx, dy = c[j * d + 1] - cy, dz = d > 2 ? c[j * d + 2] - cz : 0;
    r.push(Math.sqrt(dx * dx + dy * dy + dz * dz));
  }
  r.sort((a, b) => a - b);
  const p95 = r[Math.floor(r.length * 0.95)] || 1;
  return { cx, cy, cz, s: 1 / p95 };
}

/// Writes each point's normalised layout position into `base` and marks it visible (1) in
/// `flags`, or hidden (0) when the layout has no row for it.
export function fillBase(ids: Int32Array, n: number, layout: LayoutColumns, norm: Norm, base: Float32Array, flags: Float32Array): void {
  const d = layout.dims, c = layout.coords;
  const { cx, cy, cz, s } = norm;
  // Both id lists are usually ascending (the backend sends them by id) and often identical:
  // then a merge finds each point's layout row in one pass. A Map is the fallback for any
  // other order.
  const lids = layout.ids, m = lids.length;
  let ascending = true;
  for (let i = 1; ascending && i < n; i++) ascending = ids[i - 1] < ids[i];
  for (let j = 1; ascending && j < m; j++) ascending = lids[j - 1] < lids[j];
  let rowOf: Map<number, number> | null = null;
  if (!ascending) {
    rowOf = new Map<number, number>();
    for (let j = 0; j < m; j++) rowOf.set(lids[j], j);
  }
  let cursor = 0;
  for (let i = 0; i < n; i++) {
    let j: number | undefined;
    if (rowOf) j = rowOf.get(ids[i]);
    else {
      while (cursor < m && lids[cursor] < ids[i]) cursor++;
      j = cursor < m && lids[cursor] === ids[i] ? cursor : undefined;
    }
    if (j === undefined) {
      base[i * 3] = base[i * 3 + 1] = base[i * 3 + 2] = 0;
      flags[i] = 0;
      continue;
    }
    base[i * 3] = (c[j * d] - cx) * s;
    base[i * 3 + 1] = (c[j * d + 1] - cy) * s;
    base[i * 3 + 2] = d > 2 ? (c[j * d + 2] - cz) * s : 0;
    flags[i] = 1;
  }
}

/// Where each point is drawn: its projected position moved `pull` of the way toward the
/// mean projected position of its cluster. Unclustered and hidden points stay put. With
/// `place`, the result is also written there (points drawn at once, no animation).
export function pullTargets(base: Float32Array, flags: Float32Array, clusters: Int32Array, n: number, pull: number,
  out: Float32Array, place: Float32Array | null): void {
  if (pull <= 0) {
    out.set(base.subarray(0, n * 3));
    place?.set(base.subarray(0, n * 3));
    return;
  }
  const max = maxCluster(clusters, n);
  const cen = new Float64Array((max + 1) * 3), cnt = new Float64Array(max + 1);
  for (let i = 0; i < n; i++) {
    const c = clusters[i];
    if (c < 0 || flags[i] === 0) continue;
    cen[c * 3] += base[i * 3]; cen[c * 3 + 1] += base[i * 3 + 1]; cen[c * 3 + 2] += base[i * 3 + 2];
    cnt[c]++;
  }
  for (let c = 0; c <= max; c++) {
    if (cnt[c] > 0) { cen[c * 3] /= cnt[c]; cen[c * 3 + 1] /= cnt[c]; cen[c * 3 + 2] /= cnt[c]; }
  }
  for (let i = 0; i < n; i++) {
    const c = clusters[i];
    let x = base[i * 3], y = base[i * 3 + 1], z = base[i * 3 + 2];
    if (c >= 0 && flags[i] !== 0 && cnt[c] > 0) {
      x += pull * (cen[c * 3] - x); y += pull * (cen[c * 3 + 1] - y); z += pull * (cen[c * 3 + 2] - z);
    }
    out[i * 3] = x; out[i * 3 + 1] = y; out[i * 3 + 2] = z;
    if (place) { place[i * 3] = x; place[i * 3 + 1] = y; place[i * 3 + 2] = z; }
  }
}

/// Each point's colour value for a mode, written into `out`: the row of its category in the
/// mode's colour table, or its position along the ramp in [0, 1] (the shader clamps). `hues` (the clusters given
/// hues) is read in cluster mode only.
export function paintValues(colorBy: ColorBy, p: Columns, hues: Int32Array, out: Float32Array): void {
  const n = p.n;
  switch (colorBy) {
    case "cluster": {
      const rows = clusterRows(hues, maxCluster(p.clusters, n)), cl = p.clusters;
      for (let i = 0; i < n; i++) out[i] = rows[cl[i] + 1];
      break;
    }
    case "kind":
      out.set(p.kinds.subarray(0, n));
      break;
    case "state":
      out.set(p.states.subarray(0, n));
      break;
    case "recency":
      scaleByMax(p.times, n, out);
      break;
    case "energy":
      scaleByMax(p.energy, n, out);
      break;
    case "importance":
      out.set(p.importance.subarray(0, n));
      break;
    case "usage": {
      // log1p(count) / log1p(max count), from a table for the common small counts.
      const a = p.access;
      let max = 0;
      for (let i = 0; i < n; i++) if (a[i] > max) max = a[i];
      const s = max > 0 ? 1 / Math.log1p(max) : 0;
      const lut = Float32Array.from({ length: Math.min(max, 1023) + 1 }, (_, c) => Math.log1p(c) * s);
      for (let i = 0; i < n; i++) out[i] = a[i] < lut.length ? lut[a[i]] : Math.log1p(a[i]) * s;
      break;
    }
  }
}

/// `out[i] = v[i] / max(v)` (0 when nothing is above 0).
function scaleByMax(v: Float32Array, n: number, out: Float32Array): void {
  let max = 0;
  for (let i = 0; i < n; i++) if (v[i] > max) max = v[i];
  const s = max > 0 ? 1 / max : 0;
  for (let i = 0; i < n; i++) out[i] = v[i] * s;
}

/// A whole upload: fresh arrays for the point count, filled from the layout, pulled, counted
/// and coloured. Without a layout every point is hidden.
export function computeUpload(req: UploadRequest): UploadResult {
  const p = req.points, n = p.n;
  const base = new Float32Array(n * 3), target = new Float32Array(n * 3), positions = new Float32Array(n * 3);
  const values = new Float32Array(n), flags = new Float32Array(n);
  let t = performance.now();
  let norm = req.norm;
  if (req.layout && req.layout.ids.length > 0) {
    norm ??= normOf(req.layout);
    fillBase(p.ids, n, req.layout, norm, base, flags);
  }
  const fill = performance.now() - t;
  t = performance.now();
  pullTargets(base, flags, p.clusters, n, req.pull, target, positions);
  const pull = performance.now() - t;
  t = performance.now();
  const counts = clusterCounts(p.clusters, n);
  const hues = assignHues(counts, req.hues) as Int32Array<ArrayBuffer>;
  paintValues(req.colorBy, p, hues, values);
  const colors = performance.now() - t;
  let ascending = true;
  for (let i = 1; ascending && i < n; i++) ascending = p.ids[i - 1] < p.ids[i];
  return { norm, base, target, positions, values, flags, counts, hues, ascending, parts: { fill, pull, colors }, returned: p };
}

/// The buffers of point columns (each column has its own).
export function columnBuffers(c: Columns): ArrayBuffer[] {
  return [c.ids, c.clusters, c.times, c.access, c.importance, c.energy, c.kinds, c.states].map((a) => a.buffer as ArrayBuffer);
}

/// The buffers of a result, to transfer rather than copy.
export function transferables(r: UploadResult): ArrayBuffer[] {
  return [...[r.base, r.target, r.positions, r.values, r.flags, r.counts, r.hues].map((a) => a.buffer), ...columnBuffers(r.returned)];
}

/// A liquid step's edits to cluster memberships, applied to the point columns and the
/// cluster counts in place: `moved` memories change cluster, `merged` clusters fold into
/// another. Returns the counts (a larger array when a cluster id beyond it appeared).
export function applyClusterMoves(
  p: Columns & { index: { get(id: number): number | undefined } }, counts: Int32Array,
  moved: { memory_id: number; to: number }[], merged: { from_id: number; into_id: number }[],
): Int32Array {
  let top = counts.length - 2;
  for (const mv of moved) top = Math.max(top, mv.to);
  for (const mg of merged) top = Math.max(top, mg.into_id);
  if (top + 2 > counts.length) {
    const grown = new Int32Array(top + 2);
    grown.set(counts);
    counts = grown;
  }
  for (const mv of moved) {
    const i = p.index.get(mv.memory_id);
    if (i === undefined) continue;
    counts[p.clusters[i] + 1]--;
    p.clusters[i] = mv.to;
    counts[mv.to + 1]++;
  }
  for (const mg of merged) {
    if (mg.from_id + 1 >= counts.length || counts[mg.from_id + 1] === 0) continue;
    for (let i = 0; i < p.n; i++) if (p.clusters[i] === mg.from_id) p.clusters[i] = mg.into_id;
    counts[mg.into_id + 1] += counts[mg.from_id + 1];
    counts[mg.from_id + 1] = 0;
  }
  return counts;
}
