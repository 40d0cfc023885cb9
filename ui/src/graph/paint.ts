// Drawing the bubble graph on a 2D canvas: edges coloured by link kind and weighted by
// score, nodes coloured by kind and sized by importance, the selection ringed, and labels
// for the seeds and the hovered node. Labels are canvas text, never HTML.

import { KIND_COLORS, cssColor } from "../colors";
import { state } from "../store";
import type { GraphNode, LinkKind, Neighbourhood } from "../types";
import { KINDS } from "../types";
import type { ViewTransform } from "./fit";

export const EDGE_COLORS: Record<LinkKind, string> = {
  similar: "rgba(148,163,184,0.45)", derived_from: "rgba(74,222,128,0.7)", causal: "rgba(248,113,113,0.8)", co_access: "rgba(250,204,21,0.55)",
};

/// A node's radius in layout units.
export function radius(n: GraphNode): number {
  const base = n.kind === "schema" ? 9 : n.kind === "summary" ? 7 : n.kind === "fact" ? 4.5 : 5;
  return base + 4 * n.importance;
}

export interface GraphScene {
  data: Neighbourhood;
  index: Map<number, number>;
  /// Node positions (x/y pairs, in the order of `data.nodes`).
  pos: Float32Array;
  view: ViewTransform;
  /// The hovered node's row, or -1.
  hover: number;
}

export function paintGraph(ctx: CanvasRenderingContext2D, w: number, hh: number, g: GraphScene): void {
  ctx.fillStyle = "#0b0d12";
  ctx.fillRect(0, 0, w, hh);
  if (!g.data.nodes.length) {
    ctx.fillStyle = "#8b93a7";
    ctx.font = "13px system-ui, sans-serif";
    ctx.fillText("No links around the selection yet.", 20, 30);
    return;
  }
  const { k, ox, oy } = g.view, pos = g.pos;
  ctx.lineCap = "round";
  for (const e of g.data.edges) {
    const a = g.index.get(e.src), b = g.index.get(e.dst);
    if (a === undefined || b === undefined) continue;
    ctx.strokeStyle = EDGE_COLORS[e.kind];
    ctx.lineWidth = 0.5 + 2.5 * e.score;
    ctx.beginPath();
    ctx.moveTo(ox + pos[a * 2] * k, oy + pos[a * 2 + 1] * k);
    ctx.lineTo(ox + pos[b * 2] * k, oy + pos[b * 2 + 1] * k);
    ctx.stroke();
  }
  // Bubbles grow with the zoom, more slowly than distances do.
  const zr = Math.min(1.6, Math.max(0.5, Math.sqrt(k)));
  g.data.nodes.forEach((node, i) => {
    ctx.beginPath();
    ctx.arc(ox + pos[i * 2] * k, oy + pos[i * 2 + 1] * k, radius(node) * zr, 0, Math.PI * 2);
    ctx.fillStyle = cssColor(KIND_COLORS[KINDS.indexOf(node.kind)]);
    ctx.globalAlpha = node.depth === 0 ? 1 : 0.8;
    ctx.fill();
    ctx.globalAlpha = 1;
    if (state.selection.has(node.id)) {
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = "#ffffff";
      ctx.stroke();
    }
  });
  // Labels for the hovered node first, then the seeds: right of the node, moved left as far
  // as needed to stay on the canvas; a label that would cover one already drawn is left out
  // (hovering shows it).
  ctx.font = "12px system-ui, sans-serif";
  const order = g.data.nodes.map((_, i) => i).filter((i) => i === g.hover || g.data.nodes[i].depth === 0);
  order.sort((a, b) => Number(b === g.hover) - Number(a === g.hover));
  const drawn: LabelBox[] = [];
  for (const i of order) {
    const node = g.data.nodes[i];
    const x = ox + pos[i * 2] * k, y = oy + pos[i * 2 + 1] * k;
    const text = labelText(node, i === g.hover ? 90 : 40);
    const tw = ctx.measureText(text).width;
    const box = { left: Math.max(2, Math.min(x + 10, w - tw - 10)), top: y - 9, w: tw + 8, h: 18 };
    if (i !== g.hover && drawn.some((d) => overlaps(d, box))) continue;
    drawn.push(box);
    ctx.fillStyle = "rgba(11,13,18,0.85)";
    ctx.fillRect(box.left, box.top, box.w, box.h);
    ctx.fillStyle = "#e5e7eb";
    ctx.fillText(text, box.left + 4, y + 4);
  }
}

export interface LabelBox {
  left: number;
  top: number;
  w: number;
  h: number;
}

export function overlaps(a: LabelBox, b: LabelBox): boolean {
  return a.left < b.left + b.w && b.left < a.left + a.w && a.top < b.top + b.h && b.top < a.top + a.h;
}

/// A node's label: who, then its text, cut at a word to at most `max` characters with "…".
export function labelText(node: Pick<GraphNode, "who" | "label">, max: number): string {
  const full = `${node.who ? node.who + ": " : ""}${node.label}`;
  if (full.length <= max) return full;
  const cut = full.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return (space > max / 2 ? cut.slice(0, space) : cut) + "…";
}
