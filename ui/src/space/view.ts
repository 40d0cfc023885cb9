// The Space view: every memory a point in 3D, coloured by cluster, kind, recency, usage,
// importance or state; orbit/zoom/pan; hover tooltip; click and lasso selection; the
// retrieval X-ray and the selection's nearest memories drawn as lines. This file wires the
// parts together: the renderer (render/points.ts), the point data and its worker
// (render/cloud.ts), pointer interaction, overlays, legend and tooltip. Frames are drawn on
// demand, never in a loop.

import { api } from "../api";
import type { ColorBy } from "../colors";
import { h } from "../dom";
import { PointCloud } from "../render/cloud";
import { Interaction } from "../render/interaction";
import { Legend } from "../render/legend";
import { LineOverlays } from "../render/overlays";
import { perf, recordLasso, recordSpan, recordUpload } from "../render/perf";
import { PointsRenderer } from "../render/points";
import { Tooltip } from "../render/tooltip";
import { bus, select, state, type LayoutData, type PointData } from "../store";
import { KINDS, STATES } from "../types";
import type { VisibilitySteps } from "../bindings";
import { statesAt } from "../timesteps";
import type { UploadProtocol } from "../workers/protocol";
import { WorkerProxy } from "../workers/proxy";
import { applyClusterMoves, clusterCounts } from "../workers/upload";
import { Nearest, NEAR_K } from "./near";
import { SpaceToolbar, type ProjectionMethod } from "./toolbar";

/// How long the instant must stay put before the points are drawn round again.
const FAST_REST_MS = 150;
/// The least time between two frames that only show changed data (see requestFrame).
const DATA_FRAME_GAP_MS = 48;

export class Space {
  readonly el: HTMLElement;
  private readonly canvas = h("canvas", { class: "gl", "data-testid": "space-canvas" });
  private readonly overlay = h("canvas", { class: "overlay" });
  private readonly toolbar: SpaceToolbar;
  private readonly legend = new Legend();
  private readonly tooltip = new Tooltip((id) => api.get(id).then((d) => d.memory));
  private r: PointsRenderer | null = null;
  private cloud: PointCloud | null = null;
  private overlays: LineOverlays | null = null;
  private interaction: Interaction | null = null;
  private worker: WorkerProxy<UploadProtocol> | null = null;
  private colorBy: ColorBy = "cluster";
  private pull = 0.25;
  private readonly near = new Nearest();
  private frameQueued = false;
  /// The queued frame is due at the next animation frame (not held back by the gap).
  private frameSoon = false;
  private lastFrameAt = -Infinity;
  private firstFrameStart = 0;
  private onMethod: (m: ProjectionMethod) => void = () => {};
  /// The scrubbed instant and the steps it is read from; null: now.
  private time: { steps: VisibilitySteps; at: number } | null = null;
  private restTimer: ReturnType<typeof setTimeout> | null = null;

  constructor() {
    this.toolbar = new SpaceToolbar(this.pull, NEAR_K, {
      method: (m) => this.onMethod(m),
      colorBy: (c) => this.recolor(c),
      pull: (p) => {
        this.pull = p;
        this.retarget(250);
      },
      showNear: (on) => {
        this.near.shown = on;
        void this.loadNear();
      },
      resetView: () => {
        this.interaction?.reset();
        this.requestFrame();
      },
    });
    this.el = h("section", { class: "space" }, this.toolbar.el,
      h("div", { class: "stage" }, this.canvas, this.overlay, this.tooltip.el, this.legend.el));
    new ResizeObserver(() => this.resize()).observe(this.el);
    bus.on("selection", () => {
      this.updateSelection();
      void this.loadNear();
    }, "space");
    bus.on("search", () => this.drawOverlays(), "space");
    bus.on("duplicates", () => this.drawOverlays(), "space");
  }

  setMethodHandler(f: (m: ProjectionMethod) => void): void {
    this.onMethod = f;
  }

  setMethod(m: ProjectionMethod): void {
    this.toolbar.setMethod(m);
  }

  setStatus(text: string): void {
    this.toolbar.setStatus(text);
  }

