// The 3D view: every memory a point (three.js, WebGL2), coloured by cluster, kind, recency,
// usage, importance or state; orbit/zoom/pan; hover tooltip; click and lasso selection; the
// retrieval X-ray overlay (the query point with lines to its hits and near misses).
// Rendering is on demand (a frame only when something changed), and every per-point array
// is allocated once per data upload, never per frame.

import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { api } from "./api";
import { categorical, cssColor, KIND_COLORS, ramp, STATE_COLORS, type ColorBy } from "./colors";
import { h, append, clear, fmtTime } from "./dom";
import { bus, select, state, type LayoutData, type PointData } from "./store";
import type { Memory, SearchResponse, Similar } from "./types";
import { KINDS, STATES } from "./types";
import { columnBuffers, maxCluster, paintColors, pullTargets, type Columns, type Norm, type UploadRequest, type UploadResult } from "./upload";

export interface Perf {
  /// Main-thread time of the last data upload (posting it to the worker and installing the
  /// result); `upload_worker_ms` is the worker's share.
  upload_ms: number;
  upload_worker_ms: number;
  recolor_ms: number;
  select_ms: number;
  pick_ms: number;
  lasso_ms: number;
  first_frame_ms: number;
  first_frame_at_ms: number;
  render_ms: number;
  points: number;
  /// The last upload's stages: posting and installing (main thread); layout fill, cluster
  /// pull and colours (worker).
  upload_parts: { post: number; install: number; fill: number; pull: number; colors: number };
  /// Every upload so far (the first 50): points, main-thread ms, worker ms.
  uploads: { n: number; main_ms: number; worker_ms: number }[];
}

/// Timings of what the app controls, readable by the end-to-end tests.
export const perf: Perf = {
  upload_ms: 0, upload_worker_ms: 0, recolor_ms: 0, select_ms: 0, pick_ms: 0, lasso_ms: 0, first_frame_ms: 0, first_frame_at_ms: 0, render_ms: 0, points: 0,
  upload_parts: { post: 0, install: 0, fill: 0, pull: 0, colors: 0 },
  uploads: [],
};
(globalThis as unknown as { __somnaPerf: Perf }).__somnaPerf = perf;

const VERT = `
attribute vec3 color;
attribute float flag;
uniform float uSize;
uniform float uPixelRatio;
varying vec3 vColor;
varying float vFlag;
void main() {
  vColor = color;
  vFlag = flag;
  vec4 mv = modelViewMatrix * vec4(position, 1.0);
  gl_Position = projectionMatrix * mv;
  float s = flag > 1.5 ? 2.4 : (flag > 0.5 ? 1.0 : 0.0);
  gl_PointSize = uSize * uPixelRatio * s * (2.2 / max(0.2, -mv.z));
}`;

const FRAG = `
varying vec3 vColor;
varying float vFlag;
uniform float uDim;
void main() {
  vec2 c = gl_PointCoord * 2.0 - 1.0;
  float r = dot(c, c);
  if (r > 1.0) discard;
  vec3 col = vColor;
  float a = 0.9;
  if (vFlag > 1.5) {
    if (r > 0.55) col = vec3(1.0);
    a = 1.0;
  } else {
    a *= uDim;
  }
  gl_FragColor = vec4(col * (1.0 - 0.25 * r), a);
}`;

/// Removes every object of an overlay group and frees its GPU geometry and material.
function clearGroup(g: THREE.Group): void {
  for (const c of [...g.children]) {
    g.remove(c);
    const o = c as THREE.Mesh;
    o.geometry?.dispose();
    const m = o.material;
    if (Array.isArray(m)) m.forEach((x) => x.dispose());
    else m?.dispose();
  }
}

/// How many nearest memories of the selection the view draws lines to.
const NEAR_K = 8;

/// Typed-array buffers kept for reuse by the next upload's column copies: the worker hands
/// them back, so re-uploads copy into memory that is already mapped.
class BufferPool {
  private free = new Map<number, ArrayBuffer[]>();

  take(bytes: number): ArrayBuffer {
    return this.free.get(bytes)?.pop() ?? new ArrayBuffer(bytes);
  }

  give(bufs: ArrayBuffer[]): void {
    for (const b of bufs) {
      if (b.byteLength === 0) continue;
      const list = this.free.get(b.byteLength) ?? [];
      // Two uploads can be in flight; more buffers of one size would only hold memory.
      if (list.length < 2) list.push(b);
      this.free.set(b.byteLength, list);
    }
  }
}

