// Bubble graph: the link neighbourhood of the selection (bubbles, facts, summaries and
// schemas as nodes; similar / derived / causal / co-access links as weighted edges), laid
// out by a force simulation in a Web Worker and drawn on a 2D canvas on demand. The view
// fits the graph to the visible canvas while the layout settles (centred on the selection)
// until the user pans or zooms; the Fit button fits it again.

import { api } from "../api";
import { KIND_COLORS, cssColor } from "../colors";
import { h, clear, toast } from "../dom";
import { IdSet } from "../idset";
import { timed } from "../render/perf";
import { bus, select, state } from "../store";
import type { LinkKind, Neighbourhood } from "../types";
import { KINDS } from "../types";
import type { GraphProtocol } from "../workers/protocol";
import { WorkerProxy } from "../workers/proxy";
import { EDGE_COLORS, paintGraph, radius } from "./paint";
import { fitTransform, zoomAbout, type Rect, type ViewTransform } from "./fit";

/// Pixels kept free around a fitted graph (the largest bubble and some air).
const FIT_PAD = 30;

export class Graph {
  readonly el: HTMLElement;
  private readonly canvas = h("canvas", { class: "graph-canvas", "data-testid": "graph-canvas" });
  private readonly info = h("div", { class: "muted", "data-testid": "graph-info" });
  private readonly legend: HTMLElement;
  private readonly depthSel: HTMLSelectElement;
  private worker: WorkerProxy<GraphProtocol> | null = null;
  private data: Neighbourhood = { nodes: [], edges: [], truncated: false };
  private pos = new Float32Array(0);
  private index = new Map<number, number>();
  private view: ViewTransform = { k: 1, ox: 0, oy: 0 };
  /// Fit the view on every layout step until the user pans or zooms.
  private autoFit = true;
  private layoutToken = 0;
  private layoutSettled = false;
  private queued = false;
  private active = false;
  private dirty = true;
  private hover = -1;

  constructor() {
    this.depthSel = h("select", { "aria-label": "depth", "data-testid": "graph-depth", onchange: () => void this.load() },
      h("option", { value: "1" }, "1 hop"), h("option", { value: "2" }, "2 hops"), h("option", { value: "3" }, "3 hops"));
    this.depthSel.value = "2";
    this.legend = h("div", { class: "legend static" },
      ...KINDS.map((k, i) => {
        const s = h("span", { class: "sw round" });
        s.style.background = cssColor(KIND_COLORS[i]);
        return h("div", { class: "li" }, s, k);
      }),
      ...(Object.keys(EDGE_COLORS) as LinkKind[]).map((k) => {
        const s = h("span", { class: "sw line" });
        s.style.background = EDGE_COLORS[k];
        return h("div", { class: "li" }, s, k.replace("_", " "));
      }));
    const fitBtn = h("button", { title: "fit the graph to the view, centred on the selection", "data-testid": "graph-fit",
      onclick: () => { this.autoFit = true; this.fit(); } }, "Fit");
    this.el = h("section", { class: "graph" },
      h("div", { class: "toolbar" }, h("span", null, "Neighbourhood of the selection"), this.depthSel, fitBtn, this.info),
      h("div", { class: "stage" }, this.canvas, this.legend));
    new ResizeObserver(() => { if (this.autoFit) this.fit(); else this.draw(); }).observe(this.el);
    bus.on("selection", () => {
      this.dirty = true;
      if (this.active) void this.load();
      else this.draw();
    }, "graph");
    bus.on("data", () => {
      this.dirty = true;
      if (this.active) void this.load();
    }, "graph");
    this.bindPointer();
  }

  setActive(on: boolean): void {
    this.active = on;
    if (on && this.dirty) void this.load();
    else if (on) this.draw();
  }

  async load(): Promise<void> {
    this.dirty = false;
    try {
      const nb = await api.neighbourhood(state.selection.take(50), Number(this.depthSel.value), 400);
      this.setGraph(nb);
    } catch (e) {
      toast(`graph: ${(e as Error).message}`, "error");
    }
  }

  private setGraph(nb: Neighbourhood): void {
    const old = new Map<number, [number, number]>();
    this.data.nodes.forEach((n, i) => old.set(n.id, [this.pos[i * 2], this.pos[i * 2 + 1]]));
    this.data = nb;
    const n = nb.nodes.length;
    this.index = new Map(nb.nodes.map((node, i) => [node.id, i]));
    this.pos = new Float32Array(n * 2);
    nb.nodes.forEach((node, i) => {
      const o = old.get(node.id);
      this.pos[i * 2] = o ? o[0] : (Math.random() - 0.5) * 200;
      this.pos[i * 2 + 1] = o ? o[1] : (Math.random() - 0.5) * 200;
    });
    clear(this.info);
    this.info.append(`${n} nodes · ${nb.edges.length} links${nb.truncated ? " (truncated)" : ""}`);
    this.autoFit = true;
    this.hover = -1;
    void this.layout(nb);
    this.fit();
  }