  private uploadWorker(): WorkerProxy<UploadProtocol> {
    this.worker ??= new WorkerProxy<UploadProtocol>(new Worker(new URL("../workers/upload.worker.ts", import.meta.url), { type: "module" }));
    return this.worker;
  }

  /// Creates the renderer on first use; false (with the reason shown) when WebGL is missing.
  private ensureRenderer(): boolean {
    if (this.r) return true;
    try {
      this.r = new PointsRenderer(this.canvas);
    } catch (e) {
      this.setStatus(`WebGL is unavailable: ${(e as Error).message}`);
      return false;
    }
    this.cloud = new PointCloud(this.r, () => this.uploadWorker());
    this.cloud.colorBy = this.colorBy;
    this.cloud.pull = this.pull;
    this.overlays = new LineOverlays(this.r.scene);
    this.interaction = new Interaction(this.r.camera, this.canvas, this.overlay, {
      onCamera: () => { this.r?.cameraMoved(); this.requestFrame(true); },
      onHover: (x, y) => this.hover(x, y),
      onLeave: () => this.tooltip.hide(),
      onClick: (x, y, additive) => this.clickAt(x, y, additive),
      onLasso: (poly, additive) => void this.selectPolygon(poly, additive),
    });
    this.resize();
    return true;
  }

  private resize(): void {
    const stage = this.canvas.parentElement!;
    const w = stage.clientWidth, hgt = stage.clientHeight;
    if (!w || !hgt) return;
    this.overlay.width = w;
    this.overlay.height = hgt;
    if (!this.r) return;
    this.r.resize(w, hgt);
    this.centreBesideLegend();
    // Resizing cleared the canvas, and resize observers run after this update's animation
    // frames: draw now, or the view shows empty for a frame (as when the X-ray tab takes it).
    this.frame();
  }

  /// Uploads point attributes and (when present) a layout; the layout's buffers go to the
  /// upload worker (the caller must not use them afterwards). Resolves once this upload is
  /// installed, or when a later one superseded it.
  async setData(points: PointData, layout: LayoutData | null, animate: boolean): Promise<void> {
    if (!this.ensureRenderer()) return;
    const cloud = this.cloud!;
    if ((cloud.shown?.n ?? -1) !== points.n) this.firstFrameStart = performance.now();
    let installed: boolean;
    try {
      installed = await cloud.setData(points, layout, animate);
    } catch (e) {
      // A bug, not bad input: say so where the view's status is shown.
      this.setStatus(`the 3D view's upload worker failed: ${(e as Error).message}`);
      return;
    }
    if (!installed) return;
    const t0 = performance.now();
    this.applyTime();
    cloud.paintSelection(state.selection);
    this.huesChanged();
    this.drawLegend();
    this.drawOverlays();
    recordUpload(points.n, performance.now() - t0);
  }

  /// Shows the memories as they were at `at` (null: now), from every memory's visibility
  /// steps (loaded once by the time scrubber): the points of memories that did not exist
  /// then, or were deleted or forgotten, are hidden; colour by state shows the state then.
  /// While the instant keeps changing (a drag), the frames are drawn fast (see
  /// PointsRenderer.setQuality) until it rests for FAST_REST_MS.
  setTime(steps: VisibilitySteps | null, at: number | null): void {
    this.time = steps && at !== null ? { steps, at } : null;
    this.applyTime();
    this.cloud?.paintSelection(state.selection);
    this.drawOverlays();
    this.drawFastUntilRest();
    this.requestFrame(true);
  }

  private drawFastUntilRest(): void {
    if (!this.r) return;
    this.r.setQuality("fast");
    if (this.restTimer !== null) clearTimeout(this.restTimer);
    this.restTimer = setTimeout(() => {
      this.restTimer = null;
      if (this.r?.setQuality("full")) this.requestFrame();
    }, FAST_REST_MS);
  }

  /// How the points are drawn now (for tests).
  get quality(): string {
    return this.r?.quality ?? "full";
  }

  /// Drawing-buffer pixels per CSS pixel now (for tests).
  get pixelRatio(): number {
    return this.r?.pixelRatio ?? 0;
  }

