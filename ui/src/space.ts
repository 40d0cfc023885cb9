// The 3D view: every memory a point (three.js, WebGL2), coloured by cluster, kind, recency,
// usage, importance or state; orbit/zoom/pan; hover tooltip; click and lasso selection; the
// retrieval X-ray overlay (the query point with lines to its hits and near misses).
// Rendering is on demand (a frame only when something changed), and every per-point array
// is allocated once per data upload, never per frame.

import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { api } from "./api";
import { categorical, cssColor, KIND_COLORS, paintByIndex, paintRamp, ramp, STATE_COLORS, table, type ColorBy } from "./colors";
import { h, append, clear, fmtTime } from "./dom";
import { bus, select, state, type LayoutData, type PointData } from "./store";
import type { Memory, SearchResponse } from "./types";
import { KINDS, STATES } from "./types";

export interface Perf {
  upload_ms: number;
  recolor_ms: number;
  select_ms: number;
  pick_ms: number;
  lasso_ms: number;
  first_frame_ms: number;
  first_frame_at_ms: number;
  render_ms: number;
  points: number;
  /// The last upload's stages: array allocation, layout fill, cluster pull, colours, flags.
  upload_parts: { alloc: number; fill: number; pull: number; colors: number; flags: number };
}

/// Timings of what the app controls, readable by the end-to-end tests.
export const perf: Perf = {
  upload_ms: 0, recolor_ms: 0, select_ms: 0, pick_ms: 0, lasso_ms: 0, first_frame_ms: 0, first_frame_at_ms: 0, render_ms: 0, points: 0,
  upload_parts: { alloc: 0, fill: 0, pull: 0, colors: 0, flags: 0 },
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

// Kinds and states index these tables directly (both come from the backend as 0..len-1).
const KIND_TABLE = table(KIND_COLORS);
const STATE_TABLE = table(STATE_COLORS);

/// The largest cluster id among the points (-1: none is clustered).
function maxCluster(p: PointData): number {
  let max = -1;
  const cl = p.clusters;
  for (let i = 0; i < p.n; i++) if (cl[i] > max) max = cl[i];
  return max;
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
  private positions = new Float32Array(0);
  /// The projection's coordinates (normalised); `target` is where points are drawn: the
  /// projection pulled toward the centre of each point's cluster by `pull`.
  private base = new Float32Array(0);
  private target = new Float32Array(0);
  private pull = 0.25;
  private centroids = new Float32Array(0);
  private counts = new Float64Array(0);
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
  private norm: { cx: number; cy: number; cz: number; s: number } | null = null;
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
    const toolbar = h("div", { class: "toolbar" },
      h("div", { class: "segmented" }, ...this.methodButtons),
      h("label", { class: "muted" }, "colour ", colorSel),
      h("label", { class: "muted", title: "Draws each point toward the centre of its cluster, so points move as the liquid loop moves memories between clusters and merges them. 0% is the pure projection." },
        "cluster pull ", pullIn, pullOut),
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
    this.scene.add(this.points, this.xray);
    this.camera.position.set(0, 0, 3.2);
    new ResizeObserver(() => this.resize()).observe(this.el);
    bus.on("selection", () => this.updateSelection());
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
    this.requestFrame();
  }

  private resetView(): void {
    this.camera.position.set(0, 0, 3.2);
    this.camera.up.set(0, 1, 0);
    this.controls?.target.set(0, 0, 0);
    this.controls?.update();
    this.requestFrame();
  }

  /// Uploads point attributes and (when present) a layout; positions of ids missing from
  /// the layout are hidden until placed.
  setData(points: PointData, layout: LayoutData | null, animate: boolean): void {
    if (!this.ensureRenderer()) return;
    const t0 = performance.now();
    const n = points.n;
    const resized = this.positions.length !== n * 3 || !this.geometry.getAttribute("position");
    if (resized) {
      this.positions = new Float32Array(n * 3);
      this.base = new Float32Array(n * 3);
      this.target = new Float32Array(n * 3);
      // `start` (animations) and `screen` (picking) are allocated when first needed.
      this.start = new Float32Array(0);
      this.screen = new Float32Array(0);
      this.colors = new Float32Array(n * 3);
      this.flags = new Float32Array(n);
      this.geometry.dispose();
      this.geometry = new THREE.BufferGeometry();
      this.geometry.setAttribute("position", new THREE.BufferAttribute(this.positions, 3).setUsage(THREE.DynamicDrawUsage));
      this.geometry.setAttribute("color", new THREE.BufferAttribute(this.colors, 3).setUsage(THREE.DynamicDrawUsage));
      this.geometry.setAttribute("flag", new THREE.BufferAttribute(this.flags, 1).setUsage(THREE.DynamicDrawUsage));
      this.points.geometry = this.geometry;
      this.firstFrameStart = t0;
    }
    const parts = perf.upload_parts;
    let t = performance.now();
    parts.alloc = t - t0;
    this.fillTargets(points, layout);
    parts.fill = performance.now() - t;
    t = performance.now();
    const animated = animate && !resized;
    if (animated) this.beginAnimation(650);
    else this.anim = null;
    this.applyPull(points, !animated);
    (this.geometry.getAttribute("position") as THREE.BufferAttribute).needsUpdate = true;
    parts.pull = performance.now() - t;
    t = performance.now();
    this.paintColors(points);
    parts.colors = performance.now() - t;
    t = performance.now();
    this.paintFlags(points, false); // fillTargets left every flag at 0 (hidden) or 1
    parts.flags = performance.now() - t;
    this.screenValid = false;
    perf.upload_ms = performance.now() - t0;
    perf.points = n;
    this.drawXray();
    this.requestFrame();
  }

  private fillTargets(points: PointData, layout: LayoutData | null): void {
    const n = points.n;
    if (!layout || layout.ids.length === 0) {
      this.base.fill(0);
      for (let i = 0; i < n; i++) this.flags[i] = 0;
      return;
    }
    const d = layout.dims;
    const c = layout.coords;
    if (!this.norm) {
      // Normalise once per method: later (aligned) layouts share the frame and do not jump.
      let cx = 0, cy = 0, cz = 0;
      const m = layout.ids.length;
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
      this.norm = { cx, cy, cz, s: 1 / p95 };
    }
    const { cx, cy, cz, s } = this.norm;
    // Both arrays are usually ordered by id and identical: then rows map one to one and no
    // lookup table is needed (it is the costly part at a million points).
    const lids = layout.ids, pids = points.ids, m = lids.length;
    let same = m === n;
    for (let i = 0; same && i < n; i++) same = lids[i] === pids[i];
    // Otherwise both lists are normally ascending (the backend sends them by id): a merge
    // finds each point's layout row in one pass. A Map is the fallback for any other order.
    let ascending = !same;
    for (let i = 1; ascending && i < n; i++) ascending = pids[i - 1] < pids[i];
    for (let j = 1; ascending && j < m; j++) ascending = lids[j - 1] < lids[j];
    let rowOf: Map<number, number> | null = null;
    if (!same && !ascending) {
      rowOf = new Map<number, number>();
      for (let j = 0; j < m; j++) rowOf.set(lids[j], j);
    }
    let cursor = 0;
    for (let i = 0; i < n; i++) {
      let j: number | undefined = i;
      if (rowOf) j = rowOf.get(pids[i]);
      else if (ascending) {
        while (cursor < m && lids[cursor] < pids[i]) cursor++;
        j = cursor < m && lids[cursor] === pids[i] ? cursor : undefined;
      }
      if (j === undefined) {
        this.flags[i] = 0;
        continue;
      }
      this.base[i * 3] = (c[j * d] - cx) * s;
      this.base[i * 3 + 1] = (c[j * d + 1] - cy) * s;
      this.base[i * 3 + 2] = d > 2 ? (c[j * d + 2] - cz) * s : 0;
      this.flags[i] = 1;
    }
  }

  /// Starts moving every point from where it is drawn now to its target.
  private beginAnimation(ms: number): void {
    if (this.start.length !== this.positions.length) this.start = new Float32Array(this.positions.length);
    this.start.set(this.positions);
    this.anim = { t0: performance.now(), ms };
  }

  /// Where each point is drawn: its projected position moved `pull` of the way toward the
  /// mean projected position of its cluster. Unclustered and hidden points stay put. With
  /// `place`, points are drawn there at once (no animation).
  private applyPull(p: PointData, place: boolean): void {
    const n = p.n, base = this.base, out = this.target, cl = p.clusters;
    if (this.pull <= 0) {
      out.set(base);
      if (place) this.positions.set(base);
      return;
    }
    const max = maxCluster(p);
    if (this.centroids.length < (max + 1) * 3) {
      this.centroids = new Float32Array((max + 1) * 3);
      this.counts = new Float64Array(max + 1);
    }
    const cen = this.centroids, cnt = this.counts;
    cen.fill(0);
    cnt.fill(0);
    for (let i = 0; i < n; i++) {
      const c = cl[i];
      if (c < 0 || this.flags[i] === 0) continue;
      cen[c * 3] += base[i * 3]; cen[c * 3 + 1] += base[i * 3 + 1]; cen[c * 3 + 2] += base[i * 3 + 2];
      cnt[c]++;
    }
    for (let c = 0; c <= max; c++) {
      if (cnt[c] > 0) { cen[c * 3] /= cnt[c]; cen[c * 3 + 1] /= cnt[c]; cen[c * 3 + 2] /= cnt[c]; }
    }
    const k = this.pull;
    const pos = this.positions;
    for (let i = 0; i < n; i++) {
      const c = cl[i];
      let x = base[i * 3], y = base[i * 3 + 1], z = base[i * 3 + 2];
      if (c >= 0 && this.flags[i] !== 0 && cnt[c] > 0) {
        x += k * (cen[c * 3] - x); y += k * (cen[c * 3 + 1] - y); z += k * (cen[c * 3 + 2] - z);
      }
      out[i * 3] = x; out[i * 3 + 1] = y; out[i * 3 + 2] = z;
      if (place) { pos[i * 3] = x; pos[i * 3 + 1] = y; pos[i * 3 + 2] = z; }
    }
  }

  /// Moves points to their targets after cluster memberships or the pull changed (a liquid
  /// step moved memories between clusters, or clusters merged), animated over `ms`.
  retarget(ms = 650): void {
    const p = state.points;
    if (!p || !this.renderer || this.base.length !== p.n * 3) return;
    this.beginAnimation(ms);
    this.applyPull(p, false);
    this.screenValid = false;
    this.drawXray();
    this.requestFrame();
  }

  /// The drawn position of a memory's point (for tests).
  positionOf(id: number): [number, number, number] | null {
    const i = state.points?.index.get(id);
    if (i === undefined || this.flags[i] === 0) return null;
    return [this.target[i * 3], this.target[i * 3 + 1], this.target[i * 3 + 2]];
  }

  resetNormalisation(): void {
    this.norm = null;
  }

  /// Recolours every point for the current colour mode.
  recolor(): void {
    const p = state.points;
    if (!p || !this.renderer) return;
    const t0 = performance.now();
    this.paintColors(p);
    perf.recolor_ms = performance.now() - t0;
    this.requestFrame();
  }

  private paintColors(p: PointData): void {
    const out = this.colors;
    const n = p.n;
    switch (this.colorBy) {
      case "cluster": {
        // One palette entry per cluster id, then a table lookup per point.
        const max = Math.max(0, maxCluster(p));
        const pal = new Float32Array((max + 2) * 3);
        for (let c = -1; c <= max; c++) categorical(c, pal, (c + 1) * 3);
        for (let i = 0; i < n; i++) {
          const o = (p.clusters[i] + 1) * 3;
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
        let max = 1;
        for (let i = 0; i < n; i++) if (p.times[i] > max) max = p.times[i];
        const times = p.times;
        paintRamp((i) => times[i], 1 / max, out, n);
        break;
      }
      case "usage": {
        let max = 1;
        for (let i = 0; i < n; i++) if (p.access[i] > max) max = p.access[i];
        const access = p.access;
        paintRamp((i) => Math.log1p(access[i]), 1 / Math.log1p(max), out, n);
        break;
      }
      case "importance": {
        const imp = p.importance;
        paintRamp((i) => imp[i], 1, out, n);
        break;
      }
      case "energy": {
        let max = 1e-6;
        for (let i = 0; i < n; i++) if (p.energy[i] > max) max = p.energy[i];
        const energy = p.energy;
        paintRamp((i) => energy[i], 1 / max, out, n);
        break;
      }
    }
    (this.geometry.getAttribute("color") as THREE.BufferAttribute).needsUpdate = true;
    this.drawLegend(p);
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
        const max = Math.max(0, maxCluster(p));
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
    const p = state.points;
    if (!p || !this.renderer) return;
    const t0 = performance.now();
    this.paintFlags(p);
    this.material.uniforms.uDim.value = state.selection.size > 0 ? 0.55 : 1.0;
    perf.select_ms = performance.now() - t0;
    this.requestFrame();
  }

  /// The X-ray overlay: the query at the similarity-weighted mean of its hits' positions,
  /// solid lines to the top-k, dashed ones to the near misses.
  drawXray(): void {
    for (const c of [...this.xray.children]) {
      this.xray.remove(c);
      const g = (c as THREE.Line).geometry;
      g?.dispose();
    }
    const r: SearchResponse | null = state.search;
    const p = state.points;
    if (!r || !p || !this.renderer) {
      this.requestFrame();
      return;
    }
    const pos = (id: number): [number, number, number] | null => {
      const i = p.index.get(id);
      if (i === undefined || this.flags[i] === 0) return null;
      return [this.target[i * 3], this.target[i * 3 + 1], this.target[i * 3 + 2]];
    };
    let wx = 0, wy = 0, wz = 0, ws = 0;
    for (const hit of r.hits) {
      const q = pos(hit.memory.id);
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
        const q = pos(hit.memory.id);
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
    requestAnimationFrame(() => this.frame());
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
    const p = state.points;
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
    const p = state.points;
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
    const p = state.points;
    if (!l || l.length < 6 || !p) return;
    this.selectPolygon(l, additive);
  }

  /// Selects the points inside polygon `l` (screen pixels, x/y pairs; even-odd rule). The
  /// polygon is scan-converted once into a mask over its bounding box, so each point costs
  /// one lookup however many vertices the lasso has.
  selectPolygon(l: number[], additive: boolean): number {
    const p = state.points;
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
    const p = state.points;
    const i = p?.index.get(id);
    if (i === undefined) return null;
    this.project();
    const x = this.screen[i * 2];
    return x < -1e8 ? null : [x, this.screen[i * 2 + 1]];
  }
}