/// Copies of the columns an upload reads, for transfer to the worker: the ids and clusters,
/// and only the attribute the colour mode paints by (the others are sent empty).
function uploadColumns(p: PointData, colorBy: ColorBy, pool: BufferPool): Columns {
  const copy = <T extends Int32Array | Uint32Array | Float32Array | Uint8Array>(a: T, wanted: boolean): T => {
    const Ctor = a.constructor as new (b: ArrayBuffer, o: number, n: number) => T;
    if (!wanted) return new Ctor(new ArrayBuffer(0), 0, 0);
    const c = new Ctor(pool.take(a.byteLength), 0, a.length);
    (c as unknown as { set(x: T): void }).set(a);
    return c;
  };
  return {
    n: p.n,
    ids: copy(p.ids, true),
    clusters: copy(p.clusters, true),
    times: copy(p.times, colorBy === "recency"),
    access: copy(p.access, colorBy === "usage"),
    importance: copy(p.importance, colorBy === "importance"),
    energy: copy(p.energy, colorBy === "energy"),
    kinds: copy(p.kinds, colorBy === "kind"),
    states: copy(p.states, colorBy === "state"),
  };
}

export class Space {
  readonly el: HTMLElement;
  private canvas: HTMLCanvasElement;
  private overlay: HTMLCanvasElement;
  private tooltip: HTMLElement;
  private legend: HTMLElement;
  private status: HTMLElement;
  private renderer: THREE.WebGLRenderer | null = null;
  private scene = new THREE.Scene();
  private camera = new THREE.PerspectiveCamera(50, 1, 0.01, 100);
  private controls: OrbitControls | null = null;
  private geometry = new THREE.BufferGeometry();
  private material: THREE.ShaderMaterial;
  private points: THREE.Points;
  private xray = new THREE.Group();
  /// Lines from the selected memory to its nearest memories in embedding space.
  private nearGroup = new THREE.Group();
  private showNear = true;
  private near: { id: number; list: Similar[] } | null = null;
  private nearToken = 0;
  private positions = new Float32Array(0);
  /// The projection's coordinates (normalised); `target` is where points are drawn: the
  /// projection pulled toward the centre of each point's cluster by `pull`.
  private base = new Float32Array(0);
  private target = new Float32Array(0);
  private pull = 0.25;
  private start = new Float32Array(0);
  private colors = new Float32Array(0);
  private flags = new Float32Array(0);
  private screen = new Float32Array(0);
  private mask = new Uint8Array(0);
  private screenValid = false;
  private colorBy: ColorBy = "cluster";
  private frameQueued = false;
  private anim: { t0: number; ms: number } | null = null;
  private hoverId: number | null = null;
  private lasso: number[] | null = null;
  private firstFrameStart = 0;
  private textCache = new Map<number, Memory>();
  private norm: Norm | null = null;
  private worker: Worker | null = null;
  private pool = new BufferPool();
  private uploadSeq = 0;
  /// The upload the worker is computing, and whether the pull, colours or clusters changed
  /// since it was posted.
  private pending: { req: UploadRequest; points: PointData; animate: boolean; normEpoch: number; resolve: () => void } | null = null;
  /// Counts resets of the view's frame: an upload posted before a reset must not bring the
  /// old frame back.
  private normEpoch = 0;
  private stale = false;
  /// The point data of the installed upload: what the drawn arrays are indexed by.
  private shown: PointData | null = null;
  private onMethod: (m: "pca" | "tsne") => void = () => {};
  private methodButtons: HTMLButtonElement[] = [];

