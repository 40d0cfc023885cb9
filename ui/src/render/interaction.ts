// Pointer interaction with the 3D view: orbit/zoom/pan (three.js OrbitControls), hover,
// click (Ctrl/Cmd adds), and Shift-drag to draw a lasso on the 2D overlay canvas. What a
// hover, click or lasso means is the host's business.

import type * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

export interface InteractionHost {
  /// The camera moved (orbit, zoom, pan).
  onCamera(): void;
  onHover(x: number, y: number): void;
  onLeave(): void;
  onClick(x: number, y: number, additive: boolean): void;
  /// A finished lasso: polygon vertices as x/y pairs in canvas pixels.
  onLasso(polygon: number[], additive: boolean): void;
}

export class Interaction {
  readonly controls: OrbitControls;
  private lasso: number[] | null = null;
  private down: { x: number; y: number } | null = null;
  private readonly abort = new AbortController();

  constructor(camera: THREE.Camera, private readonly canvas: HTMLCanvasElement, private readonly overlay: HTMLCanvasElement,
    private readonly host: InteractionHost) {
    this.controls = new OrbitControls(camera, canvas);
    this.controls.enableDamping = false;
    this.controls.addEventListener("change", () => host.onCamera());
    const on = <K extends keyof HTMLElementEventMap>(type: K, f: (e: HTMLElementEventMap[K]) => void) =>
      canvas.addEventListener(type, f, { signal: this.abort.signal });
    on("pointerdown", (e) => this.pointerDown(e));
    on("pointermove", (e) => this.pointerMove(e));
    on("pointerup", (e) => this.pointerUp(e));
    on("pointerleave", () => host.onLeave());
  }

  /// Puts the camera back where it started.
  reset(): void {
    const cam = this.controls.object;
    cam.position.set(0, 0, 3.2);
    cam.up.set(0, 1, 0);
    this.controls.target.set(0, 0, 0);
    this.controls.update();
  }

  destroy(): void {
    this.abort.abort();
    this.controls.dispose();
  }

  private at(e: PointerEvent): { x: number; y: number } {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  private pointerDown(e: PointerEvent): void {
    this.down = this.at(e);
    if (!e.shiftKey) return;
    this.lasso = [this.down.x, this.down.y];
    this.controls.enabled = false;
    this.canvas.setPointerCapture(e.pointerId);
  }

  private pointerMove(e: PointerEvent): void {
    const { x, y } = this.at(e);
    if (this.lasso) {
      this.lasso.push(x, y);
      this.drawLasso();
    } else if (!e.buttons) this.host.onHover(x, y);
  }

  private pointerUp(e: PointerEvent): void {
    const { x, y } = this.at(e);
    const additive = e.ctrlKey || e.metaKey;
    if (this.lasso) {
      const poly = this.lasso;
      this.lasso = null;
      this.controls.enabled = true;
      this.overlay.getContext("2d")?.clearRect(0, 0, this.overlay.width, this.overlay.height);
      if (poly.length >= 6) this.host.onLasso(poly, additive);
      return;
    }
    const d = this.down;
    this.down = null;
    if (d && Math.abs(d.x - x) + Math.abs(d.y - y) < 4) this.host.onClick(x, y, additive);
  }

  private drawLasso(): void {
    const ctx = this.overlay.getContext("2d");
    const l = this.lasso;
    if (!ctx || !l) return;
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    ctx.strokeStyle = "#a78bfa";
    ctx.fillStyle = "rgba(167,139,250,0.12)";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(l[0], l[1]);
    for (let i = 2; i < l.length; i += 2) ctx.lineTo(l[i], l[i + 1]);
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
  }
}
