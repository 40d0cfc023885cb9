// The 3D view's point data on the main thread: the columns of the installed upload, where
// each point is drawn (and where it glides to), its colour value and its flags, the cluster
// sizes and hues. Heavy per-point work goes to the upload worker through the typed proxy:
// data uploads (layout fill, cluster pull, counts, colours) and lasso membership. The main
// thread copies what the worker reads into pooled buffers, posts, and installs what comes
// back; recolouring, re-targeting and selection marks stay here (one pass over a typed
// array each).

import { assignHues, colorTable, isRamp, type ColorBy } from "../colors";
import { IdSet } from "../idset";
import type { LayoutData, PointData } from "../store";
import { BufferPool } from "../workers/pool";
import type { UploadProtocol } from "../workers/protocol";
import type { WorkerProxy } from "../workers/proxy";
import { applyClusterMoves, clusterCounts, columnBuffers, paintValues, pullTargets, type Columns, type Norm, type UploadResult } from "../workers/upload";
import { perf } from "./perf";
import type { PointsRenderer } from "./points";

const EMPTY = new Float32Array(0);
const TABLES = new Map<ColorBy, Float32Array>();
function tableOf(c: ColorBy): Float32Array {
  let t = TABLES.get(c);
  if (!t) TABLES.set(c, (t = colorTable(c)));
  return t;
}

export interface LassoOutcome {
  ids: IdSet;
  /// Main-thread ms spent posting, and the worker's ms.
  post: number;
  worker: number;
}

export class PointCloud {
  /// The point data of the installed upload: what the arrays below are indexed by.
  shown: PointData | null = null;
  colorBy: ColorBy = "cluster";
  pull = 0.25;
  /// Members per cluster id + 1, and the cluster each hue is given to.
  counts: Int32Array = new Int32Array(0);
  hues: Int32Array = new Int32Array(0);
  private base = EMPTY;
  private target = EMPTY;
  private start = EMPTY;
  private positions = EMPTY;
  private values = EMPTY;
  private flags = EMPTY;
  private ascending = false;
  /// Rows marked selected by the last paintSelection (the first `markedCount`).
  private marked = new Uint32Array(0);
  private markedCount = 0;
  /// The last lasso's selection and its rows (visible points only), for marking it.
  private lassoed: { ids: IdSet; rows: Uint32Array; points: PointData } | null = null;
  private anim: { t0: number; ms: number } | null = null;
  private norm: Norm | null = null;
  /// Counts resets of the view's frame: an upload posted before a reset must not bring the
  /// old frame back.
  private normEpoch = 0;
  /// The upload in flight, and whether the pull, colours or clusters changed since it was posted.
  private pending: object | null = null;
  private stale = false;
  private readonly pool = new BufferPool();

  /// Time travel: per row the state code then (-1: not there, or hidden, then), or null for
  /// now; and the rows it hid (restored when it changes).
  private timeStates: Int8Array | null = null;
  /// The rows it hid are the first `timeHiddenN` (a list kept from step to step: at an
  /// early instant nearly every row is hidden, 100,000 at 100K memories).
  private timeHidden = new Int32Array(0);
  private timeHiddenN = 0;

  constructor(private readonly r: PointsRenderer, private readonly worker: () => WorkerProxy<UploadProtocol>) {}

  /// Shows the points as they were at an instant: rows coded -1 are hidden, the others
  /// take their state of then (for colour by state). `codes` is per row of the installed
  /// points; null shows them as they are now.
  setTime(codes: Int8Array | null): void {
    this.timeStates = codes;
    this.applyTime();
  }

  private applyTime(): void {
    const p = this.shown, f = this.flags;
    if (!p || f.length !== p.n) return;
    const hidden = this.timeHidden;
    for (let k = 0; k < this.timeHiddenN; k++) if (f[hidden[k]] === 0) f[hidden[k]] = 1;
    this.timeHiddenN = 0;
    const codes = this.timeStates;
    if (codes && codes.length === p.n) {
      if (this.timeHidden.length < p.n) this.timeHidden = new Int32Array(p.n);
      const into = this.timeHidden;
      let n = 0;
      for (let i = 0; i < p.n; i++) {
        if (codes[i] < 0 && f[i] !== 0) {
          f[i] = 0;
          into[n++] = i;
        }
      }
      this.timeHiddenN = n;
    }
    this.r.invalidate("flags");
    if (this.colorBy === "state") {
      paintValues("state", this.statesThen(p), this.hues, this.values);
      this.r.invalidate("values");
    }
  }

  /// The point data with each row's state as it was at the scrubbed instant.
  private statesThen(p: PointData): PointData {
    const codes = this.timeStates;
    if (!codes || codes.length !== p.n) return p;
    const states = new Uint8Array(p.n);
    for (let i = 0; i < p.n; i++) states[i] = codes[i] >= 0 ? codes[i] : p.states[i];
    return { ...p, states };
  }