  constructor() {
    this.canvas = h("canvas", { class: "gl", "data-testid": "space-canvas" });
    this.overlay = h("canvas", { class: "overlay" });
    this.tooltip = h("div", { class: "tooltip", hidden: true, "data-testid": "tooltip" });
    this.legend = h("div", { class: "legend", "data-testid": "legend" });
    this.status = h("div", { class: "space-status muted", "data-testid": "space-status" });
    const colorSel = h("select", { "aria-label": "colour by", "data-testid": "color-by", onchange: () => {
      this.colorBy = colorSel.value as ColorBy;
      this.recolor();
    } }, ...(["cluster", "energy", "kind", "recency", "usage", "importance", "state"] as ColorBy[])
      .map((c) => h("option", { value: c }, c)));
    this.methodButtons = (["pca", "tsne"] as const).map((m) =>
      h("button", { class: "seg", "data-method": m, "data-testid": `method-${m}`, "aria-pressed": String(m === "pca"),
        onclick: () => this.onMethod(m) }, m === "pca" ? "PCA" : "t-SNE"));
    const pullOut = h("span", { class: "num" }, `${Math.round(this.pull * 100)}%`);
    const pullIn = h("input", { type: "range", min: "0", max: "0.8", step: "0.05", value: String(this.pull),
      "aria-label": "cluster pull", "data-testid": "cluster-pull",
      oninput: () => {
        this.pull = Number(pullIn.value);
        pullOut.textContent = `${Math.round(this.pull * 100)}%`;
        this.retarget(250);
      } });
    const nearIn = h("input", { type: "checkbox", checked: true, "aria-label": "show nearest memories", "data-testid": "show-near",
      onchange: () => {
        this.showNear = nearIn.checked;
        void this.loadNear();
      } });
    const toolbar = h("div", { class: "toolbar" },
      h("div", { class: "segmented" }, ...this.methodButtons),
      h("label", { class: "muted" }, "colour ", colorSel),
      h("label", { class: "muted", title: "Draws each point toward the centre of its cluster, so points move as the liquid loop moves memories between clusters and merges them. 0% is the pure projection." },
        "cluster pull ", pullIn, pullOut),
      h("label", { class: "muted", title: `Violet lines from the selected memory to its ${NEAR_K} nearest memories in embedding space (the vector index), brighter for more similar.` },
        nearIn, " nearest"),
      h("button", { class: "icon", title: "reset view", onclick: () => this.resetView() }, "⟲"),
      this.status);
    this.el = h("section", { class: "space" }, toolbar,
      h("div", { class: "stage" }, this.canvas, this.overlay, this.tooltip, this.legend));
    this.material = new THREE.ShaderMaterial({
      vertexShader: VERT, fragmentShader: FRAG, transparent: true, depthWrite: false,
      uniforms: { uSize: { value: 7.0 }, uPixelRatio: { value: 1 }, uDim: { value: 1.0 } },
    });
    this.points = new THREE.Points(this.geometry, this.material);
    this.points.frustumCulled = false;
    this.scene.add(this.points, this.xray, this.nearGroup);
    this.uploadWorker();
    this.camera.position.set(0, 0, 3.2);
    new ResizeObserver(() => this.resize()).observe(this.el);
    bus.on("selection", () => {
      this.updateSelection();
      void this.loadNear();
    });
    bus.on("search", () => this.drawXray());
    this.bindPointer();
  }

  setMethodHandler(f: (m: "pca" | "tsne") => void): void {
    this.onMethod = f;
  }

  setMethod(m: "pca" | "tsne"): void {
    for (const b of this.methodButtons) b.setAttribute("aria-pressed", String(b.dataset.method === m));
  }

  setStatus(text: string): void {
    this.status.textContent = text;
  }

