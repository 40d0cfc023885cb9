// The bubble graph's view transform: a node at (x, y) is drawn at (ox + x·k, oy + y·k).
// Fitting picks the transform that shows every node inside the visible part of the canvas,
// centred on the selection when there is one; zoom stays within fixed limits.

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
/// from its edges. With `centre` (a layout point, e.g. the selection's mean) that point goes
/// to the middle of the rect and the zoom is chosen so the farthest node on each side still
/// fits; otherwise the nodes' bounding box is centred. A single node (or none) is shown at
/// zoom 1.
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
  const [cx, cy] = centre ?? [(minX + maxX) / 2, (minY + maxY) / 2];
  const ex = Math.max(cx - minX, maxX - cx), ey = Math.max(cy - minY, maxY - cy);
  const room = (half: number, extent: number) => (extent > 0 ? Math.max(1, half - pad) / extent : Infinity);
  let k = Math.min(room(rect.w / 2, ex), room(rect.h / 2, ey));
  k = Number.isFinite(k) ? clampZoom(k) : 1;
  return { k, ox: mx - cx * k, oy: my - cy * k };
}

/// `t` zoomed by `factor` (within the limits) about the screen point (px, py), which keeps
/// showing the same layout point.
export function zoomAbout(t: ViewTransform, factor: number, px: number, py: number): ViewTransform {
  const k = clampZoom(t.k * factor);
  const s = k / t.k;
  return { k, ox: px - (px - t.ox) * s, oy: py - (py - t.oy) * s };
}
