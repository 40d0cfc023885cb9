import { describe, expect, it } from "vitest";
import { assignHues, CLUSTER_HUES, clusterColor, clusterRows, colorTable, OTHER_CLUSTERS, ROW_OTHER, ROW_UNCLUSTERED, TABLE_SIZE, UNCLUSTERED, type Rgb } from "./colors";

/// CIELAB (D65) of an sRGB colour, for distances a person perceives.
function lab([r, g, b]: Rgb): [number, number, number] {
  const lin = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const x = (0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047, y = 0.2126 * R + 0.7152 * G + 0.0722 * B, z = (0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883;
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}
const dist = (a: Rgb, b: Rgb) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]));

/// How a colour looks with full protanopia, deuteranopia or tritanopia (Machado, Oliveira
/// and Fernandes 2009, severity 1, applied in linear RGB).
const CVD: Record<string, number[][]> = {
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
};
function simulate(rgb: Rgb, m: number[][]): Rgb {
  const lin = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const gam = (c: number) => (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055);
  const l = rgb.map(lin);
  return m.map((r) => gam(Math.min(1, Math.max(0, r[0] * l[0] + r[1] * l[1] + r[2] * l[2])))) as Rgb;
}

const counts = (sizes: Record<number, number>, unclustered = 0) => {
  const max = Math.max(...Object.keys(sizes).map(Number));
  const c = new Int32Array(max + 2);
  c[0] = unclustered;
  for (const [id, n] of Object.entries(sizes)) c[Number(id) + 1] = n;
  return c;
};

describe("the cluster palette", () => {
  it("has ten hues, every pair well apart, also for colour-blind eyes, and each far from the greys", () => {
    expect(CLUSTER_HUES).toHaveLength(10);
    for (let i = 0; i < CLUSTER_HUES.length; i++) {
      for (let j = i + 1; j < CLUSTER_HUES.length; j++) {
        expect(dist(CLUSTER_HUES[i], CLUSTER_HUES[j])).toBeGreaterThan(12);
        for (const [name, m] of Object.entries(CVD)) {
          const d = dist(simulate(CLUSTER_HUES[i], m), simulate(CLUSTER_HUES[j], m));
          expect(d, `hues ${i} and ${j} with ${name}`).toBeGreaterThan(9);
        }
      }
      expect(dist(CLUSTER_HUES[i], OTHER_CLUSTERS)).toBeGreaterThan(20);
      for (const m of Object.values(CVD)) expect(dist(simulate(CLUSTER_HUES[i], m), simulate(OTHER_CLUSTERS, m))).toBeGreaterThan(15);
      // Readable on the dark background (#0b0d12): lightness well above it.
      expect(lab(CLUSTER_HUES[i])[0]).toBeGreaterThan(50);
    }
    expect(dist(OTHER_CLUSTERS, UNCLUSTERED)).toBeGreaterThan(10);
  });

  it("puts the hues, the grey and the unclustered colour on their table rows", () => {
    const t = colorTable("cluster");
    expect(t).toHaveLength(TABLE_SIZE * 3);
    expect(Array.from(t.subarray(3, 6))).toEqual(Array.from(Float32Array.from(CLUSTER_HUES[1])));
    expect(Array.from(t.subarray(ROW_OTHER * 3, ROW_OTHER * 3 + 3))).toEqual(Array.from(Float32Array.from(OTHER_CLUSTERS)));
    expect(Array.from(t.subarray(ROW_UNCLUSTERED * 3, ROW_UNCLUSTERED * 3 + 3))).toEqual(Array.from(Float32Array.from(UNCLUSTERED)));
  });

  it("samples the ramp from its dark end to its bright end", () => {
    const t = colorTable("recency");
    const first = lab([t[0], t[1], t[2]]), last = lab([t[765], t[766], t[767]]);
    expect(last[0]).toBeGreaterThan(first[0] + 50);
  });
});

describe("assignHues", () => {
  it("gives the hues to the largest clusters, largest first", () => {
    const hues = assignHues(counts({ 0: 5, 1: 50, 2: 20, 3: 1 }), null, 2);
    expect(Array.from(hues)).toEqual([1, 2]);
  });

  it("lets a cluster that stays among the largest keep its hue", () => {
    // Cluster 2 had hue 0; cluster 1 is now larger, but both keep or take a hue without
    // cluster 2 changing colour.
    const prev = Int32Array.from([2, 7]);
    const hues = assignHues(counts({ 1: 50, 2: 20, 7: 3 }), prev, 2);
    expect(Array.from(hues)).toEqual([2, 1]);
  });

  it("leaves hues free when there are fewer clusters than hues, and skips empty clusters", () => {
    const hues = assignHues(counts({ 0: 3, 1: 0, 4: 2 }), null, 4);
    expect(Array.from(hues)).toEqual([0, 4, -1, -1]);
  });
});

describe("clusterRows and clusterColor", () => {
  it("map hued clusters to their hue and every other one to the grey", () => {
    const hues = Int32Array.from([3, 0]);
    const rows = clusterRows(hues, 4);
    expect(Array.from(rows)).toEqual([ROW_UNCLUSTERED, 1, ROW_OTHER, ROW_OTHER, 0, ROW_OTHER]);
    expect(clusterColor(3, hues)).toBe(CLUSTER_HUES[0]);
    expect(clusterColor(2, hues)).toBe(OTHER_CLUSTERS);
    expect(clusterColor(-1, hues)).toBe(UNCLUSTERED);
  });
});