  private applyTime(): void {
    const cloud = this.cloud, p = cloud?.shown;
    if (!cloud || !p) return;
    if (!this.time) {
      cloud.setTime(null);
      return;
    }
    const t0 = performance.now();
    cloud.setTime(statesAt(this.time.steps, p.ids, this.time.at));
    recordSpan("space.time", t0);
  }

  resetNormalisation(): void {
    this.cloud?.resetNormalisation();
  }

  /// Recolours every point (for a new colour mode, or new cluster labels).
  recolor(colorBy: ColorBy = this.colorBy): void {
    this.colorBy = colorBy;
    if (!this.cloud?.recolor(colorBy)) return;
    this.drawLegend();
    this.requestFrame();
  }

  /// A liquid step moved memories between clusters or merged clusters: the points glide to
  /// their new clusters and take their colours.
  moveClusters(moved: { memory_id: number; to: number }[], merged: { from_id: number; into_id: number }[]): void {
    // Point data fetched but not installed yet takes the same edits (its upload, when it
    // lands, recounts from them).
    const fetched = state.points;
    if (fetched && fetched !== this.cloud?.shown) applyClusterMoves(fetched, clusterCounts(fetched.clusters, fetched.n), moved, merged);
    this.cloud?.moveClusters(moved, merged);
    this.huesChanged();
    this.retarget();
    this.recolor();
  }

  /// Moves points to their targets after cluster memberships or the pull changed.
  retarget(ms = 650): void {
    if (!this.cloud) return;
    this.cloud.pull = this.pull;
    if (!this.cloud.retarget(ms)) return;
    this.drawOverlays();
  }

  private huesChanged(): void {
    const hues = this.cloud?.hues;
    if (!hues || (hues.length === state.hues.length && hues.every((v, i) => v === state.hues[i]))) return;
    state.hues = hues;
    bus.emit("hues");
  }

  private drawLegend(): void {
    if (!this.cloud) return;
    this.legend.show(this.colorBy, { counts: this.cloud.counts, hues: this.cloud.hues, labels: state.clusterLabels, groups: state.clusterGroups });
    this.centreBesideLegend();
  }

  /// The legend covers the canvas's right edge: the cloud is centred in the part it leaves
  /// free (none in the X-ray, which hides the legend).
  private centreBesideLegend(): void {
    if (!this.r) return;
    const legend = this.legend.el.offsetWidth, w = this.canvas.parentElement?.clientWidth ?? 0;
    const shift = legend > 0 && w > 2 * legend ? (legend + 10) / 2 : 0;
    this.r.setCentreShift(shift);
    this.requestFrame();
  }

  private updateSelection(): void {
    if (!this.cloud?.shown) return;
    const t0 = performance.now();
    this.cloud.paintSelection(state.selection);
    perf.select_ms = performance.now() - t0;
    this.requestFrame();
  }

  /// Redraws the lines that end at points (X-ray, nearest memories).
  private drawOverlays(): void {
    if (!this.overlays || !this.cloud) return;
    const at = (id: number) => this.cloud!.positionOf(id);
    this.overlays.drawXray(state.search, at);
    const near = this.near.current;
    this.overlays.drawNear(near?.id ?? null, near?.list ?? [], at);
    this.overlays.drawDuplicates(state.duplicates, at);
    this.requestFrame();
  }

  /// How many near-duplicate links are drawn (for tests).
  duplicateLinks(): number {
    return this.overlays?.duplicateLinks() ?? 0;
  }

  /// Fetches the nearest memories of the primary selection (when shown) and draws them.
  private async loadNear(): Promise<void> {
    if (await this.near.load(state.selection.size ? state.primary : null)) this.drawOverlays();
  }

  /// The ids the nearest-memory lines go to (for tests).
  nearDrawn(): number[] {
    return this.overlays?.nearDrawn() ?? [];
  }

  /// Renders one frame synchronously and waits for the GPU (for raster-time measurements).
  renderNow(): void {
    this.r?.render();
    this.r?.finish();
  }

