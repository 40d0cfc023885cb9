// App-wide state shared by the views: the current filter, the selection, the last search,
// and the point data. Views subscribe to named topics; nothing here touches the DOM.

import { IdSet } from "./idset";
import type { ClusterGroup, MemoryFilter, SearchResponse, SearchWhatIf } from "./types";
import type { ProjectionMethod } from "./bindings";
import { emptyFilter } from "./types";
import type { Columns } from "./workers/upload";
import { timed } from "./render/perf";

/// `hues`: which clusters the colour-by-cluster palette gives a hue changed.
/// `asof`: the time scrubber moved (`state.asOf`). `settings`: settings were applied or
/// undone. `whatif`: the What-if panel simulated (`state.whatif`).
/// `golden`: a golden query was saved or removed.
type Topic = "selection" | "filter" | "search" | "points" | "layout" | "data" | "clusters" | "hues" | "duplicates" | "asof" | "golden" | "settings" | "whatif";

class Bus {
  private subs = new Map<Topic, Map<() => void, string>>();
  /// `who` names the subscriber in the main-thread span record (render/perf.ts).
  on(topic: Topic, f: () => void, who = "?"): void {
    let s = this.subs.get(topic);
    if (!s) this.subs.set(topic, (s = new Map()));
    s.set(f, who);
  }
  emit(topic: Topic): void {
    for (const [f, who] of this.subs.get(topic) ?? []) timed(`${topic}:${who}`, f);
  }
}

export const bus = new Bus();

/// Column-oriented point attributes (the "SMPA" buffer from src-tauri/src/points.rs).
export interface PointData extends Columns {
  /// Unix ms that `times` (seconds) count from.
  t0: number;
  /// id -> row
  index: RowIndex;
}

/// The row of a memory id in the point columns. The backend sends the points by id, so a
/// binary search over the ids finds it without building a table; a Map is the fallback if
/// they ever come in another order.
export class RowIndex {
  private map: Map<number, number> | null = null;

  constructor(private readonly ids: Int32Array) {
    for (let i = 1; i < ids.length; i++) {
      if (ids[i - 1] >= ids[i]) {
        this.map = new Map();
        for (let j = 0; j < ids.length; j++) this.map.set(ids[j], j);
        break;
      }
    }
  }

  get(id: number): number | undefined {
    if (this.map) return this.map.get(id);
    const ids = this.ids;
    let lo = 0, hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = ids[mid];
      if (v === id) return mid;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

export function parsePoints(buf: ArrayBuffer): PointData {
  const dv = new DataView(buf);
  const magic = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
  if (magic !== "SMPA") throw new Error(`bad point buffer ${magic}`);
  const n = dv.getUint32(4, true);
  const t0 = dv.getFloat64(8, true);
  let o = 16;
  const ids = new Int32Array(buf, o, n); o += 4 * n;
  const clusters = new Int32Array(buf, o, n); o += 4 * n;
  const times = new Float32Array(buf, o, n); o += 4 * n;
  const access = new Uint32Array(buf, o, n); o += 4 * n;
  const importance = new Float32Array(buf, o, n); o += 4 * n;
  const energy = new Float32Array(buf, o, n); o += 4 * n;
  const kinds = new Uint8Array(buf, o, n); o += n;
  const states = new Uint8Array(buf, o, n);
  return { n, t0, ids, clusters, times, access, importance, energy, kinds, states, index: new RowIndex(ids) };
}

export interface LayoutData {
  method: ProjectionMethod;
  dims: number;
  ids: Int32Array;
  coords: Float32Array;
}

export function parseLayout(buf: ArrayBuffer, method: ProjectionMethod): LayoutData {
  const dv = new DataView(buf);
  const magic = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
  if (magic !== "SMPL") throw new Error(`bad layout buffer ${magic}`);
  const n = dv.getUint32(4, true);
  const dims = dv.getUint32(8, true);
  const ids = new Int32Array(buf, 16, n);
  const coords = new Float32Array(buf, 16 + 4 * n, n * dims);
  return { method, dims, ids, coords };
}

export const state = {
  filter: emptyFilter() as MemoryFilter,
  /// Selected memory ids; `primary` is the one shown in the detail pane.
  selection: IdSet.empty,
  primary: null as number | null,
  search: null as SearchResponse | null,
  points: null as PointData | null,
  clusterLabels: new Map<number, string>(),
  /// The group of each cluster, when the engine grouped them (more than 20 clusters).
  clusterGroups: new Map<number, ClusterGroup>(),
  /// The cluster id each palette hue is given to (-1: unused); every other cluster is grey.
  hues: new Int32Array(0) as Int32Array,
  /// The near-duplicate groups last found (linked in the Space), or null.
  duplicates: null as number[][] | null,
  /// The instant the time scrubber shows (Unix ms), or null for now.
  asOf: null as number | null,
  /// The current search ranked with the saved and the What-if panel's proposed settings
  /// (the X-ray shows the moves), or null.
  whatif: null as SearchWhatIf | null,
};

export function select(ids: Iterable<number> | IdSet, primary: number | null = null): void {
  state.selection = ids instanceof IdSet ? ids : IdSet.of(ids);
  state.primary = primary ?? state.selection.first();
  bus.emit("selection");
}
