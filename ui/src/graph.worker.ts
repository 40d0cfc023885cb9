// Force-directed layout of the bubble graph (d3-force), off the main thread. Receives
// nodes and weighted edges, posts node positions as a transferable Float32Array per batch
// of ticks until the simulation cools.

import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, type SimulationNodeDatum } from "d3-force";

interface Node extends SimulationNodeDatum {
  id: number;
  r: number;
}

interface Msg {
  nodes: { id: number; r: number; x?: number; y?: number }[];
  edges: { src: number; dst: number; score: number }[];
}

let sim: ReturnType<typeof forceSimulation<Node>> | null = null;

self.onmessage = (e: MessageEvent<Msg>) => {
  sim?.stop();
  const nodes: Node[] = e.data.nodes.map((n) => ({ id: n.id, r: n.r, x: n.x, y: n.y }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const links = e.data.edges
    .filter((l) => byId.has(l.src) && byId.has(l.dst))
    .map((l) => ({ source: byId.get(l.src)!, target: byId.get(l.dst)!, score: l.score }));
  sim = forceSimulation<Node>(nodes)
    .force("link", forceLink(links).distance((l) => 40 + 80 * (1 - (l as { score: number }).score)).strength((l) => 0.2 + 0.8 * (l as { score: number }).score))
    .force("charge", forceManyBody().strength(-90))
    .force("center", forceCenter(0, 0))
    .force("collide", forceCollide<Node>().radius((n) => n.r + 2))
    .stop();
  let ticks = 0;
  const step = () => {
    if (!sim) return;
    for (let i = 0; i < 5; i++) sim.tick();
    ticks += 5;
    const buf = new Float32Array(nodes.length * 2);
    nodes.forEach((n, i) => {
      buf[i * 2] = n.x ?? 0;
      buf[i * 2 + 1] = n.y ?? 0;
    });
    (self as unknown as Worker).postMessage({ positions: buf, done: sim.alpha() < 0.02 || ticks > 400 }, [buf.buffer]);
    if (sim.alpha() >= 0.02 && ticks <= 400) setTimeout(step, 16);
  };
  step();
};