  /// Runs the force layout in the worker; every batch of ticks moves the nodes (and refits).
  private async layout(nb: Neighbourhood): Promise<void> {
    const token = ++this.layoutToken;
    this.layoutSettled = false;
    const req = {
      ids: Int32Array.from(nb.nodes, (n) => n.id), radii: Float32Array.from(nb.nodes, radius), xy: this.pos.slice(),
      src: Int32Array.from(nb.edges, (e) => e.src), dst: Int32Array.from(nb.edges, (e) => e.dst), score: Float32Array.from(nb.edges, (e) => e.score),
    };
    this.worker ??= new WorkerProxy<GraphProtocol>(new Worker(new URL("../workers/graph.worker.ts", import.meta.url), { type: "module" }));
    try {
      const done = await this.worker.call("layout", req, {
        transfer: [req.ids.buffer, req.radii.buffer, req.xy.buffer, req.src.buffer, req.dst.buffer, req.score.buffer],
        onEvent: (t) => {
          if (token !== this.layoutToken || t.xy.length !== this.pos.length) return;
          this.pos = t.xy;
          if (this.autoFit) this.fit();
          else this.draw();
        },
      });
      if (token === this.layoutToken && !done.superseded) this.layoutSettled = true;
    } catch (e) {
      toast(`graph layout: ${(e as Error).message}`, "error");
    }
  }

  /// The part of the canvas not covered by the legend (canvas pixels).
  visibleRect(): Rect {
    const w = this.canvas.clientWidth, hh = this.canvas.clientHeight;
    const c = this.canvas.getBoundingClientRect(), l = this.legend.getBoundingClientRect();
    // The legend sits in the top-right corner: keep the graph left of it.
    const right = l.width > 0 && l.left < c.right ? Math.max(w / 2, l.left - c.left - 8) : w;
    return { x: 0, y: 0, w: right, h: hh };
  }

  /// Fits every node into the visible rect, centred on the selected nodes when any is shown.
  fit(): void {
    const rect = this.visibleRect();
    if (rect.w <= 0 || rect.h <= 0) return; // hidden: fitted when shown (the resize observer)
    const n = this.data.nodes.length;
    let sx = 0, sy = 0, m = 0;
    this.data.nodes.forEach((node, i) => {
      if (!state.selection.has(node.id)) return;
      sx += this.pos[i * 2];
      sy += this.pos[i * 2 + 1];
      m++;
    });
    this.view = fitTransform(this.pos, n, rect, FIT_PAD, m > 0 ? [sx / m, sy / m] : null);
    this.draw();
  }

  private draw(): void {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      timed("graph.paint", () => this.paint());
    });
  }

  private paint(): void {
    const c = this.canvas;
    const w = c.parentElement!.clientWidth, hh = c.parentElement!.clientHeight;
    if (!w || !hh) return;
    if (c.width !== w || c.height !== hh) {
      c.width = w;
      c.height = hh;
    }
    paintGraph(c.getContext("2d")!, w, hh, { data: this.data, index: this.index, pos: this.pos, view: this.view, hover: this.hover });
  }

  private nodeAt(px: number, py: number): number {
    const { k, ox, oy } = this.view;
    let best = -1, bd = 14 * 14;
    for (let i = 0; i < this.data.nodes.length; i++) {
      const dx = ox + this.pos[i * 2] * k - px, dy = oy + this.pos[i * 2 + 1] * k - py;
      const d = dx * dx + dy * dy;
      if (d < bd) {
        bd = d;
        best = i;
      }
    }
    return best;
  }

  private bindPointer(): void {
    const at = (e: MouseEvent): [number, number] => {
      const r = this.canvas.getBoundingClientRect();
      return [e.clientX - r.left, e.clientY - r.top];
    };
    let drag: { x: number; y: number; ox: number; oy: number; moved: boolean } | null = null;
    this.canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, ox: this.view.ox, oy: this.view.oy, moved: false };
    });
    this.canvas.addEventListener("pointermove", (e) => {
      if (drag && e.buttons) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          this.autoFit = false;
          this.view = { ...this.view, ox: drag.ox + dx, oy: drag.oy + dy };
          this.draw();
        }
        return;
      }
      const i = this.nodeAt(...at(e));
      if (i !== this.hover) {
        this.hover = i;
        this.draw();
      }
    });
    this.canvas.addEventListener("pointerup", (e) => {
      if (drag && !drag.moved) {
        const i = this.nodeAt(...at(e));
        if (i >= 0) {
          const id = this.data.nodes[i].id;
          select(e.shiftKey ? state.selection.union(IdSet.of([id])) : [id], id);
        }
      }
      drag = null;
    });
    this.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.autoFit = false;
      const [x, y] = at(e);
      this.view = zoomAbout(this.view, Math.exp(-e.deltaY * 0.001), x, y);
      this.draw();
    }, { passive: false });
  }

  /// Ids of the nodes currently shown (for tests).
  nodeIds(): number[] {
    return this.data.nodes.map((n) => n.id);
  }

  /// Counts the graphs laid out so far (for tests).
  generation(): number {
    return this.layoutToken;
  }

  /// Whether the layout of the current graph has cooled (for tests).
  settled(): boolean {
    return this.layoutSettled;
  }

  /// Every node's screen position (canvas pixels) under the current view (for tests).
  screenPositions(): [number, number][] {
    const { k, ox, oy } = this.view;
    return this.data.nodes.map((_, i) => [ox + this.pos[i * 2] * k, oy + this.pos[i * 2 + 1] * k]);
  }
}
