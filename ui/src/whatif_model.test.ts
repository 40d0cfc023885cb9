import { describe, expect, it } from "vitest";
import type { Settings, Transition } from "./bindings";
import { DAY, diff, differs, isEmptyPatch, patchOf, whenText } from "./whatif_model";

const saved = {
  sleep: {
    decay: "exponential", importance_half_life_days: 30, decay_alpha: 1.5, importance_floor: 0.05,
    warm_after_days: 7, cold_after_days: 30, archive_after_days: 90, forget_importance: 0.4, forget_max_words: 4,
  },
  weights: { semantic: 0.35, lexical: 0.4, recency: 0.1, actor: 0.07, spatial: 0.03, usage: 0.05 },
} as unknown as Settings;

const values = (over: Record<string, number> = {}) => ({
  half_life_days: 30, decay_alpha: 1.5, importance_floor: 0.05, warm_after_days: 7, cold_after_days: 30,
  archive_after_days: 90, forget_importance: 0.4, forget_max_words: 4, ...over,
});

describe("patchOf", () => {
  it("is empty when the form holds the saved settings", () => {
    expect(isEmptyPatch(patchOf(saved, "exponential", values(), { ...saved.weights }))).toBe(true);
  });

  it("names only what differs, and the weights whole", () => {
    const w = { ...saved.weights, semantic: 0.45, lexical: 0.3 };
    const p = patchOf(saved, "power_law", values({ archive_after_days: 60 }), w);
    expect(p.decay).toBe("power_law");
    expect(p.archive_after_days).toBe(60);
    expect(p.half_life_days).toBeNull();
    expect(p.weights).toEqual(w);
  });

  it("leaves out a field that is not a number", () => {
    expect(patchOf(saved, "exponential", values({ warm_after_days: NaN }), saved.weights).warm_after_days).toBeNull();
  });
});

describe("reading a simulation", () => {
  it("says when a transition happens and whether the change moves it", () => {
    const now = 1_000 * DAY;
    expect(whenText(now, now)).toBe("next cycle");
    expect(whenText(now, now + 12 * DAY)).toBe("day 12");
    expect(whenText(now, null)).toBe("—");
    const t = (after: number | null, before: number | null) =>
      ({ memory_id: 1, kind: "episode", text: "", from: "cold", to: "archived", after_at: after, before_at: before }) as Transition;
    expect(differs(t(now, now + 60_000))).toBe(false);
    expect(differs(t(now, now + 2 * DAY))).toBe(true);
    expect(differs(t(null, now))).toBe(true);
  });

  it("lists the knobs two settings differ in", () => {
    const other = structuredClone(saved);
    other.sleep.archive_after_days = 60;
    other.weights.usage = 0.1;
    expect(diff(saved, other)).toEqual(["archive after (days) 90 → 60", "usage 0.05 → 0.1"]);
  });
});
