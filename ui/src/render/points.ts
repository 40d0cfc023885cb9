// The 3D view's point-cloud renderer (three.js, WebGL2), shaped like embedding-atlas's
// renderer interface: `setProps` takes columnar typed arrays and says whether a frame is
// needed, `render` draws one, `pick` finds the point under the pointer, `destroy` frees the
// GPU resources. Each point carries one colour value, a row of a 256-entry table (colors.ts);
// before a frame the renderer turns the values into four bytes per point (render/columns.ts),
// so a recolour uploads 4n bytes. The draw covers only the rows that can be visible. Nothing
// is allocated per frame; screen positions for picking are recomputed only after the camera
// or the positions changed.

import * as THREE from "three";
import { TABLE_SIZE } from "../colors";
import { packColors, shownRange } from "./columns";
import { nearestPoint, OFF, projectPoints } from "./picking";

export interface PointProps {
  /// x/y/z per point (normalised view frame).
  positions: Float32Array;
  /// Colour value per point: a table row, or a ramp position in [0, 1] when `ramp`.
  values: Float32Array;
  /// 0: hidden, 1: shown, 2: selected.
  flags: Float32Array;
  /// The colour table: TABLE_SIZE rgb triples in [0, 1].
  table: Float32Array;
  ramp: boolean;
  /// Opacity of unselected points (lowered while something is selected).
  dim: number;
}

