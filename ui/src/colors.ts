// Colour tables for the 3D view, the graph and the cluster panel. The 3D view draws each
// point's colour from a 256-entry table on the GPU: a point carries one number, a row of the
// table (clusters, kinds, states) or a position along the ramp (recency, usage, importance,
// energy), so recolouring rewrites one float per point instead of three.

export type ColorBy = "cluster" | "energy" | "kind" | "recency" | "usage" | "importance" | "state";
export type Rgb = [number, number, number];

function hex(s: string): Rgb {
  return [0, 2, 4].map((i) => parseInt(s.slice(1 + i, 3 + i), 16) / 255) as Rgb;
}

/// Ten hues for the largest clusters, chosen to stay apart for people with colour-vision
/// deficiencies: drawn from the Okabe-Ito palette and Paul Tol's "light" scheme, every pair
/// at least 12 apart in CIELAB for normal vision and 9 for simulated protanopia, deuteranopia
/// and tritanopia (Machado et al. 2009), all light enough to read on the dark background
/// and far from the greys; checked in colors.test.ts.
export const CLUSTER_HUES: Rgb[] = [
  "#77aadd", "#e69f00", "#44bb99", "#ffaabb", "#f0e442",
  "#d55e00", "#99ddff", "#999933", "#009e73", "#ee8866",
].map(hex);
/// Every other cluster shares one muted colour; unclustered memories a darker one.
export const OTHER_CLUSTERS: Rgb = hex("#5c6270");
export const UNCLUSTERED: Rgb = hex("#3a3e48");
/// Rows of the cluster table after the hues.
export const ROW_OTHER = CLUSTER_HUES.length;
export const ROW_UNCLUSTERED = ROW_OTHER + 1;

export const KIND_COLORS: Rgb[] = [
  [0.40, 0.62, 1.00], // episode
  [1.00, 0.74, 0.30], // fact
  [0.45, 0.90, 0.55], // summary
  [0.95, 0.45, 0.85], // schema
];

export const STATE_COLORS: Rgb[] = [
  [0.45, 0.85, 0.60], // active
  [0.95, 0.80, 0.35], // warm
  [0.45, 0.65, 0.95], // cold
  [0.55, 0.55, 0.62], // archived
  [0.90, 0.35, 0.35], // forgotten
];

// A perceptually ordered ramp (approximating viridis) sampled at 6 stops.
const RAMP: Rgb[] = [
  [0.27, 0.00, 0.33], [0.23, 0.32, 0.55], [0.13, 0.57, 0.55],
  [0.37, 0.79, 0.38], [0.85, 0.89, 0.10], [0.99, 0.91, 0.15],
];

export function ramp(t: number, out: Float32Array, o: number): void {
  const x = Math.max(0, Math.min(1, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  const a = RAMP[i], b = RAMP[i + 1];
  out[o] = a[0] + (b[0] - a[0]) * f;
  out[o + 1] = a[1] + (b[1] - a[1]) * f;
  out[o + 2] = a[2] + (b[2] - a[2]) * f;
}

/// Entries of every colour table (the GPU texture's width).
export const TABLE_SIZE = 256;

/// Whether a colour mode places points along the ramp (true) or on table rows (false).
export function isRamp(colorBy: ColorBy): boolean {
  return colorBy !== "cluster" && colorBy !== "kind" && colorBy !== "state";
}

/// The colour table of a mode: TABLE_SIZE rgb triples. Ramp modes get the ramp sampled at
/// every entry; the others their categories' colours from row 0 (the rest stays black).
export function colorTable(colorBy: ColorBy): Float32Array {
  const t = new Float32Array(TABLE_SIZE * 3);
  if (isRamp(colorBy)) {
    for (let i = 0; i < TABLE_SIZE; i++) ramp(i / (TABLE_SIZE - 1), t, i * 3);
    return t;
  }
  const rows = colorBy === "kind" ? KIND_COLORS : colorBy === "state" ? STATE_COLORS : [...CLUSTER_HUES, OTHER_CLUSTERS, UNCLUSTERED];
  rows.forEach((c, i) => t.set(c, i * 3));
  return t;
}

/// Which clusters get the hues: the `slots` largest by `counts` (indexed by cluster id + 1;
/// entry 0 counts the unclustered). A cluster that had a hue in `prev` (cluster id per hue,
/// -1 for a free hue) and is still among the largest keeps it, so a liquid step that
/// reorders sizes does not repaint the view; newcomers take the free hues in order. Ties
/// in size go to the smaller id.
export function assignHues(counts: Int32Array, prev: Int32Array | null, slots = CLUSTER_HUES.length): Int32Array {
  const ids: number[] = [];
  for (let c = 1; c < counts.length; c++) if (counts[c] > 0) ids.push(c - 1);
  ids.sort((a, b) => counts[b + 1] - counts[a + 1] || a - b);
  const chosen = new Set(ids.slice(0, slots));
  const out = new Int32Array(slots).fill(-1);
  if (prev) prev.forEach((id, s) => { if (s < slots && chosen.has(id)) { out[s] = id; chosen.delete(id); } });
  let s = 0;
  for (const id of ids.slice(0, slots)) {
    if (!chosen.has(id)) continue;
    while (out[s] !== -1) s++;
    out[s] = id;
  }
  return out;
}

/// The table row of every cluster id (indexed by id + 1): its hue's row if it has one,
/// else ROW_OTHER; ROW_UNCLUSTERED at index 0.
export function clusterRows(hues: Int32Array, maxCluster: number): Uint8Array {
  const rows = new Uint8Array(Math.max(0, maxCluster) + 2).fill(ROW_OTHER);
  rows[0] = ROW_UNCLUSTERED;
  hues.forEach((id, s) => { if (id >= 0 && id + 1 < rows.length) rows[id + 1] = s; });
  return rows;
}

/// The colour a cluster is drawn in, given the hue assignment (for swatches).
export function clusterColor(id: number, hues: Int32Array): Rgb {
  if (id < 0) return UNCLUSTERED;
  const s = hues.indexOf(id);
  return s >= 0 ? CLUSTER_HUES[s] : OTHER_CLUSTERS;
}

export function cssColor(rgb: ArrayLike<number>, o = 0): string {
  const c = (x: number) => Math.round(Math.max(0, Math.min(1, x)) * 255);
  return `rgb(${c(rgb[o])}, ${c(rgb[o + 1])}, ${c(rgb[o + 2])})`;
}
