// The What-if panel's pure parts: the knobs it shows, the patch between the saved settings
// and the form, and how instants and differences read.

import type { DecayModel, Settings, SettingsPatch, Transition, Weights } from "./bindings";

export const WEIGHTS: (keyof Weights)[] = ["semantic", "lexical", "recency", "actor", "spatial", "usage"];
export const DAY = 86_400_000;

/** A numeric knob: its input and how it reads from and into the settings. */
export interface Knob {
  key: string;
  label: string;
  title: string;
  step: string;
  get: (s: Settings) => number;
}

export const KNOBS: Knob[] = [
  { key: "half_life_days", label: "half-life (days)", title: "importance halves in this many days", step: "1", get: (s) => s.sleep.importance_half_life_days },
  { key: "decay_alpha", label: "power-law α", title: "the power law's exponent (seed 003: 1.5)", step: "0.1", get: (s) => s.sleep.decay_alpha },
  { key: "importance_floor", label: "importance floor", title: "importance never decays below this", step: "0.01", get: (s) => s.sleep.importance_floor },
  { key: "warm_after_days", label: "warm after (days)", title: "lifecycle: warm from this age", step: "1", get: (s) => s.sleep.warm_after_days },
  { key: "cold_after_days", label: "cold after (days)", title: "lifecycle: cold from this age", step: "1", get: (s) => s.sleep.cold_after_days },
  { key: "archive_after_days", label: "archive after (days)", title: "lifecycle: archived from this age", step: "1", get: (s) => s.sleep.archive_after_days },
  { key: "forget_importance", label: "forget below importance", title: "a consolidated, cold, never retrieved episode below this importance is forgotten…", step: "0.05", get: (s) => s.sleep.forget_importance },
  { key: "forget_max_words", label: "forget max words", title: "…when it has at most this many content words", step: "1", get: (s) => s.sleep.forget_max_words },
];

/** The patch between the saved settings and the form's values: only what differs. */
export function patchOf(saved: Settings, decay: DecayModel, values: Record<string, number>, weights: Weights): SettingsPatch {
  const p: SettingsPatch = {
    decay: null, half_life_days: null, decay_alpha: null, importance_floor: null, warm_after_days: null,
    cold_after_days: null, archive_after_days: null, forget_importance: null, forget_max_words: null, weights: null,
  };
  if (decay !== saved.sleep.decay) p.decay = decay;
  for (const k of KNOBS) {
    const v = values[k.key];
    if (Number.isFinite(v) && v !== k.get(saved)) (p as Record<string, unknown>)[k.key] = v;
  }
  if (WEIGHTS.some((w) => weights[w] !== saved.weights[w])) p.weights = weights;
  return p;
}

export function isEmptyPatch(p: SettingsPatch): boolean {
  return Object.values(p).every((v) => v === null);
}

/** "day 12" for an instant `at` after `now`, "next cycle" for now itself. */
export function whenText(now: number, at: number | null): string {
  if (at === null) return "—";
  if (at === now) return "next cycle";
  return `day ${Math.round((at - now) / DAY)}`;
}

/** The proposed settings move it: make it, prevent it, or make it a day or more apart. */
export function differs(t: Transition): boolean {
  if (t.after_at === null || t.before_at === null) return true;
  return Math.abs(t.after_at - t.before_at) >= DAY;
}

/** The knobs that differ between two settings, as "name old → new". */
export function diff(a: Settings, b: Settings): string[] {
  const out: string[] = [];
  if (a.sleep.decay !== b.sleep.decay) out.push(`decay ${a.sleep.decay} → ${b.sleep.decay}`);
  for (const k of KNOBS) if (k.get(a) !== k.get(b)) out.push(`${k.label} ${k.get(a)} → ${k.get(b)}`);
  for (const w of WEIGHTS) if (a.weights[w] !== b.weights[w]) out.push(`${w} ${a.weights[w]} → ${b.weights[w]}`);
  return out;
}