const VERT = `
attribute vec4 color;
attribute float flag;
uniform float uSize;
uniform float uPixelRatio;
varying vec3 vColor;
varying float vFlag;
void main() {
  vColor = color.rgb;
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

/// While the view changes frame after frame (a time-scrubber drag), points are drawn as
/// plain squares: with WebGL rasterised in software (llvmpipe, no GPU) the round sprite's
/// per-fragment coordinate cost a fifth of a 100K-point frame. Round again once it rests.
const FAST_FRAG = `
varying vec3 vColor;
varying float vFlag;
uniform float uDim;
void main() {
  gl_FragColor = vec4(vColor, vFlag > 1.5 ? 1.0 : 0.9 * uDim);
}`;

export type Quality = "full" | "fast";

/// The drawing buffer's scale at "fast" quality against "full".
const FAST_SCALE = 0.5;

type Column = "positions" | "values" | "flags";

export class PointsRenderer {
  readonly camera = new THREE.PerspectiveCamera(50, 1, 0.01, 100);
  /// Overlays add their own objects here.
  readonly scene = new THREE.Scene();
  private readonly gl: THREE.WebGLRenderer;
  private geometry = new THREE.BufferGeometry();
  /// The geometry the last frame drew.
  private drawn: THREE.BufferGeometry | null = null;
  private readonly material: THREE.ShaderMaterial;
  private readonly fastMaterial: THREE.ShaderMaterial;
  private readonly points: THREE.Points;
  /// The colours drawn (rgba bytes per point), derived from values, table and ramp.
  private colors = new Uint8Array(0);
  private colorsDirty = false;
  private rangeDirty = false;
  private props: PointProps = { positions: new Float32Array(0), values: new Float32Array(0), flags: new Float32Array(0), table: new Float32Array(TABLE_SIZE * 3), ramp: false, dim: 1 };
  private width = 1;
  private height = 1;
  /// Pixels the scene is drawn left of the canvas centre (see setCentreShift).
  private shift = 0;
  private screen = new Float32Array(0);
  private screenValid = false;
  private readonly vp = new THREE.Matrix4();
  /// Drawing-buffer pixels per CSS pixel at full quality.
  private readonly fullRatio: number;

  /// Throws when WebGL is unavailable.
  constructor(canvas: HTMLCanvasElement) {
    this.gl = new THREE.WebGLRenderer({ canvas, antialias: false, alpha: false, powerPreference: "high-performance" });
    this.gl.setClearColor(0x0b0d12, 1);
    this.fullRatio = Math.min(2, window.devicePixelRatio || 1);
    this.gl.setPixelRatio(this.fullRatio);
    // One uniforms object for both materials: a change of pixel ratio reaches either.
    const uniforms = { uSize: { value: 7.0 }, uPixelRatio: { value: this.fullRatio }, uDim: { value: 1.0 } };
    const material = (fragmentShader: string) =>
      new THREE.ShaderMaterial({ vertexShader: VERT, fragmentShader, transparent: true, depthWrite: false, uniforms });
    this.material = material(FRAG);
    this.fastMaterial = material(FAST_FRAG);
    this.points = new THREE.Points(this.geometry, this.material);
    this.points.frustumCulled = false;
    this.scene.add(this.points);
    this.camera.position.set(0, 0, 3.2);
  }

  get canvasSize(): { width: number; height: number } {
    return { width: this.width, height: this.height };
  }

  /// Sets what is drawn. New arrays (not the same objects as before) replace the GPU buffers;
  /// returns true when a frame is needed.
  setProps(p: Partial<PointProps>): boolean {
    const old = this.props;
    this.props = { ...old, ...p };
    const cols: Column[] = ["positions", "values", "flags"];
    const changed = cols.some((c) => p[c] !== undefined && p[c] !== old[c]);
    if (changed) {
      // New arrays: a new geometry with a buffer per column; disposing the old one frees
      // its buffers on the GPU.
      const n = this.props.flags.length;
      if (this.colors.length !== n * 4) this.colors = new Uint8Array(n * 4);
      const g = new THREE.BufferGeometry();
      const attr = (a: THREE.BufferAttribute) => a.setUsage(THREE.DynamicDrawUsage);
      g.setAttribute("position", attr(new THREE.BufferAttribute(this.props.positions, 3)));
      g.setAttribute("color", attr(new THREE.BufferAttribute(this.colors, 4, true)));
      g.setAttribute("flag", attr(new THREE.BufferAttribute(this.props.flags, 1)));
      this.geometry.dispose();
      this.geometry = g;
      this.points.geometry = g;
      this.screenValid = false;
      this.colorsDirty = this.rangeDirty = true;
    }
    const recoloured = (p.table !== undefined && p.table !== old.table) || (p.ramp !== undefined && p.ramp !== old.ramp);
    if (recoloured) this.colorsDirty = true;
    if (p.dim !== undefined) this.material.uniforms.uDim.value = p.dim;
    return changed || p.table !== undefined || p.ramp !== undefined || p.dim !== undefined;
  }

  /// The named column was changed in place: upload it again before the next frame.
  invalidate(col: Column): void {
    if (col === "values") {
      this.colorsDirty = true;
      return;
    }
    const a = this.geometry.getAttribute(col === "positions" ? "position" : "flag") as THREE.BufferAttribute | undefined;
    if (a) a.needsUpdate = true;
    this.screenValid = false;
    if (col === "flags") this.rangeDirty = true;
  }

  /// The camera moved: screen positions must be recomputed before the next pick.
  cameraMoved(): void {
    this.screenValid = false;
  }

  resize(width: number, height: number): void {
    this.width = width;
    this.height = height;
    this.gl.setSize(width, height, false);
    this.camera.aspect = width / height;
    this.applyShift();
  }

  /// Draws the scene's centre `px` pixels left of the canvas's centre (a legend covers the
  /// canvas's right edge) with an off-centre view of the same camera, so picking and the
  /// lasso, which read the view-projection matrix, agree with what is drawn.
  setCentreShift(px: number): void {
    const shift = Math.max(0, Math.round(px));
    if (shift === this.shift) return;
    this.shift = shift;
    this.applyShift();
  }

  private applyShift(): void {
    if (this.shift > 0 && this.width > 0 && this.height > 0) {
      this.camera.setViewOffset(this.width, this.height, this.shift, 0, this.width, this.height);
    } else {
      this.camera.clearViewOffset();
    }
    this.camera.updateProjectionMatrix();
    this.screenValid = false;
  }

  /// Plain squares at half the resolution while the view changes frame after frame, round
  /// points at full resolution otherwise; returns true when a frame is needed. Without a
  /// GPU (WebKit under Xvfb: Mesa's llvmpipe) a frame of 100,000 points is rasterised on
  /// the CPU, and a quarter of the pixels is most of the way to keeping each step of a
  /// drag under 100 ms (see README, "Scrubbing at 100K"). The points keep their size on
  /// screen; the picture is softer until the view rests.
  setQuality(q: Quality): boolean {
    const m = q === "fast" ? this.fastMaterial : this.material;
    if (this.points.material === m) return false;
    this.points.material = m;
    const ratio = q === "fast" ? this.fullRatio * FAST_SCALE : this.fullRatio;
    this.gl.setPixelRatio(ratio);
    this.material.uniforms.uPixelRatio.value = ratio;
    if (this.width > 0 && this.height > 0) this.gl.setSize(this.width, this.height, false);
    return true;
  }

  /// Drawing-buffer pixels per CSS pixel now (for tests).
  get pixelRatio(): number {
    return this.gl.getPixelRatio();
  }

  get quality(): Quality {
    return this.points.material === this.fastMaterial ? "fast" : "full";
  }

  /// Draws a frame; true when it was the first of new point buffers (their upload to GL is
  /// part of it).
  render(): boolean {
    const fresh = this.drawn !== this.geometry;
    this.drawn = this.geometry;
    if (this.colorsDirty) {
      packColors(this.props.values, this.props.table, this.props.ramp, this.colors);
      const a = this.geometry.getAttribute("color") as THREE.BufferAttribute | undefined;
      if (a) a.needsUpdate = true;
      this.colorsDirty = false;
    }
    if (this.rangeDirty) {
      const [start, count] = shownRange(this.props.flags);
      this.geometry.setDrawRange(start, count);
      this.rangeDirty = false;
    }
    this.gl.render(this.scene, this.camera);
    return fresh;
  }

  /// Waits until the GPU has drawn everything asked of it (for timings).
  finish(): void {
    this.gl.getContext().finish();
  }

  /// The view-projection matrix (column-major), for projecting points elsewhere.
  viewProjection(): number[] {
    this.camera.updateMatrixWorld();
    return this.vp.multiplyMatrices(this.camera.projectionMatrix, this.camera.matrixWorldInverse).toArray();
  }

  /// The row of the point nearest to (x, y) within `radius` pixels, or -1.
  pick(x: number, y: number, radius = 8): number {
    this.project();
    return nearestPoint(this.screen, this.props.flags.length, x, y, radius);
  }

  /// Screen position of row `i`, or null when it is hidden or behind the camera.
  screenOf(i: number): [number, number] | null {
    this.project();
    const x = this.screen[i * 2];
    return x === OFF || x === undefined ? null : [x, this.screen[i * 2 + 1]];
  }

  destroy(): void {
    this.geometry.dispose();
    this.material.dispose();
    this.fastMaterial.dispose();
    this.gl.dispose();
  }

  private project(): void {
    if (this.screenValid) return;
    const { positions, flags } = this.props;
    const n = flags.length;
    if (this.screen.length !== n * 2) this.screen = new Float32Array(n * 2);
    projectPoints(this.viewProjection(), positions, flags, n, this.width, this.height, this.screen);
    this.screenValid = true;
  }
}
