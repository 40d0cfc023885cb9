// The 3D view's point-cloud renderer (three.js, WebGL2), shaped like embedding-atlas's
// renderer interface: `setProps` takes columnar typed arrays and says whether a frame is
// needed, `render` draws one, `pick` finds the point under the pointer, `destroy` frees the
// GPU resources. Each point's colour is read on the GPU from a 256-entry table by the one
// value the point carries (colors.ts), so a recolour uploads n floats, not 3n. Nothing is
// allocated per frame; screen positions for picking are recomputed only after the camera
// or the positions changed.

import * as THREE from "three";
import { TABLE_SIZE } from "../colors";
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
attribute float value;
attribute float flag;
uniform sampler2D uTable;
uniform float uRamp;
uniform float uSize;
uniform float uPixelRatio;
varying vec3 vColor;
varying float vFlag;
void main() {
  float row = uRamp > 0.5 ? floor(clamp(value, 0.0, 1.0) * 255.0 + 0.5) : value;
  vColor = texture2D(uTable, vec2((row + 0.5) / 256.0, 0.5)).rgb;
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

type Column = "positions" | "values" | "flags";
const ATTR: Record<Column, [string, number]> = { positions: ["position", 3], values: ["value", 1], flags: ["flag", 1] };

export class PointsRenderer {
  readonly camera = new THREE.PerspectiveCamera(50, 1, 0.01, 100);
  /// Overlays add their own objects here.
  readonly scene = new THREE.Scene();
  private readonly gl: THREE.WebGLRenderer;
  private geometry = new THREE.BufferGeometry();
  private readonly material: THREE.ShaderMaterial;
  private readonly texture: THREE.DataTexture;
  private readonly points: THREE.Points;
  private props: PointProps = { positions: new Float32Array(0), values: new Float32Array(0), flags: new Float32Array(0), table: new Float32Array(TABLE_SIZE * 3), ramp: false, dim: 1 };
  private width = 1;
  private height = 1;
  private screen = new Float32Array(0);
  private screenValid = false;
  private readonly vp = new THREE.Matrix4();

  /// Throws when WebGL is unavailable.
  constructor(canvas: HTMLCanvasElement) {
    this.gl = new THREE.WebGLRenderer({ canvas, antialias: false, alpha: false, powerPreference: "high-performance" });
    this.gl.setClearColor(0x0b0d12, 1);
    this.gl.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
    this.texture = new THREE.DataTexture(new Uint8Array(TABLE_SIZE * 4), TABLE_SIZE, 1, THREE.RGBAFormat);
    this.texture.magFilter = this.texture.minFilter = THREE.NearestFilter;
    this.material = new THREE.ShaderMaterial({
      vertexShader: VERT, fragmentShader: FRAG, transparent: true, depthWrite: false,
      uniforms: {
        uSize: { value: 7.0 }, uPixelRatio: { value: this.gl.getPixelRatio() }, uDim: { value: 1.0 },
        uTable: { value: this.texture }, uRamp: { value: 0 },
      },
    });
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
      const g = new THREE.BufferGeometry();
      for (const c of cols) g.setAttribute(ATTR[c][0], new THREE.BufferAttribute(this.props[c], ATTR[c][1]).setUsage(THREE.DynamicDrawUsage));
      this.geometry.dispose();
      this.geometry = g;
      this.points.geometry = g;
      this.screenValid = false;
    }
    if (p.table && p.table !== old.table) this.writeTable(p.table);
    if (p.ramp !== undefined) this.material.uniforms.uRamp.value = p.ramp ? 1 : 0;
    if (p.dim !== undefined) this.material.uniforms.uDim.value = p.dim;
    return changed || p.table !== undefined || p.ramp !== undefined || p.dim !== undefined;
  }

  /// The named column was changed in place: upload it again before the next frame.
  invalidate(col: Column): void {
    const a = this.geometry.getAttribute(ATTR[col][0]) as THREE.BufferAttribute | undefined;
    if (a) a.needsUpdate = true;
    if (col !== "values") this.screenValid = false;
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
    this.camera.updateProjectionMatrix();
    this.screenValid = false;
  }

  render(): void {
    this.gl.render(this.scene, this.camera);
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
    this.texture.dispose();
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

  private writeTable(t: Float32Array): void {
    const d = this.texture.image.data as Uint8Array;
    for (let i = 0; i < TABLE_SIZE; i++) {
      for (let c = 0; c < 3; c++) d[i * 4 + c] = Math.round(Math.max(0, Math.min(1, t[i * 3 + c])) * 255);
      d[i * 4 + 3] = 255;
    }
    this.texture.needsUpdate = true;
  }
}