  /// Uploads point attributes and (when present) a layout; ids missing from the layout are
  /// hidden until placed. The layout's buffers are transferred to the worker: the caller must
  /// not use them afterwards. Resolves true once installed, false when a later upload
  /// superseded it.
  async setData(points: PointData, layout: LayoutData | null, animate: boolean): Promise<boolean> {
    const t0 = performance.now();
    const cols = this.columnsFor(points);
    const transfer: Transferable[] = columnBuffers(cols).filter((b) => b.byteLength > 0);
    if (layout) transfer.push(layout.ids.buffer, layout.coords.buffer);
    const mine = { pull: this.pull, colorBy: this.colorBy, normEpoch: this.normEpoch };
    this.pending = mine;
    this.stale = false;
    const req = { points: cols, layout: layout && { dims: layout.dims, ids: layout.ids, coords: layout.coords }, norm: this.norm, pull: this.pull, colorBy: this.colorBy, hues: this.hues.length ? this.hues : null };
    const sent = this.worker().call("upload", req, { transfer });
    perf.upload_parts.post = performance.now() - t0;
    let res: UploadResult;
    try {
      res = await sent;
    } catch (e) {
      if (this.pending === mine) this.pending = null;
      throw e;
    }
    this.pool.give(columnBuffers(res.returned));
    if (this.pending !== mine) return false;
    this.pending = null;
    this.install(points, res, mine, animate);
    return true;
  }

  resetNormalisation(): void {
    this.norm = null;
    this.normEpoch++;
  }

  private install(points: PointData, res: UploadResult, sent: { pull: number; colorBy: ColorBy; normEpoch: number }, animate: boolean): void {
    const t0 = performance.now();
    const n = points.n;
    const animated = animate && n > 0 && this.positions.length === n * 3;
    if (animated) {
      // The drawn positions are where the points glide from.
      this.start = this.positions;
      res.positions.set(this.start);
      this.anim = { t0, ms: 650 };
    } else {
      this.start = EMPTY;
      this.anim = null;
    }
    this.shown = points;
    if (sent.normEpoch === this.normEpoch) this.norm = res.norm;
    ({ base: this.base, target: this.target, positions: this.positions, values: this.values, flags: this.flags } = res);
    this.counts = res.counts;
    this.hues = res.hues;
    this.markedCount = 0;
    this.ascending = res.ascending;
    // What changed while the worker ran: the pull, the colour mode, or cluster memberships
    // (a liquid step edits the point data in place).
    if (this.stale) {
      this.counts = clusterCounts(points.clusters, n);
      this.hues = assignHues(this.counts, this.hues);
    }
    if (this.stale || sent.pull !== this.pull) pullTargets(this.base, this.flags, points.clusters, n, this.pull, this.target, animated ? null : this.positions);
    if (this.stale || sent.colorBy !== this.colorBy) paintValues(this.colorBy, points, this.hues, this.values);
    this.stale = false;
    // Fresh flags: what time travel hid is shown again unless the Space sets it anew.
    this.timeHiddenN = 0;
    this.timeStates = null;
    this.r.setProps({ positions: this.positions, values: this.values, flags: this.flags, table: tableOf(this.colorBy), ramp: isRamp(this.colorBy) });
    const parts = perf.upload_parts;
    parts.install = performance.now() - t0;
    parts.fill = res.parts.fill;
    parts.pull = res.parts.pull;
    parts.colors = res.parts.colors;
  }

  /// Copies of the columns an upload reads, for transfer to the worker: the ids and clusters,
  /// and only the attribute the colour mode paints by (the others are sent empty).
  private columnsFor(p: PointData): Columns {
    const want = <T extends Int32Array | Uint32Array | Float32Array | Uint8Array>(a: T, wanted: boolean): T =>
      wanted ? this.pool.copy(a) : (a.subarray(0, 0).slice() as T);
    const c = this.colorBy;
    return {
      n: p.n, ids: want(p.ids, true), clusters: want(p.clusters, true),
      times: want(p.times, c === "recency"), access: want(p.access, c === "usage"),
      importance: want(p.importance, c === "importance"), energy: want(p.energy, c === "energy"),
      kinds: want(p.kinds, c === "kind"), states: want(p.states, c === "state"),
    };
  }

  /// Recolours every point for `colorBy`. Returns false when there is nothing installed yet
  /// (an upload in flight then takes the new mode).
  recolor(colorBy: ColorBy): boolean {
    this.colorBy = colorBy;
    const p = this.shown;
    if (this.pending) this.stale = true;
    if (!p || this.values.length !== p.n) return false;
    const t0 = performance.now();
    paintValues(colorBy, colorBy === "state" ? this.statesThen(p) : p, this.hues, this.values);
    this.r.setProps({ table: tableOf(colorBy), ramp: isRamp(colorBy) });
    this.r.invalidate("values");
    perf.recolor_ms = performance.now() - t0;
    return true;
  }

