import { describe, expect, it } from "vitest";
import { fitTransform, MAX_ZOOM, MIN_ZOOM, zoomAbout, type Rect, type ViewTransform } from "./fit";

const screen = (t: ViewTransform, x: number, y: number) => [t.ox + x * t.k, t.oy + y * t.k];
const inside = (r: Rect, pad: number, [x, y]: number[]) => x >= r.x + pad - 1e-6 && x <= r.x + r.w - pad + 1e-6 && y >= r.y + pad - 1e-6 && y <= r.y + r.h - pad + 1e-6;

describe("fitTransform", () => {
  // A graph drifted far right of the origin (as the old view drew it, under the legend).
  const xy = Float32Array.from([900, 40, 1400, -300, 1100, 500, 1300, 120]);
  const rect = { x: 0, y: 0, w: 640, h: 480 };

  it("shows every node inside the rect, the pad in from its edges", () => {
    const t = fitTransform(xy, 4, rect, 30);
    for (let i = 0; i < 4; i++) expect(inside(rect, 30, screen(t, xy[i * 2], xy[i * 2 + 1]))).toBe(true);
  });

  it("uses the room: the wider extent touches the pad", () => {
    const t = fitTransform(xy, 4, rect, 30);
    const ys = [0, 1, 2, 3].map((i) => screen(t, xy[i * 2], xy[i * 2 + 1])[1]);
    // The graph is 800 units tall and 500 wide: height limits the zoom.
    expect(Math.min(...ys)).toBeCloseTo(30, 3);
    expect(Math.max(...ys)).toBeCloseTo(450, 3);
  });

  it("brings the given centre as near the middle as it can with every node inside, at the same zoom", () => {
    const r = { x: 10, y: 20, w: 500, h: 400 };
    const plain = fitTransform(xy, 4, r, 20);
    // (1400, -300) is the top-right corner of the graph: it cannot reach the middle.
    const t = fitTransform(xy, 4, r, 20, [1400, -300]);
    expect(t.k).toBe(plain.k);
    for (let i = 0; i < 4; i++) expect(inside(r, 20, screen(t, xy[i * 2], xy[i * 2 + 1]))).toBe(true);
    const [sx, sy] = screen(t, 1400, -300), [px, py] = screen(plain, 1400, -300);
    expect(Math.abs(sx - 260)).toBeLessThanOrEqual(Math.abs(px - 260) + 1e-6);
    expect(Math.abs(sy - 220)).toBeLessThanOrEqual(Math.abs(py - 220) + 1e-6);
    // Height limits the zoom, so the graph spans the padded height and cannot move up or down.
    expect(sy).toBeCloseTo(py, 6);
    // Width has room to spare: the corner moves toward the middle.
    expect(sx).toBeLessThan(px);
  });

  it("puts the centre exactly in the middle when the graph is small enough around it", () => {
    // Zoom is capped, so there is room on every side.
    const small = Float32Array.from([0, 0, 2, 1, 1, 2]);
    const t = fitTransform(small, 3, rect, 30, [2, 1]);
    expect(t.k).toBe(MAX_ZOOM);
    expect(screen(t, 2, 1)).toEqual([320, 240]);
  });

  it("shows a lone node at zoom 1 in the middle", () => {
    const t = fitTransform(Float32Array.from([5, 5]), 1, rect, 30);
    expect(t.k).toBe(1);
    expect(screen(t, 5, 5)).toEqual([320, 240]);
  });

  it("keeps the zoom within its limits", () => {
    const tiny = fitTransform(Float32Array.from([0, 0, 0.01, 0.01]), 2, rect, 30);
    expect(tiny.k).toBe(MAX_ZOOM);
    const huge = fitTransform(Float32Array.from([0, 0, 1e7, 1e7]), 2, rect, 30);
    expect(huge.k).toBe(MIN_ZOOM);
  });
});

describe("zoomAbout", () => {
  it("keeps the point under the cursor where it is", () => {
    const t = { k: 0.5, ox: 100, oy: 50 };
    const z = zoomAbout(t, 2, 300, 200);
    expect(z.k).toBe(1);
    // Layout point under (300, 200) before: ((300-100)/0.5, (200-50)/0.5) = (400, 300).
    expect(screen(z, 400, 300)).toEqual([300, 200]);
  });

  it("stops at the zoom limits", () => {
    expect(zoomAbout({ k: MAX_ZOOM, ox: 0, oy: 0 }, 3, 0, 0).k).toBe(MAX_ZOOM);
    expect(zoomAbout({ k: MIN_ZOOM, ox: 0, oy: 0 }, 0.1, 0, 0).k).toBe(MIN_ZOOM);
  });
});
