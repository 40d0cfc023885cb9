// Per-point columns the renderer derives from the props before a frame: the colour of each
// point as four bytes, and the range of rows that can be visible.

import { TABLE_SIZE } from "../colors";

/// Writes each point's colour as rgba bytes into `out` (4 per point): `values` are table rows,
/// or ramp positions in [0, 1] when `ramp`; `table` holds TABLE_SIZE rgb triples in [0, 1].
/// The colour is a vertex attribute rather than a table lookup in the vertex shader: with
/// WebGL rasterised in software (Mesa's llvmpipe, a machine without a GPU), the lookup cost
/// about a quarter of a 100K-point frame.
export function packColors(values: Float32Array, table: Float32Array, ramp: boolean, out: Uint8Array): void {
  const bytes = new Uint8Array(TABLE_SIZE * 3);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.round(Math.max(0, Math.min(1, table[i] || 0)) * 255);
  const last = TABLE_SIZE - 1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    let row = ramp ? Math.round(Math.max(0, Math.min(1, v)) * last) : v | 0;
    if (!(row >= 0 && row <= last)) row = 0;
    const o = i * 4, t = row * 3;
    out[o] = bytes[t];
    out[o + 1] = bytes[t + 1];
    out[o + 2] = bytes[t + 2];
    out[o + 3] = 255;
  }
}

/// The rows from the first to the last point not hidden (flag 0), as [start, count]: the
/// draw call covers only these. Scrubbing back in time hides the newest rows, so the frame
/// then costs what the points of that time cost.
export function shownRange(flags: Float32Array): [number, number] {
  let end = flags.length;
  while (end > 0 && flags[end - 1] === 0) end--;
  let start = 0;
  while (start < end && flags[start] === 0) start++;
  return [start, end - start];
}
