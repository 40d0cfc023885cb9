// The 3D view's legend: what the colours mean in the current colour mode. In cluster mode it
// says how many of the largest clusters have their own hue and how many smaller ones share
// the grey, and lists the coloured ones with their labels and sizes; when the engine grouped
// the clusters (more than 20), the list is by group: each group's label, its coloured
// clusters, and how many of its smaller clusters are grey. Labels are memory-derived text:
// they go in as text nodes only.

import { clusterColor, cssColor, KIND_COLORS, OTHER_CLUSTERS, ramp, STATE_COLORS, UNCLUSTERED, type ColorBy, type Rgb } from "../colors";
import { clear, fmtInt, h } from "../dom";
import type { ClusterGroup } from "../types";
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

/// The legend's first line, e.g. "10 largest clusters in colour; 48 smaller clusters in grey".
export function headline(s: ClusterSummary): string {
  const k = s.coloured.length;
  if (k === 0) return "no clusters yet (they are computed after the first import, or in the Clusters tab)";
  if (s.others === 0) return k === 1 ? "1 cluster, in colour" : `all ${k} clusters in colour`;
  return `${k} largest clusters in colour; ${s.others} smaller ${s.others === 1 ? "cluster" : "clusters"} in grey`;
}

/// One group of clusters in the legend: its coloured clusters (largest first) and how many
/// of its clusters, with how many memories, are grey.
export interface GroupSection {
  group: ClusterGroup | null;
  coloured: [number, number][];
  grey: number;
  greyMembers: number;
  members: number;
}

/// The legend's sections by group (groups in the engine's order, largest first; clusters
/// without a group last), or null when the clusters are not grouped.
export function groupSections(s: ClusterSummary, counts: Int32Array, groups: Map<number, ClusterGroup>): GroupSection[] | null {
  if (groups.size === 0) return null;
  const sections = new Map<number, GroupSection>();
  const section = (id: number) => {
    const g = groups.get(id) ?? null;
    const key = g ? g.id : -1;
    let sec = sections.get(key);
    if (!sec) sections.set(key, (sec = { group: g, coloured: [], grey: 0, greyMembers: 0, members: 0 }));
    return sec;
  };
  const hued = new Set(s.coloured.map(([id]) => id));
  for (const [id, n] of s.coloured) {
    const sec = section(id);
    sec.coloured.push([id, n]);
    sec.members += n;
  }
  for (let c = 1; c < counts.length; c++) {
    if (counts[c] <= 0 || hued.has(c - 1)) continue;
    const sec = section(c - 1);
    sec.grey++;
    sec.greyMembers += counts[c];
    sec.members += counts[c];
  }
  return [...sections.values()].sort((a, b) => (a.group?.id ?? Infinity) - (b.group?.id ?? Infinity));
}

export interface LegendData {
  counts: Int32Array;
  hues: Int32Array;
  labels: Map<number, string>;
  /// The group of each grouped cluster (empty when the clusters are not grouped).
  groups: Map<number, ClusterGroup>;
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
    const clusterRow = ([id, n]: [number, number]) => row(clusterColor(id, d.hues), `${d.labels.get(id) || `cluster ${id}`} (${fmtInt(n)})`);
    const sections = groupSections(s, d.counts, d.groups);
    if (sections) {
      for (const sec of sections) {
        const name = sec.group ? sec.group.label : "not grouped";
        this.el.append(h("div", { class: "li legend-group", "data-testid": "legend-group", title: name }, `${name} (${fmtInt(sec.members)})`));
        for (const c of sec.coloured) this.el.append(indent(clusterRow(c)));
        if (sec.grey > 0) {
          this.el.append(indent(row(OTHER_CLUSTERS, `${sec.grey} smaller in grey (${fmtInt(sec.greyMembers)})`)));
        }
      }
    } else {
      for (const c of s.coloured) this.el.append(clusterRow(c));
      if (s.others > 0) {
        this.el.append(row(OTHER_CLUSTERS, `${s.others} smaller in grey (${fmtInt(s.otherMembers)})`));
      }
    }
    if (s.unclustered > 0) this.el.append(row(UNCLUSTERED, `unclustered (${fmtInt(s.unclustered)})`));
  }
}

function row(rgb: Rgb, label: string): HTMLElement {
  const sw = h("span", { class: "sw" });
  sw.style.background = cssColor(rgb);
  return h("div", { class: "li", title: label }, sw, label);
}

function indent(el: HTMLElement): HTMLElement {
  el.classList.add("indent");
  return el;
}