  /// Applies a liquid step's moves and merges to the point data, the counts and the hues.
  moveClusters(moved: { memory_id: number; to: number }[], merged: { from_id: number; into_id: number }[]): void {
    const p = this.shown;
    if (this.pending) this.stale = true;
    if (!p) return;
    this.counts = applyClusterMoves(p, this.counts, moved, merged);
    this.hues = assignHues(this.counts, this.hues);
  }

  /// Moves points to their targets after cluster memberships or the pull changed, animated
  /// over `ms`. Returns false when nothing is installed.
  retarget(ms = 650): boolean {
    const p = this.shown;
    if (this.pending) this.stale = true;
    if (!p || this.base.length !== p.n * 3) return false;
    if (this.start.length !== this.positions.length) this.start = new Float32Array(this.positions.length);
    this.start.set(this.positions);
    this.anim = { t0: performance.now(), ms };
    pullTargets(this.base, this.flags, p.clusters, p.n, this.pull, this.target, null);
    return true;
  }

  /// Advances the animation to time `now`; true while it still runs.
  step(now: number): boolean {
    if (!this.anim) return false;
    const t = Math.min(1, (now - this.anim.t0) / this.anim.ms);
    const e = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
    const a = this.start, b = this.target, out = this.positions;
    for (let i = 0; i < out.length; i++) out[i] = a[i] + (b[i] - a[i]) * e;
    this.r.invalidate("positions");
    if (t >= 1) this.anim = null;
    return this.anim !== null;
  }

  /// Marks the selected points (flag 2) and unmarks the rest. A large selection is matched to
  /// the rows by a merge of the two sorted id lists, a small one by lookups.
  paintSelection(sel: IdSet): void {
    const p = this.shown, f = this.flags;
    if (!p || f.length !== p.n) return;
    // Unmark what the last call marked (a fresh upload's flags carry no marks).
    const old = this.marked;
    for (let k = 0; k < this.markedCount; k++) if (f[old[k]] === 2) f[old[k]] = 1;
    const s = sel.sorted();
    if (this.marked.length < s.length) this.marked = new Uint32Array(s.length);
    const rows = this.marked;
    let m = 0;
    const lassoed = this.lassoed?.ids === sel && this.lassoed.points === p ? this.lassoed.rows : null;
    if (lassoed) {
      // The worker's rows of this very selection: no id matching needed.
      for (let k = 0; k < lassoed.length; k++) { f[lassoed[k]] = 2; rows[m++] = lassoed[k]; }
    } else if (this.ascending && s.length > 64) {
      const ids = p.ids;
      for (let i = 0, k = 0; i < p.n && k < s.length; i++) {
        while (k < s.length && s[k] < ids[i]) k++;
        if (s[k] === ids[i] && f[i] !== 0) { f[i] = 2; rows[m++] = i; }
      }
    } else {
      for (const id of s) {
        const i = p.index.get(id);
        if (i !== undefined && f[i] !== 0) { f[i] = 2; rows[m++] = i; }
      }
    }
    this.markedCount = m;
    this.r.invalidate("flags");
    this.r.setProps({ dim: sel.size > 0 ? 0.55 : 1 });
  }

  /// The ids of the shown points inside a polygon (canvas pixels), found by the worker on a
  /// copy of the drawn positions. Null when the data changed while it ran.
  async lasso(polygon: number[]): Promise<LassoOutcome | null> {
    const p = this.shown;
    if (!p) return null;
    const t0 = performance.now();
    const positions = this.pool.copy(this.positions), flags = this.pool.copy(this.flags);
    const { width, height } = this.r.canvasSize;
    const sent = this.worker().call("lasso", { n: p.n, positions, flags, matrix: this.r.viewProjection(), width, height, polygon },
      { transfer: [positions.buffer, flags.buffer] });
    const post = performance.now() - t0;
    const res = await sent;
    this.pool.give([res.positions.buffer, res.flags.buffer]);
    if (this.shown !== p) return null;
    const ids = new Int32Array(res.rows.length);
    for (let k = 0; k < ids.length; k++) ids[k] = p.ids[res.rows[k]];
    const set = this.ascending ? IdSet.fromSorted(ids) : IdSet.of(ids);
    this.lassoed = { ids: set, rows: res.rows, points: p };
    return { ids: set, post, worker: res.ms };
  }

  /// True while an upload is in flight or the points are still gliding.
  get busy(): boolean {
    return this.pending !== null || this.anim !== null;
  }

  rowOf(id: number): number | undefined {
    return this.shown?.index.get(id);
  }

  /// Where a memory's point is drawn once settled, or null when it is hidden.
  positionOf(id: number): [number, number, number] | null {
    const i = this.rowOf(id);
    if (i === undefined || this.flags[i] === 0) return null;
    return [this.target[i * 3], this.target[i * 3 + 1], this.target[i * 3 + 2]];
  }
}