  /// Asks for a frame. `urgent` (the camera moves, a glide goes on): at the next animation
  /// frame. Otherwise (a new selection, search lines, an upload) no sooner than
  /// DATA_FRAME_GAP_MS after the last frame: under software GL a frame is 6–28 ms of the
  /// page's main thread, and one interaction (a search, then a selection and its nearest
  /// memories) asked for three or four of them in as many animation frames.
  requestFrame(urgent = false): void {
    if (!this.r || (this.frameQueued && (!urgent || this.frameSoon))) return;
    this.frameQueued = true;
    const wait = urgent ? 0 : this.lastFrameAt + DATA_FRAME_GAP_MS - performance.now();
    this.frameSoon = wait <= 0;
    const go = () => requestAnimationFrame(() => { if (this.frameQueued) this.frame(); });
    // A frame drawn in the meantime (resize draws at once) makes this one unnecessary.
    if (wait <= 0) go();
    else setTimeout(() => { this.frameSoon = true; go(); }, wait);
  }

  private frame(): void {
    this.frameQueued = false;
    this.frameSoon = false;
    this.lastFrameAt = performance.now();
    if (!this.r || !this.cloud) return;
    const animating = this.cloud.step(performance.now());
    const t0 = performance.now();
    const fresh = this.r.render();
    if (this.firstFrameStart && perf.points > 0) {
      this.r.finish();
      perf.first_frame_ms = performance.now() - this.firstFrameStart;
      // Since the page started loading (the window appears at about the same moment).
      perf.first_frame_at_ms = performance.now();
      this.firstFrameStart = 0;
    }
    perf.render_ms = performance.now() - t0;
    recordSpan("space.frame", t0);
    // The first frame of new point buffers, also on its own (their upload is in it).
    if (fresh) recordSpan("space.frame.new-buffers", t0);
    if (animating) this.requestFrame(true);
  }

  /// The row of the point nearest to (x, y) within `radius` pixels, or -1.
  pick(x: number, y: number, radius = 8): number {
    if (!this.r) return -1;
    const t0 = performance.now();
    const i = this.r.pick(x, y, radius);
    perf.pick_ms = performance.now() - t0;
    return i;
  }

  clickAt(x: number, y: number, additive: boolean): void {
    const p = this.cloud?.shown;
    if (!p) return;
    const i = this.pick(x, y);
    if (i < 0) {
      if (!additive) select([]);
      return;
    }
    const id = p.ids[i];
    select(additive ? state.selection.toggle(id) : [id], id);
  }

  private hover(x: number, y: number): void {
    const p = this.cloud?.shown;
    const i = p ? this.pick(x, y) : -1;
    if (!p || i < 0) {
      this.tooltip.hide();
      return;
    }
    const label = state.clusterLabels.get(p.clusters[i]);
    this.tooltip.show({ id: p.ids[i], meta: `${KINDS[p.kinds[i]]} · ${STATES[p.states[i]]}${label ? ` · ${label}` : ""}` }, x, y);
  }

  /// Selects the points inside polygon `poly` (canvas pixels, x/y pairs; even-odd rule),
  /// added to the selection when `additive`. Membership is found in the upload worker;
  /// resolves with the number selected.
  async selectPolygon(poly: number[], additive: boolean): Promise<number> {
    if (!this.cloud) return 0;
    const t0 = performance.now();
    const out = await this.cloud.lasso(poly);
    if (!out) return 0;
    const t1 = performance.now();
    const ids = additive ? state.selection.union(out.ids) : out.ids;
    select(ids);
    recordLasso(out.post, performance.now() - t1, out.worker, performance.now() - t0);
    return ids.size;
  }

  /// Screen position of a memory's point (for tests and for centring).
  screenOf(id: number): [number, number] | null {
    const i = this.cloud?.rowOf(id);
    return i === undefined || !this.r ? null : this.r.screenOf(i);
  }

  /// The drawn position of a memory's point (for tests).
  /// True while point data is being installed or the points are gliding.
  get busy(): boolean {
    return this.cloud?.busy ?? false;
  }

  positionOf(id: number): [number, number, number] | null {
    return this.cloud?.positionOf(id) ?? null;
  }
}
