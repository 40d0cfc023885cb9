// Every memory's visibility over time (the engine's VisibilitySteps), read at an instant:
// what the time scrubber computes at each step of a drag, without asking the engine.

import type { VisibilitySteps } from "./bindings";

/// Per row of `ids`, the state code at `at` (0 active, 1 warm, 2 cold, 3 archived), or -1
/// when that memory did not exist then or was hidden. An id the steps do not know (added
/// after they were loaded) counts as there.
export function statesAt(steps: VisibilitySteps, ids: Int32Array | number[], at: number): Int8Array {
  const out = new Int8Array(ids.length);
  const known = steps.ids;
  // Both id lists ascend (the engine sends both by id): one merge pass.
  let k = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    while (k < known.length && known[k] < id) k++;
    if (k >= known.length || known[k] !== id) {
      out[i] = 0;
      continue;
    }
    const a = steps.offsets[k], b = steps.offsets[k + 1];
    // The last step at or before `at`.
    let lo = a, hi = b;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (steps.at[mid] <= at) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo === a ? -1 : steps.states[lo - 1];
  }
  return out;
}

/// Counts the memories shown at `at` (for the label).
export function countAt(steps: VisibilitySteps, at: number): number {
  return statesAt(steps, steps.ids, at).reduce((n, c) => n + (c >= 0 ? 1 : 0), 0);
}
