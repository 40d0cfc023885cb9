// Picking math: where points land on screen under the camera, and which one is under the
// pointer. Pure functions over the columnar arrays (no per-point objects).

/// The screen coordinate given to hidden points and points behind the camera.
export const OFF = -1e9;

/// Writes the screen position (CSS pixels, y down) of each of the `n` points into `out`
/// (x/y pairs). `m` is the view-projection matrix in column-major order (three.js
/// `elements`); points with flag 0 (hidden) or behind the camera get `OFF`.
export function projectPoints(m: ArrayLike<number>, pos: Float32Array, flags: Float32Array, n: number,
  width: number, height: number, out: Float32Array): void {
  const m0 = m[0], m1 = m[1], m3 = m[3], m4 = m[4], m5 = m[5], m7 = m[7];
  const m8 = m[8], m9 = m[9], m11 = m[11], m12 = m[12], m13 = m[13], m15 = m[15];
  const hw = width / 2, hh = height / 2;
  for (let i = 0; i < n; i++) {
    const x = pos[i * 3], y = pos[i * 3 + 1], z = pos[i * 3 + 2];
    const cw = m3 * x + m7 * y + m11 * z + m15;
    if (cw <= 0 || flags[i] === 0) {
      out[i * 2] = OFF;
      out[i * 2 + 1] = OFF;
      continue;
    }
    out[i * 2] = ((m0 * x + m4 * y + m8 * z + m12) / cw + 1) * hw;
    out[i * 2 + 1] = (1 - (m1 * x + m5 * y + m9 * z + m13) / cw) * hh;
  }
}

/// The point whose screen position is nearest to (x, y) within `radius` pixels, or -1.
export function nearestPoint(screen: Float32Array, n: number, x: number, y: number, radius: number): number {
  let best = -1, bd = radius * radius;
  for (let i = 0; i < n; i++) {
    const dx = screen[i * 2] - x, dy = screen[i * 2 + 1] - y;
    const d = dx * dx + dy * dy;
    if (d < bd) {
      bd = d;
      best = i;
    }
  }
  return best;
}

