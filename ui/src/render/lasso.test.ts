import { describe, expect, it } from "vitest";
import { lassoRows, polygonMask, type LassoRequest } from "./lasso";

/// A matrix that maps x, y in [-1, 1] straight to clip space (w = 1): screen x = (x+1)·w/2.
const FLAT = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

function request(points: [number, number][], flags: number[], polygon: number[], size = 100): LassoRequest {
  return {
    n: points.length,
    positions: Float32Array.from(points.flatMap(([x, y]) => [x, y, 0])),
    flags: Float32Array.from(flags),
    matrix: FLAT, width: size, height: size, polygon,
  };
}

describe("polygonMask", () => {
  it("fills the pixels whose centres lie inside a square", () => {
    const m = polygonMask([2, 2, 6, 2, 6, 5, 2, 5], 10, 10)!;
    expect([m.x0, m.y0, m.w, m.h]).toEqual([2, 2, 4, 3]);
    expect(m.bits.every((b) => b === 1)).toBe(true);
  });

  it("leaves a concave polygon's notch empty (even-odd rule)", () => {
    // A U shape: the notch between its arms, x 4..6 above y 6, is outside.
    const m = polygonMask([0, 0, 4, 0, 4, 6, 6, 6, 6, 0, 10, 0, 10, 10, 0, 10], 10, 10)!;
    const at = (x: number, y: number) => m.bits[(y - m.y0) * m.w + (x - m.x0)];
    expect(at(5, 2)).toBe(0);
    expect(at(1, 2)).toBe(1);
    expect(at(8, 2)).toBe(1);
    expect(at(5, 8)).toBe(1);
  });

  it("clips to the canvas and is null when nothing of it is on the canvas or it has under three vertices", () => {
    const m = polygonMask([-20, -20, 5, -20, 5, 5, -20, 5], 10, 10)!;
    expect([m.x0, m.y0, m.w, m.h]).toEqual([0, 0, 5, 5]);
    expect(polygonMask([20, 20, 30, 20, 30, 30], 10, 10)).toBeNull();
    expect(polygonMask([1, 1, 5, 5], 10, 10)).toBeNull();
  });
});

describe("lassoRows", () => {
  // Screen positions on a 100 px canvas: x = (px+1)·50, y = (1-py)·50.
  const pts: [number, number][] = [[-0.5, 0.5], [0.5, 0.5], [-0.5, -0.5], [0.5, -0.5], [0, 0]];

  it("returns the rows inside the polygon in ascending order", () => {
    // The left half of the canvas: points 0 and 2 (x = 25), not the centre point (x = 50).
    const req = request(pts, [1, 1, 1, 1, 1], [0, 0, 45, 0, 45, 100, 0, 100]);
    expect(Array.from(lassoRows(req, polygonMask(req.polygon, 100, 100)))).toEqual([0, 2]);
  });

  it("skips hidden points, and counts selected ones (flag 2) as shown", () => {
    const req = request(pts, [0, 1, 2, 1, 1], [0, 0, 45, 0, 45, 100, 0, 100]);
    expect(Array.from(lassoRows(req, polygonMask(req.polygon, 100, 100)))).toEqual([2]);
  });

  it("skips points behind the camera", () => {
    const req = request(pts, [1, 1, 1, 1, 1], [0, 0, 100, 0, 100, 100, 0, 100]);
    req.matrix = FLAT.slice();
    req.matrix[15] = -1; // w < 0 for every point
    expect(lassoRows(req, polygonMask(req.polygon, 100, 100)).length).toBe(0);
  });

  it("selects nothing without a mask", () => {
    expect(lassoRows(request(pts, [1, 1, 1, 1, 1], []), null).length).toBe(0);
  });
});
