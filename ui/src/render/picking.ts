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

/// A grid over the canvas that buckets the points' screen positions (a counting sort by
/// cell), so a pick looks at the points in the cells around the pointer instead of all of
/// them. Built once per projection; its arrays are reused while the point count and canvas
/// size stay the same.
export class ScreenGrid {
  private cell = 8;
  private cols = 0;
  private rows = 0;
  /// Points of cell c are items[start[c] .. start[c + 1]).
  private start = new Uint32Array(0);
  private items = new Uint32Array(0);

  build(screen: Float32Array, n: number, width: number, height: number, cell: number): void {
    this.cell = cell;
    this.cols = Math.max(1, Math.ceil(width / cell));
    this.rows = Math.max(1, Math.ceil(height / cell));
    const cells = this.cols * this.rows;
    if (this.start.length !== cells + 1) this.start = new Uint32Array(cells + 1);
    if (this.items.length < n) this.items = new Uint32Array(n);
    const start = this.start, items = this.items, cols = this.cols, rows = this.rows;
    start.fill(0);
    // Points up to two cells off the canvas go into the edge cells, so a pick on the canvas
    // within two cells' radius finds them too; points further off are left out.
    const cellOf = (i: number): number => {
      const cx = Math.floor(screen[i * 2] / cell), cy = Math.floor(screen[i * 2 + 1] / cell);
      if (cx < -2 || cy < -2 || cx >= cols + 2 || cy >= rows + 2) return -1;
      return Math.min(rows - 1, Math.max(0, cy)) * cols + Math.min(cols - 1, Math.max(0, cx));
    };
    for (let i = 0; i < n; i++) {
      const c = cellOf(i);
      if (c >= 0) start[c + 1]++;
    }
    for (let c = 0; c < cells; c++) start[c + 1] += start[c];
    // Fill each cell from its start; `start` is shifted by one cell meanwhile and restored.
    for (let i = 0; i < n; i++) {
      const c = cellOf(i);
      if (c >= 0) items[start[c]++] = i;
    }
    for (let c = cells; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
  }

  /// The point nearest to (x, y) within `radius` pixels, or -1. Exact for a pointer on the
  /// canvas and a radius of up to two cells.
  nearest(screen: Float32Array, x: number, y: number, radius: number): number {
    const c0 = Math.max(0, Math.floor((x - radius) / this.cell)), c1 = Math.min(this.cols - 1, Math.floor((x + radius) / this.cell));
    const r0 = Math.max(0, Math.floor((y - radius) / this.cell)), r1 = Math.min(this.rows - 1, Math.floor((y + radius) / this.cell));
    let best = -1, bd = radius * radius;
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const cell = r * this.cols + c;
        for (let k = this.start[cell]; k < this.start[cell + 1]; k++) {
          const i = this.items[k];
          const dx = screen[i * 2] - x, dy = screen[i * 2 + 1] - y;
          const d = dx * dx + dy * dy;
          if (d < bd || (d === bd && best >= 0 && i < best)) {
            bd = d;
            best = i;
          }
        }
      }
    }
    return best;
  }
}
