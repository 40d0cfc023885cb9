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
    out[i] = stateOf(steps, k, at);
  }
  return out;
}

/// The state code at `at` of the memory at position `k` of the steps (-1: not there).
function stateOf(steps: VisibilitySteps, k: number, at: number): number {
  const a = steps.offsets[k], b = steps.offsets[k + 1];
  // The last step at or before `at`.
  let lo = a, hi = b;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (steps.at[mid] <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo === a ? -1 : steps.states[lo - 1];
}

/// Counts the memories shown at `at` (for the label, at every step of a drag: a count, no
/// list of every memory's state).
export function countAt(steps: VisibilitySteps, at: number): number {
  let n = 0;
  for (let k = 0; k < steps.ids.length; k++) if (stateOf(steps, k, at) >= 0) n++;
  return n;
}