  private ensureRenderer(): boolean {
    if (this.renderer) return true;
    try {
      this.renderer = new THREE.WebGLRenderer({ canvas: this.canvas, antialias: false, alpha: false, powerPreference: "high-performance" });
    } catch (e) {
      this.setStatus(`WebGL is unavailable: ${(e as Error).message}`);
      return false;
    }
    this.renderer.setClearColor(0x0b0d12, 1);
    this.renderer.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
    this.material.uniforms.uPixelRatio.value = this.renderer.getPixelRatio();
    this.controls = new OrbitControls(this.camera, this.canvas);
    this.controls.enableDamping = false;
    this.controls.addEventListener("change", () => {
      this.screenValid = false;
      this.requestFrame();
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
    if (!this.renderer) return;
    this.renderer.setSize(w, hgt, false);
    this.camera.aspect = w / hgt;
    this.camera.updateProjectionMatrix();
    this.screenValid = false;
    // Resizing cleared the canvas, and resize observers run after this update's animation
    // frames: draw now, or the view shows empty for a frame (as when the X-ray tab takes it).
    this.frame();
  }

  private resetView(): void {
    this.camera.position.set(0, 0, 3.2);
    this.camera.up.set(0, 1, 0);
    this.controls?.target.set(0, 0, 0);
    this.controls?.update();
    this.requestFrame();
  }

  /// Uploads point attributes and (when present) a layout; positions of ids missing from
  /// the layout are hidden until placed. The per-point work runs in the upload worker: the
  /// main thread hands over the layout (its buffers are transferred, so the caller must not
  /// use it afterwards) and copies of the columns the worker reads, and installs the
  /// finished arrays. Resolves once this upload is installed, or when a later one
  /// supersedes it.
  setData(points: PointData, layout: LayoutData | null, animate: boolean): Promise<void> {
    if (!this.ensureRenderer()) return Promise.resolve();
    const t0 = performance.now();
    const seq = ++this.uploadSeq;
    if (this.positions.length !== points.n * 3) this.firstFrameStart = t0;
    const cols = uploadColumns(points, this.colorBy, this.pool);
    const req: UploadRequest = {
      seq,
      points: cols,
      layout: layout ? { dims: layout.dims, ids: layout.ids, coords: layout.coords } : null,
      norm: this.norm,
      pull: this.pull,
      colorBy: this.colorBy,
    };
    const transfer = columnBuffers(cols).filter((b) => b.byteLength > 0);
    if (layout) transfer.push(layout.ids.buffer as ArrayBuffer, layout.coords.buffer as ArrayBuffer);
    this.stale = false;
    this.pending?.resolve();
    return new Promise((resolve) => {
      this.pending = { req, points, animate, normEpoch: this.normEpoch, resolve };
      this.uploadWorker().postMessage(req, [...new Set(transfer)]);
      perf.upload_parts.post = performance.now() - t0;
    });
  }

  private uploadWorker(): Worker {
    if (!this.worker) {
      this.worker = new Worker(new URL("./upload.worker.ts", import.meta.url), { type: "module" });
      this.worker.onmessage = (e: MessageEvent<UploadResult>) => this.install(e.data);
      this.worker.onerror = (e) => {
        // A bug, not bad input: say so where the view's status is shown.
        this.setStatus(`the 3D view's upload worker failed: ${e.message}`);
        this.pending?.resolve();
        this.pending = null;
      };
    }
    return this.worker;
  }

  /// Puts a finished upload on screen (if no later upload was started meanwhile).
  private install(r: UploadResult): void {
    this.pool.give(columnBuffers(r.returned));
    const pend = this.pending;
    if (!pend || r.seq !== pend.req.seq) return;
    this.pending = null;
    const t0 = performance.now();
    const points = pend.points, n = points.n;
    const animated = pend.animate && n > 0 && this.positions.length === n * 3;
    if (animated) {
      // The drawn positions are where the points glide from.
      this.start = this.positions;
      this.anim = { t0: performance.now(), ms: 650 };
      r.positions.set(this.start);
    } else {
      this.anim = null;
      this.start = new Float32Array(0);
    }
    this.shown = points;
    if (pend.normEpoch === this.normEpoch) this.norm = r.norm;
    this.base = r.base;
    this.target = r.target;
    this.positions = r.positions;
    this.colors = r.colors;
    this.flags = r.flags;
    // Picking's screen coordinates are allocated when first needed.
    this.screen = new Float32Array(0);
    this.geometry.dispose();
    this.geometry = new THREE.BufferGeometry();
    this.geometry.setAttribute("position", new THREE.BufferAttribute(this.positions, 3).setUsage(THREE.DynamicDrawUsage));
    this.geometry.setAttribute("color", new THREE.BufferAttribute(this.colors, 3).setUsage(THREE.DynamicDrawUsage));
    this.geometry.setAttribute("flag", new THREE.BufferAttribute(this.flags, 1).setUsage(THREE.DynamicDrawUsage));
    this.points.geometry = this.geometry;
    // What changed while the worker ran: the pull, the colour mode, or cluster memberships
    // (a liquid step edits the point data in place).
    if (this.stale || pend.req.pull !== this.pull) pullTargets(this.base, this.flags, points.clusters, n, this.pull, this.target, animated ? null : this.positions);
    if (this.stale || pend.req.colorBy !== this.colorBy) paintColors(this.colorBy, points, this.colors);
    this.stale = false;
    this.drawLegend(points);
    this.paintFlags(points, false); // the worker left every flag at 0 (hidden) or 1
    this.screenValid = false;
    const parts = perf.upload_parts;
    parts.install = performance.now() - t0;
    parts.fill = r.parts.fill;
    parts.pull = r.parts.pull;
    parts.colors = r.parts.colors;
    perf.upload_ms = parts.post + parts.install;
    perf.upload_worker_ms = r.parts.fill + r.parts.pull + r.parts.colors;
    perf.points = n;
    if (perf.uploads.length < 50) perf.uploads.push({ n, main_ms: perf.upload_ms, worker_ms: perf.upload_worker_ms });
    this.drawOverlays();
    pend.resolve();
  }

  /// Starts moving every point from where it is drawn now to its target.
  private beginAnimation(ms: number): void {
    if (this.start.length !== this.positions.length) this.start = new Float32Array(this.positions.length);
    this.start.set(this.positions);
    this.anim = { t0: performance.now(), ms };
  }

  /// Moves points to their targets after cluster memberships or the pull changed (a liquid
  /// step moved memories between clusters, or clusters merged), animated over `ms`.
  retarget(ms = 650): void {
    const p = this.shown;
    if (this.pending) this.stale = true;
    if (!p || !this.renderer || this.base.length !== p.n * 3) return;
    this.beginAnimation(ms);
    pullTargets(this.base, this.flags, p.clusters, p.n, this.pull, this.target, null);
    this.screenValid = false;
    this.drawOverlays();
  }

  /// The drawn position of a memory's point (for tests).
  positionOf(id: number): [number, number, number] | null {
    const i = this.shown?.index.get(id);
    if (i === undefined || this.flags[i] === 0) return null;
    return [this.target[i * 3], this.target[i * 3 + 1], this.target[i * 3 + 2]];
  }

  resetNormalisation(): void {
    this.norm = null;
    this.normEpoch++;
  }

  /// Recolours every point for the current colour mode.
  recolor(): void {
    const p = this.shown;
    if (this.pending) this.stale = true;
    if (!p || !this.renderer || this.colors.length !== p.n * 3) return;
    const t0 = performance.now();
    paintColors(this.colorBy, p, this.colors);
    (this.geometry.getAttribute("color") as THREE.BufferAttribute).needsUpdate = true;
    this.drawLegend(p);
    perf.recolor_ms = performance.now() - t0;
    this.requestFrame();
  }

  private drawLegend(p: PointData): void {
    clear(this.legend);
    const swatch = (rgb: ArrayLike<number>, label: string) => {
      const s = h("span", { class: "sw" });
      s.style.background = cssColor(rgb);
      return h("div", { class: "li" }, s, label);
    };
    const tmp = new Float32Array(3);
    switch (this.colorBy) {
      case "cluster": {
        const max = Math.max(0, maxCluster(p.clusters, p.n));
        const cnt = new Int32Array(max + 2);
        for (let i = 0; i < p.n; i++) cnt[p.clusters[i] + 1]++;
        const counts: [number, number][] = [];
        cnt.forEach((c, j) => { if (c > 0) counts.push([j - 1, c]); });
        const top = counts.sort((a, b) => b[1] - a[1]).slice(0, 12);
        if (top.length === 1 && top[0][0] === -1) {
          this.legend.append(h("div", { class: "muted" }, "no clusters yet (they are computed after the first import, or in the Clusters tab)"));
          break;
        }
        for (const [id, cnt] of top) {
          categorical(id, tmp, 0);
          const label = id < 0 ? "unclustered" : state.clusterLabels.get(id) ?? `cluster ${id}`;
          this.legend.append(swatch(tmp, `${label} (${cnt})`));
        }
        break;
      }
      case "kind":
        KINDS.forEach((k, i) => this.legend.append(swatch(KIND_COLORS[i], k)));
        break;
      case "state":
        STATES.forEach((s, i) => this.legend.append(swatch(STATE_COLORS[i], s)));
        break;
      default: {
        const names: Record<string, [string, string]> = {
          recency: ["oldest", "newest"], usage: ["never used", "most used"], importance: ["0", "1"],
          energy: ["no energy", "most energy (liquid loop)"],
        };
        const [lo, hi] = names[this.colorBy];
        const bar = h("div", { class: "rampbar" });
        ramp(0, tmp, 0);
        const a = cssColor(tmp);
        ramp(0.5, tmp, 0);
        const b = cssColor(tmp);
        ramp(1, tmp, 0);
        bar.style.background = `linear-gradient(90deg, ${a}, ${b}, ${cssColor(tmp)})`;
        this.legend.append(h("div", { class: "li" }, lo), bar, h("div", { class: "li" }, hi));
      }
    }
  }

  private paintFlags(p: PointData, reset = true): void {
    // Visible points to 1, then the selected ones to 2: O(n) without a set lookup per point.
    const f = this.flags;
    if (reset) for (let i = 0; i < p.n; i++) if (f[i] !== 0) f[i] = 1;
    for (const id of state.selection) {
      const i = p.index.get(id);
      if (i !== undefined && f[i] !== 0) f[i] = 2;
    }
    (this.geometry.getAttribute("flag") as THREE.BufferAttribute).needsUpdate = true;
  }

  private updateSelection(): void {
    const p = this.shown;
    if (!p || !this.renderer) return;
    const t0 = performance.now();
    this.paintFlags(p);
    this.material.uniforms.uDim.value = state.selection.size > 0 ? 0.55 : 1.0;
    perf.select_ms = performance.now() - t0;
    this.requestFrame();
  }

  /// Redraws the lines that end at points (X-ray, nearest memories) after points moved.
  private drawOverlays(): void {
    this.drawXray();
    this.drawNear();
  }

  /// Fetches the nearest memories of the primary selection (when shown) and draws them.
  private async loadNear(): Promise<void> {
    const token = ++this.nearToken;
    const id = state.primary;
    if (!this.showNear || id === null || state.selection.size === 0) {
      this.near = null;
      this.drawNear();
      return;
    }
    if (this.near?.id === id) return this.drawNear();
    try {
      const list = await api.similar(id, NEAR_K);
      if (token !== this.nearToken) return;
      this.near = { id, list };
    } catch {
      // A memory deleted meanwhile has no neighbours to show.
      if (token !== this.nearToken) return;
      this.near = null;
    }
    this.drawNear();
  }

  /// Draws the lines to the nearest memories (opacity by similarity) at the points' targets.
  private drawNear(): void {
    clearGroup(this.nearGroup);
    const from = this.near ? this.positionOf(this.near.id) : null;
    if (this.near && from) {
      // Three bands of similarity, each one draw call.
      const top = this.near.list[0]?.similarity ?? 0;
      const bands: number[][] = [[], [], []];
      for (const s of this.near.list) {
        const to = this.positionOf(s.id);
        if (!to) continue;
        const rel = top > 0 ? s.similarity / top : 0;
        bands[rel > 0.9 ? 0 : rel > 0.75 ? 1 : 2].push(...from, ...to);
      }
      bands.forEach((arr, b) => {
        if (!arr.length) return;
        const g = new THREE.BufferGeometry();
        g.setAttribute("position", new THREE.Float32BufferAttribute(arr, 3));
        const mat = new THREE.LineBasicMaterial({ color: 0xa78bfa, transparent: true, opacity: [0.95, 0.7, 0.45][b] });
        this.nearGroup.add(new THREE.LineSegments(g, mat));
      });
    }
    this.requestFrame();
  }

  /// The ids the nearest-memory lines go to (for tests).
  nearDrawn(): number[] {
    if (!this.near || this.nearGroup.children.length === 0) return [];
    return this.near.list.map((s) => s.id).filter((id) => this.positionOf(id) !== null);
  }

  /// The X-ray overlay: the query at the similarity-weighted mean of its hits' positions,
  /// solid lines to the top-k, dashed ones to the near misses.
  drawXray(): void {
    clearGroup(this.xray);
    const r: SearchResponse | null = state.search;
    if (!r || !this.shown || !this.renderer) {
      this.requestFrame();
      return;
    }
    let wx = 0, wy = 0, wz = 0, ws = 0;
    for (const hit of r.hits) {
      const q = this.positionOf(hit.memory.id);
      if (!q) continue;
      const w = Math.max(1e-3, hit.signals.semantic) ** 2;
      wx += q[0] * w; wy += q[1] * w; wz += q[2] * w; ws += w;
    }
    if (ws === 0) {
      this.requestFrame();
      return;
    }
    const qp = new THREE.Vector3(wx / ws, wy / ws, wz / ws);
    const lines = (hits: typeof r.hits, color: number, dashed: boolean) => {
      const arr: number[] = [];
      for (const hit of hits) {
        const q = this.positionOf(hit.memory.id);
        if (q) arr.push(qp.x, qp.y, qp.z, q[0], q[1], q[2]);
      }
      if (!arr.length) return;
      const g = new THREE.BufferGeometry();
      g.setAttribute("position", new THREE.Float32BufferAttribute(arr, 3));
      const mat = dashed
        ? new THREE.LineDashedMaterial({ color, dashSize: 0.03, gapSize: 0.03, transparent: true, opacity: 0.8 })
        : new THREE.LineBasicMaterial({ color, transparent: true, opacity: 0.9 });
      const seg = new THREE.LineSegments(g, mat);
      if (dashed) seg.computeLineDistances();
      this.xray.add(seg);
    };
    lines(r.hits, 0x5eead4, false);
    lines(r.near_misses, 0xf59e0b, true);
    const star = new THREE.BufferGeometry();
    star.setAttribute("position", new THREE.Float32BufferAttribute([qp.x, qp.y, qp.z], 3));
    this.xray.add(new THREE.Points(star, new THREE.PointsMaterial({ color: 0xffffff, size: 14, sizeAttenuation: false })));
    this.requestFrame();
  }

  /// Renders one frame synchronously and waits for the GPU (for raster-time measurements).
  renderNow(): void {
    if (!this.renderer) return;
    this.renderer.render(this.scene, this.camera);
    this.renderer.getContext().finish();
  }

  requestFrame(): void {
    if (this.frameQueued || !this.renderer) return;
    this.frameQueued = true;
    // A frame drawn in the meantime (resize draws at once) makes this one unnecessary.
    requestAnimationFrame(() => { if (this.frameQueued) this.frame(); });
  }

  private frame(): void {
    this.frameQueued = false;
    if (!this.renderer) return;
    if (this.anim) {
      const t = Math.min(1, (performance.now() - this.anim.t0) / this.anim.ms);
      const e = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
      const a = this.start, b = this.target, out = this.positions;
      for (let i = 0; i < out.length; i++) out[i] = a[i] + (b[i] - a[i]) * e;
      (this.geometry.getAttribute("position") as THREE.BufferAttribute).needsUpdate = true;
      this.screenValid = false;
      if (t >= 1) this.anim = null;
    }
    const t0 = performance.now();
    this.renderer.render(this.scene, this.camera);
    const gl = this.renderer.getContext();
    if (this.firstFrameStart && perf.points > 0) {
      gl.finish();
      perf.first_frame_ms = performance.now() - this.firstFrameStart;
      // Since the page started loading (the window appears at about the same moment).
      perf.first_frame_at_ms = performance.now();
      this.firstFrameStart = 0;
    }
    perf.render_ms = performance.now() - t0;
    if (this.anim) this.requestFrame();
  }

  /// Screen coordinates of every point (recomputed only after the camera or data changed).
  private project(): void {
    if (this.screenValid) return;
    const m = new THREE.Matrix4().multiplyMatrices(this.camera.projectionMatrix, this.camera.matrixWorldInverse);
    const e = m.elements;
    const w = this.overlay.width, hh = this.overlay.height;
    if (this.screen.length !== (this.positions.length / 3) * 2) this.screen = new Float32Array((this.positions.length / 3) * 2);
    const pos = this.positions, out = this.screen;
    const n = pos.length / 3;
    for (let i = 0; i < n; i++) {
      const x = pos[i * 3], y = pos[i * 3 + 1], z = pos[i * 3 + 2];
      const cw = e[3] * x + e[7] * y + e[11] * z + e[15];
      if (cw <= 0 || this.flags[i] === 0) {
        out[i * 2] = -1e9;
        out[i * 2 + 1] = -1e9;
        continue;
      }
      out[i * 2] = ((e[0] * x + e[4] * y + e[8] * z + e[12]) / cw * 0.5 + 0.5) * w;
      out[i * 2 + 1] = (1 - ((e[1] * x + e[5] * y + e[9] * z + e[13]) / cw * 0.5 + 0.5)) * hh;
    }
    this.screenValid = true;
  }

  /// The point nearest to (x, y) within `radius` pixels, or -1.
  pick(x: number, y: number, radius = 8): number {
    const t0 = performance.now();
    this.project();
    const s = this.screen;
    let best = -1, bd = radius * radius;
    for (let i = 0; i < s.length / 2; i++) {
      const dx = s[i * 2] - x, dy = s[i * 2 + 1] - y;
      const d = dx * dx + dy * dy;
      if (d < bd) {
        bd = d;
        best = i;
      }
    }
    perf.pick_ms = performance.now() - t0;
    return best;
  }

  private bindPointer(): void {
    const stage = () => this.canvas.getBoundingClientRect();
    let down: { x: number; y: number } | null = null;
    this.canvas.addEventListener("pointerdown", (e) => {
      const r = stage();
      down = { x: e.clientX - r.left, y: e.clientY - r.top };
      if (e.shiftKey) {
        this.lasso = [down.x, down.y];
        if (this.controls) this.controls.enabled = false;
        this.canvas.setPointerCapture(e.pointerId);
      }
    });
    this.canvas.addEventListener("pointermove", (e) => {
      const r = stage();
      const x = e.clientX - r.left, y = e.clientY - r.top;
      if (this.lasso) {
        this.lasso.push(x, y);
        this.drawLasso();
        return;
      }
      if (e.buttons) return;
      this.hover(x, y);
    });
    this.canvas.addEventListener("pointerup", (e) => {
      const r = stage();
      const x = e.clientX - r.left, y = e.clientY - r.top;
      if (this.lasso) {
        this.finishLasso(e.ctrlKey || e.metaKey);
        if (this.controls) this.controls.enabled = true;
        return;
      }
      if (down && Math.abs(down.x - x) + Math.abs(down.y - y) < 4) this.clickAt(x, y, e.ctrlKey || e.metaKey);
      down = null;
    });
    this.canvas.addEventListener("pointerleave", () => {
      this.tooltip.hidden = true;
      this.hoverId = null;
    });
  }

  clickAt(x: number, y: number, additive: boolean): void {
    const p = this.shown;
    if (!p) return;
    const i = this.pick(x, y);
    if (i < 0) {
      if (!additive) select([]);
      return;
    }
    const id = p.ids[i];
    if (additive) {
      const s = new Set(state.selection);
      if (s.has(id)) s.delete(id);
      else s.add(id);
      select(s, id);
    } else select([id], id);
  }

  private hover(x: number, y: number): void {
    const p = this.shown;
    if (!p) return;
    const i = this.pick(x, y);
    if (i < 0) {
      this.tooltip.hidden = true;
      this.hoverId = null;
      return;
    }
    const id = p.ids[i];
    this.tooltip.style.transform = `translate(${Math.round(x + 14)}px, ${Math.round(y + 10)}px)`;
    if (this.hoverId === id) return;
    this.hoverId = id;
    const label = state.clusterLabels.get(p.clusters[i]);
    const fill = (m: Memory | null) => {
      if (this.hoverId !== id) return;
      clear(this.tooltip);
      append(this.tooltip,
        h("div", { class: "meta" }, h("b", null, `#${id}`), ` ${KINDS[p.kinds[i]]} · ${STATES[p.states[i]]}`,
          label ? ` · ${label}` : ""),
        m ? h("div", { class: "meta muted" }, `${m.who ?? "—"} · ${fmtTime(m.occurred_at ?? m.created_at)}`) : null,
        h("div", { class: "text" }, m ? m.text.slice(0, 280) : "…"));
      this.tooltip.hidden = false;
    };
    const cached = this.textCache.get(id);
    fill(cached ?? null);
    if (!cached) {
      void api.get(id).then((d) => {
        if (this.textCache.size > 2000) this.textCache.clear();
        this.textCache.set(id, d.memory);
        fill(d.memory);
      }).catch(() => {});
    }
  }

  private drawLasso(): void {
    const ctx = this.overlay.getContext("2d");
    if (!ctx || !this.lasso) return;
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    ctx.strokeStyle = "#a78bfa";
    ctx.fillStyle = "rgba(167,139,250,0.12)";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    const l = this.lasso;
    ctx.moveTo(l[0], l[1]);
    for (let i = 2; i < l.length; i += 2) ctx.lineTo(l[i], l[i + 1]);
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
  }

  /// Selects every point inside the drawn polygon (even-odd rule).
  private finishLasso(additive: boolean): void {
    const l = this.lasso;
    this.lasso = null;
    this.overlay.getContext("2d")?.clearRect(0, 0, this.overlay.width, this.overlay.height);
    const p = this.shown;
    if (!l || l.length < 6 || !p) return;
    this.selectPolygon(l, additive);
  }

  /// Selects the points inside polygon `l` (screen pixels, x/y pairs; even-odd rule). The
  /// polygon is scan-converted once into a mask over its bounding box, so each point costs
  /// one lookup however many vertices the lasso has.
  selectPolygon(l: number[], additive: boolean): number {
    const p = this.shown;
    if (!p) return 0;
    const t0 = performance.now();
    this.project();
    const m = l.length / 2;
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (let i = 0; i < l.length; i += 2) {
      minX = Math.min(minX, l[i]); maxX = Math.max(maxX, l[i]);
      minY = Math.min(minY, l[i + 1]); maxY = Math.max(maxY, l[i + 1]);
    }
    // Only what is on the canvas can be lassoed.
    const x0 = Math.max(0, Math.floor(minX)), y0 = Math.max(0, Math.floor(minY));
    const x1 = Math.min(this.overlay.width, Math.ceil(maxX)), y1 = Math.min(this.overlay.height, Math.ceil(maxY));
    const w = x1 - x0, hh = y1 - y0;
    const chosen = additive ? new Set(state.selection) : new Set<number>();
    if (m >= 3 && w > 0 && hh > 0) {
      if (this.mask.length < w * hh) this.mask = new Uint8Array(w * hh);
      const mask = this.mask;
      mask.fill(0, 0, w * hh);
      const xs: number[] = [];
      for (let r = 0; r < hh; r++) {
        const y = y0 + r + 0.5;
        xs.length = 0;
        for (let a = 0, b = m - 1; a < m; b = a++) {
          const ya = l[a * 2 + 1], yb = l[b * 2 + 1];
          if ((ya > y) !== (yb > y)) xs.push(l[a * 2] + ((y - ya) * (l[b * 2] - l[a * 2])) / (yb - ya));
        }
        xs.sort((u, v) => u - v);
        for (let k = 0; k + 1 < xs.length; k += 2) {
          // Pixel columns whose centre lies inside [xs[k], xs[k+1]).
          const c0 = Math.max(0, Math.ceil(xs[k] - x0 - 0.5));
          const c1 = Math.min(w - 1, Math.ceil(xs[k + 1] - x0 - 0.5) - 1);
          if (c1 >= c0) mask.fill(1, r * w + c0, r * w + c1 + 1);
        }
      }
      const sc = this.screen;
      for (let i = 0; i < p.n; i++) {
        const x = sc[i * 2] - x0, y = sc[i * 2 + 1] - y0;
        if (x < 0 || x >= w || y < 0 || y >= hh) continue;
        if (mask[(y | 0) * w + (x | 0)]) chosen.add(p.ids[i]);
      }
    }
    perf.lasso_ms = performance.now() - t0;
    select(chosen);
    return chosen.size;
  }

  /// Screen position of a memory's point (for tests and for centring).
  screenOf(id: number): [number, number] | null {
    const p = this.shown;
    const i = p?.index.get(id);
    if (i === undefined) return null;
    this.project();
    const x = this.screen[i * 2];
    return x < -1e8 ? null : [x, this.screen[i * 2 + 1]];
  }
}
