import * as THREE from "three";
import { describe, expect, it } from "vitest";
import { nearestPoint, OFF, projectPoints } from "./picking";

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

