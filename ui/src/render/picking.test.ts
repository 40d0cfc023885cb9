import * as THREE from "three";
import { describe, expect, it } from "vitest";
import { nearestPoint, OFF, projectPoints, ScreenGrid } from "./picking";

function camera(): THREE.PerspectiveCamera {
  const cam = new THREE.PerspectiveCamera(50, 1.5, 0.01, 100);
  cam.position.set(0.3, -0.2, 3.2);
  cam.lookAt(0, 0, 0);
  cam.updateMatrixWorld();
  return cam;
}

describe("projectPoints", () => {
  it("agrees with three.js's own projection", () => {
    const cam = camera();
    const m = new THREE.Matrix4().multiplyMatrices(cam.projectionMatrix, cam.matrixWorldInverse);
    const pos = Float32Array.from([0, 0, 0, 0.5, -0.4, 0.2, -0.9, 0.7, -0.3]);
    const out = new Float32Array(6);
    projectPoints(m.elements, pos, Float32Array.from([1, 1, 2]), 3, 600, 400, out);
    for (let i = 0; i < 3; i++) {
      const v = new THREE.Vector3(pos[i * 3], pos[i * 3 + 1], pos[i * 3 + 2]).project(cam);
      expect(out[i * 2]).toBeCloseTo((v.x + 1) * 300, 2);
      expect(out[i * 2 + 1]).toBeCloseTo((1 - v.y) * 200, 2);
    }
  });

  it("puts hidden points and points behind the camera off screen", () => {
    const cam = camera();
    const m = new THREE.Matrix4().multiplyMatrices(cam.projectionMatrix, cam.matrixWorldInverse);
    const out = new Float32Array(4);
    projectPoints(m.elements, Float32Array.from([0, 0, 0, 0, 0, 10]), Float32Array.from([0, 1]), 2, 600, 400, out);
    expect(Array.from(out)).toEqual([OFF, OFF, OFF, OFF]);
  });
});

describe("nearestPoint", () => {
  const screen = Float32Array.from([10, 10, 20, 10, 100, 100]);

  it("finds the nearest point within the radius", () => {
    expect(nearestPoint(screen, 3, 17, 11, 8)).toBe(1);
    expect(nearestPoint(screen, 3, 12, 10, 8)).toBe(0);
  });

  it("finds nothing beyond the radius", () => {
    expect(nearestPoint(screen, 3, 60, 60, 8)).toBe(-1);
  });
});

describe("ScreenGrid", () => {
  it("finds the same point as a search over all points, for pointers anywhere on the canvas, near its edges too", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 4294967296);
    const n = 3000, w = 300, h = 200;
    const screen = new Float32Array(n * 2);
    for (let i = 0; i < n; i++) {
      // Clumps and a few points off the canvas or hidden.
      const c = i % 5;
      screen[i * 2] = i % 97 === 0 ? OFF : 40 + 50 * c + 30 * (rnd() - 0.5) * (c + 1);
      screen[i * 2 + 1] = 100 + 120 * (rnd() - 0.5);
    }
    const g = new ScreenGrid();
    g.build(screen, n, w, h, 8);
    for (let t = 0; t < 400; t++) {
      // Every tenth pointer on the right edge, where points lie just off the canvas.
      const x = t % 10 === 0 ? w - 1 : rnd() * w, y = rnd() * h, r = t % 2 ? 8 : 14;
      const want = nearestPoint(screen, n, x, y, r);
      expect(g.nearest(screen, x, y, r)).toBe(want);
    }
  });

  it("finds a point just off the canvas edge from a pointer at the edge", () => {
    const screen = Float32Array.from([103, 50, 40, 50, -5, 20]);
    const g = new ScreenGrid();
    g.build(screen, 3, 100, 100, 8);
    expect(g.nearest(screen, 99, 50, 8)).toBe(0);
    expect(g.nearest(screen, 1, 20, 8)).toBe(2);
  });

  it("finds nothing on an empty canvas", () => {
    const g = new ScreenGrid();
    g.build(new Float32Array(0), 0, 100, 100, 8);
    expect(g.nearest(new Float32Array(0), 50, 50, 8)).toBe(-1);
  });
});
