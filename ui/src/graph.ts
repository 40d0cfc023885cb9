// Bubble graph: the link neighbourhood of the selection (bubbles, facts, summaries and
// schemas as nodes; similar / derived / causal / co-access links as weighted edges), laid
// out by a force simulation in a Web Worker and drawn on a 2D canvas on demand.

import { api } from "./api";
import { KIND_COLORS, cssColor } from "./colors";
import { h, clear, toast } from "./dom";
import { bus, select, state } from "./store";
import type { GraphNode, Kind, LinkKind, Neighbourhood } from "./types";
import { KINDS } from "./types";


const EDGE_COLORS: Record<LinkKind, string> = {
  similar: "rgba(148,163,184,0.45)", derived_from: "rgba(74,222,128,0.7)", causal: "rgba(248,113,113,0.8)", co_access: "rgba(250,204,21,0.55)",
};

export class Graph {
  readonly el: HTMLElement;
  private canvas: HTMLCanvasElement;
  private info: HTMLElement;
  private worker: Worker | null = null;
  private data: Neighbourhood = { nodes: [], edges: [], truncated: false };
  private pos: Float32Array = new Float32Array(0);
  private index = new Map<number, number>();
  private view = { x: 0, y: 0, k: 1 };
  private queued = false;
  private active = false;
  private depthSel: HTMLSelectElement;
  private dirty = true;
  private hover = -1;

