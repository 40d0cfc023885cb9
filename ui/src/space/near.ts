// The selection's nearest memories in embedding space (the vector index, through the
// backend), for the violet lines of the 3D view. Keeps the last answer, so a re-selection of
// the same memory fetches nothing, and drops answers that arrive after a newer request.

import { api } from "../api";
import type { Similar } from "../types";

/// How many nearest memories of the selection the view draws lines to.
export const NEAR_K = 8;

export class Nearest {
  shown = true;
  /// The memory the lines start at and its neighbours, most similar first.
  current: { id: number; list: Similar[] } | null = null;
  private token = 0;

  /// Loads the neighbours of `primary` (nothing when hidden or null). Resolves true when
  /// `current` is up to date, false when a newer request overtook this one.
  async load(primary: number | null): Promise<boolean> {
    const token = ++this.token;
    if (!this.shown || primary === null) {
      this.current = null;
      return true;
    }
    if (this.current?.id === primary) return true;
    try {
      const list = await api.similar(primary, NEAR_K);
      if (token !== this.token) return false;
      this.current = { id: primary, list };
    } catch {
      // A memory deleted meanwhile has no neighbours to show.
      if (token !== this.token) return false;
      this.current = null;
    }
    return true;
  }
}
