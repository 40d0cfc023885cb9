// Lasso selection: the drawn polygon is scan-converted once into a mask over its bounding
// box, so each point costs one projection and one lookup however many vertices the lasso
// has. The upload worker runs `lassoRows` on copies of the drawn positions; the main thread
// only posts them and applies the rows it gets back.

/// Pixels of the canvas inside a polygon: `bits[r * w + c]` is 1 for pixel (x0 + c, y0 + r).
export interface Mask {
  x0: number;
  y0: number;
  w: number;
  h: number;
  bits: Uint8Array;
}

/// The mask of polygon `poly` (x/y pairs in pixels) clipped to a `width` × `height` canvas:
/// a pixel is inside when its centre is (even-odd rule). Null when nothing is inside.
export function polygonMask(poly: ArrayLike<number>, width: number, height: number): Mask | null {
  const m = poly.length / 2;
  if (m < 3) return null;
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (let i = 0; i < poly.length; i += 2) {
    minX = Math.min(minX, poly[i]); maxX = Math.max(maxX, poly[i]);
    minY = Math.min(minY, poly[i + 1]); maxY = Math.max(maxY, poly[i + 1]);
  }
  const x0 = Math.max(0, Math.floor(minX)), y0 = Math.max(0, Math.floor(minY));
  const x1 = Math.min(width, Math.ceil(maxX)), y1 = Math.min(height, Math.ceil(maxY));
  const w = x1 - x0, h = y1 - y0;
  if (w <= 0 || h <= 0) return null;
  const bits = new Uint8Array(w * h);
  const xs: number[] = [];
  for (let r = 0; r < h; r++) {
    const y = y0 + r + 0.5;
    xs.length = 0;
    for (let a = 0, b = m - 1; a < m; b = a++) {
      const ya = poly[a * 2 + 1], yb = poly[b * 2 + 1];
      if ((ya > y) !== (yb > y)) xs.push(poly[a * 2] + ((y - ya) * (poly[b * 2] - poly[a * 2])) / (yb - ya));
    }
    xs.sort((u, v) => u - v);
    for (let k = 0; k + 1 < xs.length; k += 2) {
      // Pixel columns whose centre lies inside [xs[k], xs[k+1]).
      const c0 = Math.max(0, Math.ceil(xs[k] - x0 - 0.5));
      const c1 = Math.min(w - 1, Math.ceil(xs[k + 1] - x0 - 0.5) - 1);
      if (c1 >= c0) bits.fill(1, r * w + c0, r * w + c1 + 1);
    }
  }
  return { x0, y0, w, h, bits };
}

/// What the worker needs to lasso: the drawn positions and flags (copies, transferred), the
/// view-projection matrix (column-major), the canvas size and the polygon.
export interface LassoRequest {
  n: number;
  positions: Float32Array<ArrayBuffer>;
  flags: Float32Array<ArrayBuffer>;
  matrix: number[];
  width: number;
  height: number;
  polygon: number[];
}

export interface LassoResult {
  /// Rows of the points inside, ascending.
  rows: Uint32Array<ArrayBuffer>;
  /// The request's buffers, handed back for reuse.
  positions: Float32Array<ArrayBuffer>;
  flags: Float32Array<ArrayBuffer>;
  ms: number;
}

/// Rows (ascending) of the visible points whose screen position falls inside `mask`: one
/// pass that projects each point and reads one mask pixel.
export function lassoRows(req: LassoRequest, mask: Mask | null): Uint32Array<ArrayBuffer> {
  if (!mask) return new Uint32Array(0);
  const { n, positions: pos, flags, matrix: m } = req;
  const m0 = m[0], m1 = m[1], m3 = m[3], m4 = m[4], m5 = m[5], m7 = m[7];
  const m8 = m[8], m9 = m[9], m11 = m[11], m12 = m[12], m13 = m[13], m15 = m[15];
  const hw = req.width / 2, hh = req.height / 2;
  const { x0, y0, w, h, bits } = mask;
  const out = new Uint32Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (flags[i] === 0) continue;
    const x = pos[i * 3], y = pos[i * 3 + 1], z = pos[i * 3 + 2];
    const cw = m3 * x + m7 * y + m11 * z + m15;
    if (cw <= 0) continue;
    const sx = ((m0 * x + m4 * y + m8 * z + m12) / cw + 1) * hw - x0;
    const sy = (1 - (m1 * x + m5 * y + m9 * z + m13) / cw) * hh - y0;
    if (sx < 0 || sx >= w || sy < 0 || sy >= h) continue;
    if (bits[(sy | 0) * w + (sx | 0)]) out[k++] = i;
  }
  return out.slice(0, k);
}
