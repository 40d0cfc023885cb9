// Lines drawn over the point cloud: the retrieval X-ray (the query at the similarity-weighted
// mean of its hits' positions, solid lines to the top-k, dashed ones to the near misses) and
// the selection's nearest memories (violet, brighter for more similar). Redrawn when a search,
// a selection or the points' targets change, never per frame.

import * as THREE from "three";
import type { SearchResponse, Similar } from "../types";

type Vec3 = [number, number, number];
/// Where a memory's point is drawn, or null when it is not shown.
export type PositionOf = (id: number) => Vec3 | null;

/// Removes every object of a group and frees its GPU geometry and material.
function clearGroup(g: THREE.Group): void {
  for (const c of [...g.children]) {
    g.remove(c);
    const o = c as THREE.Mesh;
    o.geometry?.dispose();
    const m = o.material;
    if (Array.isArray(m)) m.forEach((x) => x.dispose());
    else m?.dispose();
  }
}

function segments(coords: number[], material: THREE.LineBasicMaterial | THREE.LineDashedMaterial): THREE.LineSegments {
  const g = new THREE.BufferGeometry();
  g.setAttribute("position", new THREE.Float32BufferAttribute(coords, 3));
  const seg = new THREE.LineSegments(g, material);
  if (material instanceof THREE.LineDashedMaterial) seg.computeLineDistances();
  return seg;
}

export class LineOverlays {
  private readonly xray = new THREE.Group();
  private readonly near = new THREE.Group();
  private readonly dups = new THREE.Group();
  private nearIds: number[] = [];
  private dupLinks = 0;

  constructor(scene: THREE.Scene) {
    scene.add(this.xray, this.near, this.dups);
  }

  /// Marks each near-duplicate group's members with a pink halo and links them to the
  /// group's first member (near-duplicates often sit on top of each other, where a link
  /// alone is too short to see). Two draw calls for every group.
  drawDuplicates(groups: number[][] | null, positionOf: PositionOf): void {
    clearGroup(this.dups);
    this.dupLinks = 0;
    const arr: number[] = [];
    const halos: number[] = [];
    for (const g of groups ?? []) {
      const a = positionOf(g[0]);
      if (!a) continue;
      halos.push(...a);
      for (const id of g.slice(1)) {
        const b = positionOf(id);
        if (b) {
          arr.push(...a, ...b);
          halos.push(...b);
          this.dupLinks++;
        }
      }
    }
    if (arr.length) this.dups.add(segments(arr, new THREE.LineBasicMaterial({ color: 0xf472b6, transparent: true, opacity: 0.95 })));
    if (halos.length) {
      const geo = new THREE.BufferGeometry();
      geo.setAttribute("position", new THREE.Float32BufferAttribute(halos, 3));
      this.dups.add(new THREE.Points(geo, new THREE.PointsMaterial({
        color: 0xf472b6, size: 13, sizeAttenuation: false, transparent: true, opacity: 0.45, depthTest: false,
      })));
    }
  }

  /// How many duplicate links are drawn (for tests).
  duplicateLinks(): number {
    return this.dupLinks;
  }

  /// Draws the X-ray of a search (nothing for null or when none of its hits is shown).
  drawXray(r: SearchResponse | null, positionOf: PositionOf): void {
    clearGroup(this.xray);
    if (!r) return;
    let wx = 0, wy = 0, wz = 0, ws = 0;
    for (const hit of r.hits) {
      const q = positionOf(hit.memory.id);
      if (!q) continue;
      const w = Math.max(1e-3, hit.signals.semantic) ** 2;
      wx += q[0] * w; wy += q[1] * w; wz += q[2] * w; ws += w;
    }
    if (ws === 0) return;
    const qp: Vec3 = [wx / ws, wy / ws, wz / ws];
    const lines = (hits: typeof r.hits, material: THREE.LineBasicMaterial | THREE.LineDashedMaterial) => {
      const arr: number[] = [];
      for (const hit of hits) {
        const q = positionOf(hit.memory.id);
        if (q) arr.push(...qp, ...q);
      }
      if (arr.length) this.xray.add(segments(arr, material));
      else material.dispose();
    };
    lines(r.hits, new THREE.LineBasicMaterial({ color: 0x5eead4, transparent: true, opacity: 0.9 }));
    lines(r.near_misses, new THREE.LineDashedMaterial({ color: 0xf59e0b, dashSize: 0.03, gapSize: 0.03, transparent: true, opacity: 0.8 }));
    const star = new THREE.BufferGeometry();
    star.setAttribute("position", new THREE.Float32BufferAttribute(qp, 3));
    this.xray.add(new THREE.Points(star, new THREE.PointsMaterial({ color: 0xffffff, size: 14, sizeAttenuation: false })));
  }

  /// Draws lines from memory `from` to its nearest memories, in three bands of similarity
  /// relative to the most similar (one draw call each).
  drawNear(from: number | null, list: Similar[], positionOf: PositionOf): void {
    clearGroup(this.near);
    this.nearIds = [];
    const a = from === null ? null : positionOf(from);
    if (!a) return;
    const top = list[0]?.similarity ?? 0;
    const bands: number[][] = [[], [], []];
    for (const s of list) {
      const b = positionOf(s.id);
      if (!b) continue;
      const rel = top > 0 ? s.similarity / top : 0;
      bands[rel > 0.9 ? 0 : rel > 0.75 ? 1 : 2].push(...a, ...b);
      this.nearIds.push(s.id);
    }
    bands.forEach((arr, i) => {
      if (arr.length) this.near.add(segments(arr, new THREE.LineBasicMaterial({ color: 0xa78bfa, transparent: true, opacity: [0.95, 0.7, 0.45][i] })));
    });
  }

  /// The ids the nearest-memory lines go to.
  nearDrawn(): number[] {
    return this.nearIds;
  }

  destroy(): void {
    clearGroup(this.xray);
    clearGroup(this.near);
    clearGroup(this.dups);
    this.xray.removeFromParent();
    this.near.removeFromParent();
    this.dups.removeFromParent();
  }
}
