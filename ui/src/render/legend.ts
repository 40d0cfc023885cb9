// The 3D view's legend: what the colours mean in the current colour mode. In cluster mode it
// says how many of the largest clusters have their own hue and how many share the grey, and
// lists the coloured ones with their labels and sizes. Labels are memory-derived text: they
// go in as text nodes only.

import { clusterColor, cssColor, KIND_COLORS, OTHER_CLUSTERS, ramp, STATE_COLORS, UNCLUSTERED, type ColorBy, type Rgb } from "../colors";
import { clear, fmtInt, h } from "../dom";
import { KINDS, STATES } from "../types";

export interface ClusterSummary {
  /// Clusters with a hue, largest first: [cluster id, members].
  coloured: [number, number][];
  /// Clusters (with members) drawn grey, and their members together.
  others: number;
  otherMembers: number;
  unclustered: number;
}

/// What the cluster legend shows, from the member counts (indexed by cluster id + 1) and the
/// clusters given hues.
export function summarise(counts: Int32Array, hues: Int32Array): ClusterSummary {
  const coloured: [number, number][] = [];
  for (const id of hues) if (id >= 0 && id + 1 < counts.length && counts[id + 1] > 0) coloured.push([id, counts[id + 1]]);
  coloured.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const hued = new Set(coloured.map(([id]) => id));
  let others = 0, otherMembers = 0;
  for (let c = 1; c < counts.length; c++) {
    if (counts[c] > 0 && !hued.has(c - 1)) {
      others++;
      otherMembers += counts[c];
    }
  }
  return { coloured, others, otherMembers, unclustered: counts[0] ?? 0 };
}

/// The legend's first line, e.g. "12 largest clusters in colour; 48 others grey".
export function headline(s: ClusterSummary): string {
  const k = s.coloured.length;
  if (k === 0) return "no clusters yet (they are computed after the first import, or in the Clusters tab)";
  if (s.others === 0) return k === 1 ? "1 cluster, in colour" : `all ${k} clusters in colour`;
  return `${k} largest clusters in colour; ${s.others} ${s.others === 1 ? "other" : "others"} grey`;
}

export interface LegendData {
  counts: Int32Array;
  hues: Int32Array;
  labels: Map<number, string>;
}

export class Legend {
  readonly el = h("div", { class: "legend", "data-testid": "legend" });

  show(colorBy: ColorBy, d: LegendData): void {
    clear(this.el);
    switch (colorBy) {
      case "cluster":
        this.clusters(d);
        break;
      case "kind":
        KINDS.forEach((k, i) => this.el.append(row(KIND_COLORS[i], k)));
        break;
      case "state":
        STATES.forEach((s, i) => this.el.append(row(STATE_COLORS[i], s)));
        break;
      default: {
        const names: Record<string, [string, string]> = {
          recency: ["oldest", "newest"], usage: ["never used", "most used"], importance: ["0", "1"],
          energy: ["no energy", "most energy (liquid loop)"],
        };
        const [lo, hi] = names[colorBy];
        const stops = [0, 0.5, 1].map((t) => {
          const c = new Float32Array(3);
          ramp(t, c, 0);
          return cssColor(c);
        });
        const bar = h("div", { class: "rampbar" });
        bar.style.background = `linear-gradient(90deg, ${stops.join(", ")})`;
        this.el.append(h("div", { class: "li" }, lo), bar, h("div", { class: "li" }, hi));
      }
    }
  }

  private clusters(d: LegendData): void {
    const s = summarise(d.counts, d.hues);
    this.el.append(h("div", { class: "legend-head muted", "data-testid": "legend-head" }, headline(s)));
    if (s.coloured.length === 0) return;
    for (const [id, n] of s.coloured) {
      this.el.append(row(clusterColor(id, d.hues), `${d.labels.get(id) || `cluster ${id}`} (${fmtInt(n)})`));
    }
    if (s.others > 0) this.el.append(row(OTHER_CLUSTERS, `${s.others} other cluster${s.others === 1 ? "" : "s"} (${fmtInt(s.otherMembers)} memories)`));
    if (s.unclustered > 0) this.el.append(row(UNCLUSTERED, `unclustered (${fmtInt(s.unclustered)})`));
  }
}

function row(rgb: Rgb, label: string): HTMLElement {
  const sw = h("span", { class: "sw" });
  sw.style.background = cssColor(rgb);
  return h("div", { class: "li", title: label }, sw, label);
}