  constructor() {
    this.canvas = h("canvas", { class: "graph-canvas", "data-testid": "graph-canvas" });
    this.info = h("div", { class: "muted", "data-testid": "graph-info" });
    this.depthSel = h("select", { "aria-label": "depth", onchange: () => void this.load() },
      h("option", { value: "1" }, "1 hop"), h("option", { value: "2" }, "2 hops"), h("option", { value: "3" }, "3 hops"));
    this.depthSel.value = "2";
    const legend = h("div", { class: "legend static" },
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
    this.el = h("section", { class: "graph" },
      h("div", { class: "toolbar" }, h("span", null, "Neighbourhood of the selection"), this.depthSel, this.info),
      h("div", { class: "stage" }, this.canvas, legend));
    new ResizeObserver(() => this.draw()).observe(this.el);
    bus.on("selection", () => {
      this.dirty = true;
      if (this.active) void this.load();
      else this.draw();
    });
    bus.on("data", () => {
      this.dirty = true;
      if (this.active) void this.load();
    });
    this.bindPointer();
  }

  setActive(on: boolean): void {
    this.active = on;
    if (on && this.dirty) void this.load();
    else if (on) this.draw();
  }

  async load(): Promise<void> {
    this.dirty = false;
    const seeds = [...state.selection].slice(0, 50);
    try {
      const nb = await api.neighbourhood(seeds, Number(this.depthSel.value), 400);
      this.setGraph(nb);
    } catch (e) {
      toast(`graph: ${(e as Error).message}`, "error");
    }
  }

  private setGraph(nb: Neighbourhood): void {
    const old = new Map<number, [number, number]>();
    this.data.nodes.forEach((n, i) => old.set(n.id, [this.pos[i * 2], this.pos[i * 2 + 1]]));
    this.data = nb;
    this.index = new Map(nb.nodes.map((n, i) => [n.id, i]));
    this.pos = new Float32Array(nb.nodes.length * 2);
    nb.nodes.forEach((n, i) => {
      const o = old.get(n.id);
      this.pos[i * 2] = o ? o[0] : (Math.random() - 0.5) * 200;
      this.pos[i * 2 + 1] = o ? o[1] : (Math.random() - 0.5) * 200;
    });
    clear(this.info);
    this.info.append(`${nb.nodes.length} nodes · ${nb.edges.length} links${nb.truncated ? " (truncated)" : ""}`);
    if (!this.worker) {
      this.worker = new Worker(new URL("./graph.worker.ts", import.meta.url), { type: "module" });
      this.worker.onmessage = (e: MessageEvent<{ positions: Float32Array }>) => {
        if (e.data.positions.length === this.pos.length) this.pos = e.data.positions;
        this.draw();
      };
    }
    this.worker.postMessage({
      nodes: nb.nodes.map((n, i) => ({ id: n.id, r: radius(n), x: this.pos[i * 2], y: this.pos[i * 2 + 1] })),
      edges: nb.edges.map((e) => ({ src: e.src, dst: e.dst, score: e.score })),
    });
    this.draw();
  }

  private draw(): void {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      this.paint();
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
    const ctx = c.getContext("2d")!;
    ctx.fillStyle = "#0b0d12";
    ctx.fillRect(0, 0, w, hh);
    if (!this.data.nodes.length) {
      ctx.fillStyle = "#8b93a7";
      ctx.font = "13px system-ui, sans-serif";
      ctx.fillText("No links around the selection yet.", 20, 30);
      return;
    }
    const { x: vx, y: vy, k } = this.view;
    const tx = (x: number) => w / 2 + (x + vx) * k;
    const ty = (y: number) => hh / 2 + (y + vy) * k;
    ctx.lineCap = "round";
    for (const e of this.data.edges) {
      const a = this.index.get(e.src), b = this.index.get(e.dst);
      if (a === undefined || b === undefined) continue;
      ctx.strokeStyle = EDGE_COLORS[e.kind];
      ctx.lineWidth = 0.5 + 2.5 * e.score;
      ctx.beginPath();
      ctx.moveTo(tx(this.pos[a * 2]), ty(this.pos[a * 2 + 1]));
      ctx.lineTo(tx(this.pos[b * 2]), ty(this.pos[b * 2 + 1]));
      ctx.stroke();
    }
    const kindIdx = (kd: Kind) => KINDS.indexOf(kd);
    this.data.nodes.forEach((n, i) => {
      const x = tx(this.pos[i * 2]), y = ty(this.pos[i * 2 + 1]);
      const r = radius(n) * Math.sqrt(k);
      ctx.beginPath();
      ctx.arc(x, y, r, 0, Math.PI * 2);
      ctx.fillStyle = cssColor(KIND_COLORS[kindIdx(n.kind)]);
      ctx.globalAlpha = n.depth === 0 ? 1 : 0.8;
      ctx.fill();
      ctx.globalAlpha = 1;
      if (state.selection.has(n.id)) {
        ctx.lineWidth = 2.5;
        ctx.strokeStyle = "#ffffff";
        ctx.stroke();
      }
    });
    // Labels (canvas text: never HTML) for seeds and the hovered node.
    ctx.font = "12px system-ui, sans-serif";
    this.data.nodes.forEach((n, i) => {
      if (n.depth !== 0 && i !== this.hover) return;
      const x = tx(this.pos[i * 2]), y = ty(this.pos[i * 2 + 1]);
      const text = `${n.who ? n.who + ": " : ""}${n.label}`.slice(0, 70);
      ctx.fillStyle = "rgba(11,13,18,0.8)";
      const tw = ctx.measureText(text).width;
      ctx.fillRect(x + 10, y - 9, tw + 8, 18);
      ctx.fillStyle = "#e5e7eb";
      ctx.fillText(text, x + 14, y + 4);
    });
  }

  private nodeAt(px: number, py: number): number {
    const w = this.canvas.width, hh = this.canvas.height;
    const { x: vx, y: vy, k } = this.view;
    let best = -1, bd = 14 * 14;
    for (let i = 0; i < this.data.nodes.length; i++) {
      const dx = w / 2 + (this.pos[i * 2] + vx) * k - px;
      const dy = hh / 2 + (this.pos[i * 2 + 1] + vy) * k - py;
      const d = dx * dx + dy * dy;
      if (d < bd) {
        bd = d;
        best = i;
      }
    }
    return best;
  }

  private bindPointer(): void {
    let drag: { x: number; y: number; vx: number; vy: number; moved: boolean } | null = null;
    this.canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false };
    });
    this.canvas.addEventListener("pointermove", (e) => {
      if (drag && e.buttons) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        this.view.x = drag.vx + dx / this.view.k;
        this.view.y = drag.vy + dy / this.view.k;
        this.draw();
        return;
      }
      const r = this.canvas.getBoundingClientRect();
      const i = this.nodeAt(e.clientX - r.left, e.clientY - r.top);
      if (i !== this.hover) {
        this.hover = i;
        this.draw();
      }
    });
    this.canvas.addEventListener("pointerup", (e) => {
      if (drag && !drag.moved) {
        const r = this.canvas.getBoundingClientRect();
        const i = this.nodeAt(e.clientX - r.left, e.clientY - r.top);
        if (i >= 0) {
          const id = this.data.nodes[i].id;
          if (e.shiftKey) {
            const s = new Set(state.selection);
            s.add(id);
            select(s, id);
          } else select([id], id);
        }
      }
      drag = null;
    });
    this.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.view.k = Math.max(0.2, Math.min(5, this.view.k * Math.exp(-e.deltaY * 0.001)));
      this.draw();
    }, { passive: false });
  }

  /// Ids of the nodes currently shown (for tests).
  nodeIds(): number[] {
    return this.data.nodes.map((n) => n.id);
  }
}

function radius(n: GraphNode): number {
  const base = n.kind === "schema" ? 9 : n.kind === "summary" ? 7 : n.kind === "fact" ? 4.5 : 5;
  return base + 4 * n.importance;
}
