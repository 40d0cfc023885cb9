// Colour scales for the 3D view and the graph. Everything writes into preallocated arrays.

export type ColorBy = "cluster" | "energy" | "kind" | "recency" | "usage" | "importance" | "state";

export const KIND_COLORS: [number, number, number][] = [
  [0.40, 0.62, 1.00], // episode
  [1.00, 0.74, 0.30], // fact
  [0.45, 0.90, 0.55], // summary
  [0.95, 0.45, 0.85], // schema
];

export const STATE_COLORS: [number, number, number][] = [
  [0.45, 0.85, 0.60], // active
  [0.95, 0.80, 0.35], // warm
  [0.45, 0.65, 0.95], // cold
  [0.55, 0.55, 0.62], // archived
  [0.90, 0.35, 0.35], // forgotten
];

// A perceptually ordered ramp (approximating viridis) sampled at 6 stops.
const RAMP: [number, number, number][] = [
  [0.27, 0.00, 0.33], [0.23, 0.32, 0.55], [0.13, 0.57, 0.55],
  [0.37, 0.79, 0.38], [0.85, 0.89, 0.10], [0.99, 0.91, 0.15],
];

export function ramp(t: number, out: Float32Array, o: number): void {
  const x = Math.max(0, Math.min(1, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  const a = RAMP[i], b = RAMP[i + 1];
  out[o] = a[0] + (b[0] - a[0]) * f;
  out[o + 1] = a[1] + (b[1] - a[1]) * f;
  out[o + 2] = a[2] + (b[2] - a[2]) * f;
}

/// The ramp sampled at 256 levels, for per-point colouring by table lookup.
export const RAMP_LUT: Float32Array = (() => {
  const lut = new Float32Array(256 * 3);
  for (let i = 0; i < 256; i++) ramp(i / 255, lut, i * 3);
  return lut;
})();

/// Writes `lut[idx[i]]` (rgb triples) into `out` for every point: one table read per point.
export function paintByIndex(idx: ArrayLike<number>, lut: Float32Array, out: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const o = idx[i] * 3;
    out[i * 3] = lut[o]; out[i * 3 + 1] = lut[o + 1]; out[i * 3 + 2] = lut[o + 2];
  }
}

/// Colours every point by a value scaled to [0, 1] (`value(i) * scale`) through the ramp.
export function paintRamp(value: (i: number) => number, scale: number, out: Float32Array, n: number): void {
  const lut = RAMP_LUT;
  for (let i = 0; i < n; i++) {
    const t = value(i) * scale;
    const o = (t <= 0 ? 0 : t >= 1 ? 255 : (t * 255 + 0.5) | 0) * 3;
    out[i * 3] = lut[o]; out[i * 3 + 1] = lut[o + 1]; out[i * 3 + 2] = lut[o + 2];
  }
}

/// A flat rgb table of `colors` (index = category) for [`paintByIndex`].
export function table(colors: [number, number, number][]): Float32Array {
  return new Float32Array(colors.flat());
}

/// A distinct, stable colour for a category id (golden-angle hue walk).
export function categorical(id: number, out: Float32Array, o: number): void {
  if (id < 0) {
    out[o] = out[o + 1] = out[o + 2] = 0.45;
    return;
  }
  const hue = ((id * 137.508) % 360) / 360;
  const s = 0.62, l = 0.58;
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const ch = (t: number) => {
    if (t < 0) t += 1;
    if (t > 1) t -= 1;
    if (t < 1 / 6) return p + (q - p) * 6 * t;
    if (t < 1 / 2) return q;
    if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
    return p;
  };
  out[o] = ch(hue + 1 / 3);
  out[o + 1] = ch(hue);
  out[o + 2] = ch(hue - 1 / 3);
}

export function cssColor(rgb: ArrayLike<number>, o = 0): string {
  const c = (x: number) => Math.round(Math.max(0, Math.min(1, x)) * 255);
  return `rgb(${c(rgb[o])}, ${c(rgb[o + 1])}, ${c(rgb[o + 2])})`;
}
