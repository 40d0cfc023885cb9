// Force-directed layout of the bubble graph (d3-force), off the main thread. A layout call
// sends node positions as an event after every batch of ticks until the simulation cools;
// a newer call stops the one before it.

import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, forceX, forceY, type SimulationNodeDatum } from "d3-force";
import type { GraphProtocol, GraphTick } from "./protocol";
import { serve, type CallContext, type Port } from "./proxy";

interface Node extends SimulationNodeDatum {
  r: number;
}

interface Edge {
  source: Node;
  target: Node;
  score: number;
}

const BATCH = 5, MAX_TICKS = 400, COOL = 0.02;
let stopCurrent: (() => void) | null = null;

serve<GraphProtocol>(self as unknown as Port, {
  layout: (req, ctx: CallContext<GraphTick>) => {
    stopCurrent?.();
    const n = req.ids.length;
    const nodes: Node[] = Array.from({ length: n }, (_, i) => ({ r: req.radii[i], x: req.xy[i * 2], y: req.xy[i * 2 + 1] }));
    const row = new Map<number, number>();
    req.ids.forEach((id, i) => row.set(id, i));
    const links: Edge[] = [];
    for (let e = 0; e < req.src.length; e++) {
      const a = row.get(req.src[e]), b = row.get(req.dst[e]);
      if (a !== undefined && b !== undefined) links.push({ source: nodes[a], target: nodes[b], score: req.score[e] });
    }
    const sim = forceSimulation<Node>(nodes)
      .force("link", forceLink<Node, Edge>(links).distance((l) => 40 + 80 * (1 - l.score)).strength((l) => 0.2 + 0.8 * l.score))
      // Repulsion reaches a few link lengths only, and a weak pull to the centre keeps the
      // parts of a neighbourhood that no link joins (a search's hits often are) near each
      // other instead of flung apart until fitting them shrinks every part to a dot.
      .force("charge", forceManyBody().strength(-90).distanceMax(400))
      .force("x", forceX(0).strength(0.05))
      .force("y", forceY(0).strength(0.05))
      .force("center", forceCenter(0, 0))
      .force("collide", forceCollide<Node>().radius((d) => d.r + 2))
      .stop();
    return new Promise((resolve) => {
      let ticks = 0, timer = 0;
      stopCurrent = () => {
        clearTimeout(timer);
        resolve({ ticks, superseded: true });
      };
      const step = () => {
        sim.tick(BATCH);
        ticks += BATCH;
        const xy = new Float32Array(n * 2);
        nodes.forEach((d, i) => {
          xy[i * 2] = d.x ?? 0;
          xy[i * 2 + 1] = d.y ?? 0;
        });
        ctx.emit({ xy, ticks }, [xy.buffer]);
        if (sim.alpha() >= COOL && ticks < MAX_TICKS) timer = setTimeout(step, 16) as unknown as number;
        else {
          stopCurrent = null;
          resolve({ ticks, superseded: false });
        }
      };
      step();
    });
  },
});
