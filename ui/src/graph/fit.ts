// The bubble graph's view transform: a node at (x, y) is drawn at (ox + x·k, oy + y·k).
// Fitting picks the transform that shows every node inside the visible part of the canvas,
// as large as it fits and centred on the selection as far as that allows; zoom stays within
// fixed limits.

export interface ViewTransform {
  k: number;
  ox: number;
  oy: number;
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/// Zoom limits (screen pixels per layout unit). A 400-node neighbourhood spans about
/// 1,500 units, so the lower limit still fits it in a small window.
export const MIN_ZOOM = 0.02;
export const MAX_ZOOM = 6;

export function clampZoom(k: number): number {
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));
}

/// The transform that fits the `n` nodes at `xy` (x/y pairs) inside `rect`, `pad` pixels in
/// from its edges, as large as the zoom limits allow. With `centre` (a layout point, e.g. the
/// selection's mean) the graph is then shifted to bring that point as near to the middle of
/// the rect as it can go while every node stays inside; without it the nodes' bounding box
/// is centred. A single node (or none) is shown at zoom 1.
export function fitTransform(xy: Float32Array, n: number, rect: Rect, pad: number, centre: [number, number] | null = null): ViewTransform {
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = xy[i * 2], y = xy[i * 2 + 1];
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  const mx = rect.x + rect.w / 2, my = rect.y + rect.h / 2;
  if (n === 0) return { k: 1, ox: mx, oy: my };
  const room = (size: number, extent: number) => (extent > 0 ? Math.max(1, size - 2 * pad) / extent : Infinity);
  let k = Math.min(room(rect.w, maxX - minX), room(rect.h, maxY - minY));
  k = Number.isFinite(k) ? clampZoom(k) : 1;
  // Where the origin may go with every node inside: between the offsets that put the far
  // edge and the near edge of the nodes on the padded border. When the graph is larger than
  // the rect (zoom at its lower limit) the range is empty: centre the box.
  const place = (mid: number, lo: number, hi: number, c: number | undefined, min: number, max: number) => {
    const box = mid - ((min + max) / 2) * k;
    if (c === undefined || lo > hi) return box;
    return Math.min(hi, Math.max(lo, mid - c * k));
  };
  const ox = place(mx, rect.x + pad - minX * k, rect.x + rect.w - pad - maxX * k, centre?.[0], minX, maxX);
  const oy = place(my, rect.y + pad - minY * k, rect.y + rect.h - pad - maxY * k, centre?.[1], minY, maxY);
  return { k, ox, oy };
}

/// `t` zoomed by `factor` (within the limits) about the screen point (px, py), which keeps
/// showing the same layout point.
export function zoomAbout(t: ViewTransform, factor: number, px: number, py: number): ViewTransform {
  const k = clampZoom(t.k * factor);
  const s = k / t.k;
  return { k, ox: px - (px - t.ox) * s, oy: py - (py - t.oy) * s };
}
