// The per-point work of a 3D-view data upload: placing the layout's coordinates on the
// points, drawing each point toward its cluster's centre, and colouring. A data upload runs
// it in the upload worker (upload.worker.ts): the main thread transfers the layout and
// copies of the columns it needs, and installs the finished arrays. Recolouring and
// re-targeting run the same functions on the main thread.

import { categorical, KIND_COLORS, paintByIndex, paintRamp, STATE_COLORS, table, type ColorBy } from "./colors";

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
  seq: number;
  points: Columns;
  layout: LayoutColumns | null;
  /// The frame of earlier layouts of the same method (null: compute it from this layout).
  norm: Norm | null;
  pull: number;
  colorBy: ColorBy;
}

export interface UploadResult {
  seq: number;
  norm: Norm | null;
  /// Projected positions, normalised; hidden points (not in the layout) are at 0.
  base: Float32Array<ArrayBuffer>;
  /// Where each point is drawn (`base` pulled toward its cluster's centre), and a copy of it
  /// for the drawn positions.
  target: Float32Array<ArrayBuffer>;
  positions: Float32Array<ArrayBuffer>;
  colors: Float32Array<ArrayBuffer>;
  /// 0: hidden (not in the layout), 1: visible. Selection marks are the main thread's.
  flags: Float32Array<ArrayBuffer>;
  /// Milliseconds spent on each stage.
  parts: { fill: number; pull: number; colors: number };
  /// The request's point columns, handed back for reuse by the next upload.
  returned: Columns;
}

// Kinds and states index these tables directly (both come from the backend as 0..len-1).
const KIND_TABLE = table(KIND_COLORS);
const STATE_TABLE = table(STATE_COLORS);

/// The largest cluster id among the points (-1: none is clustered).
export function maxCluster(clusters: Int32Array, n: number): number {
  let max = -1;
  for (let i = 0; i < n; i++) if (clusters[i] > max) max = clusters[i];
  return max;
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

/// The rgb colour of every point for a colour mode, written into `out`.
export function paintColors(colorBy: ColorBy, p: Columns, out: Float32Array): void {
  const n = p.n;
  switch (colorBy) {
    case "cluster": {
      // One palette entry per cluster id (-1 first), then a table lookup per point.
      const max = Math.max(0, maxCluster(p.clusters, n));
      const pal = new Float32Array((max + 2) * 3);
      for (let c = -1; c <= max; c++) categorical(c, pal, (c + 1) * 3);
      const cl = p.clusters;
      for (let i = 0; i < n; i++) {
        const o = (cl[i] + 1) * 3;
        out[i * 3] = pal[o]; out[i * 3 + 1] = pal[o + 1]; out[i * 3 + 2] = pal[o + 2];
      }
      break;
    }
    case "kind":
      paintByIndex(p.kinds, KIND_TABLE, out, n);
      break;
    case "state":
      paintByIndex(p.states, STATE_TABLE, out, n);
      break;
    case "recency": {
      const times = p.times;
      let max = 1;
      for (let i = 0; i < n; i++) if (times[i] > max) max = times[i];
      paintRamp((i) => times[i], 1 / max, out, n);
      break;
    }
    case "usage": {
      const access = p.access;
      let max = 1;
      for (let i = 0; i < n; i++) if (access[i] > max) max = access[i];
      paintRamp((i) => Math.log1p(access[i]), 1 / Math.log1p(max), out, n);
      break;
    }
    case "importance": {
      const imp = p.importance;
      paintRamp((i) => imp[i], 1, out, n);
      break;
    }
    case "energy": {
      const energy = p.energy;
      let max = 1e-6;
      for (let i = 0; i < n; i++) if (energy[i] > max) max = energy[i];
      paintRamp((i) => energy[i], 1 / max, out, n);
      break;
    }
  }
}

/// A whole upload: fresh arrays for the point count, filled from the layout, pulled and
/// coloured. Without a layout every point is hidden.
export function computeUpload(req: UploadRequest): UploadResult {
  const p = req.points, n = p.n;
  const base = new Float32Array(n * 3), target = new Float32Array(n * 3), positions = new Float32Array(n * 3);
  const colors = new Float32Array(n * 3), flags = new Float32Array(n);
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
  paintColors(req.colorBy, p, colors);
  const col = performance.now() - t;
  return { seq: req.seq, norm, base, target, positions, colors, flags, parts: { fill, pull, colors: col }, returned: p };
}

/// The buffers of point columns (each column has its own).
export function columnBuffers(c: Columns): ArrayBuffer[] {
  return [c.ids, c.clusters, c.times, c.access, c.importance, c.energy, c.kinds, c.states].map((a) => a.buffer as ArrayBuffer);
}

/// The buffers of a result, to transfer rather than copy.
export function transferables(r: UploadResult): ArrayBuffer[] {
  return [...[r.base, r.target, r.positions, r.colors, r.flags].map((a) => a.buffer), ...columnBuffers(r.returned)];
}
