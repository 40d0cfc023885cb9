// Pure logic behind the golden-query panel, the ledger panel and the X-ray's tuning: fusion
// weights as a person edits them, golden runs grouped by sleep cycle, the ledger's hourly
// series for the chart, and the number formats. No DOM here (tested in panels.test.ts).

import type { GoldenRun, LedgerSummary, Weights } from "./bindings";

export const WEIGHT_KEYS = ["semantic", "lexical", "recency", "actor", "spatial", "usage"] as const;
export type WeightKey = (typeof WEIGHT_KEYS)[number];

/** What a person should read for each weight. */
export const WEIGHT_HELP: Record<WeightKey, string> = {
  semantic: "meaning: cosine similarity of the embeddings",
  lexical: "words: full-text (BM25) match of the query's words",
  recency: "how recently the memory happened",
  actor: "the memory is about the actor the query names",
  spatial: "closeness in the 3D layout to the best hits",
  usage: "how often searches returned it before",
};

export function weightSum(w: Weights): number {
  return WEIGHT_KEYS.reduce((s, k) => s + w[k], 0);
}

/**
 * The weights scaled to sum 1, as the engine requires; null when one is not a number or
 * is outside 0..1, or all are 0 (nothing to scale).
 */
export function normaliseWeights(w: Weights): Weights | null {
  if (WEIGHT_KEYS.some((k) => !Number.isFinite(w[k]) || w[k] < 0 || w[k] > 1)) return null;
  const sum = weightSum(w);
  if (sum <= 0) return null;
  const out = { ...w };
  for (const k of WEIGHT_KEYS) out[k] = w[k] / sum;
  return out;
}

export function sameWeights(a: Weights, b: Weights, eps = 1e-6): boolean {
  return WEIGHT_KEYS.every((k) => Math.abs(a[k] - b[k]) <= eps);
}

/** Golden runs as the panel lists them: a sleep cycle's runs before and after it side by side. */
export type RunGroup =
  | { kind: "cycle"; cycle: number; before: GoldenRun | null; after: GoldenRun | null; at: number }
  | { kind: "manual"; run: GoldenRun; at: number };

/** Groups runs (in any order) by sleep cycle; newest first. */
export function groupRuns(runs: GoldenRun[]): RunGroup[] {
  const cycles = new Map<number, { before: GoldenRun | null; after: GoldenRun | null; at: number }>();
  const out: RunGroup[] = [];
  for (const r of runs) {
    if (r.cycle_id === null) {
      out.push({ kind: "manual", run: r, at: r.run_at });
      continue;
    }
    let c = cycles.get(r.cycle_id);
    if (!c) cycles.set(r.cycle_id, (c = { before: null, after: null, at: r.run_at }));
    if (r.stage === "before_sleep") c.before = r;
    else c.after = r;
    c.at = Math.max(c.at, r.run_at);
  }
  for (const [cycle, c] of cycles) out.push({ kind: "cycle", cycle, ...c });
  return out.sort((a, b) => b.at - a.at);
}

export interface QueryDelta {
  query_id: number;
  query: string;
  k: number;
  before: number | null;
  after: number | null;
  ndcgBefore: number | null;
  ndcgAfter: number | null;
}

/**
 * Each query's R@k and NDCG@k before and after: from two runs (a cycle's), or from one
 * run and the previous results it carries (`before` null).
 */
export function queryDeltas(before: GoldenRun | null, after: GoldenRun | null): QueryDelta[] {
  const rows = new Map<number, QueryDelta>();
  const row = (id: number, query: string, k: number) => {
    let r = rows.get(id);
    if (!r) rows.set(id, (r = { query_id: id, query, k, before: null, after: null, ndcgBefore: null, ndcgAfter: null }));
    return r;
  };
  for (const o of before?.outcomes ?? []) {
    const r = row(o.query_id, o.query, o.k);
    r.before = o.recall;
    r.ndcgBefore = o.ndcg;
  }
  for (const o of after?.outcomes ?? []) {
    const r = row(o.query_id, o.query, o.k);
    r.after = o.recall;
    r.ndcgAfter = o.ndcg;
    if (!before) {
      r.before = o.previous_recall;
      r.ndcgBefore = o.previous_ndcg;
    }
  }
  return [...rows.values()].sort((a, b) => a.query_id - b.query_id);
}

/**
 * A change of a score as text: "0.50 → 0.75 (+0.25)"; the score alone when it did not
 * change or has nothing before it; "0.50 → —" when the query has no result after.
 */
export function fmtChange(before: number | null, after: number | null): string {
  const f = (x: number | null) => (x === null ? "—" : x.toFixed(2));
  if (before === null) return f(after);
  if (after === null) return `${f(before)} → —`;
  const d = after - before;
  if (Math.abs(d) < 0.005) return f(after);
  return `${f(before)} → ${f(after)} (${d > 0 ? "+" : "−"}${Math.abs(d).toFixed(2)})`;
}

export type LedgerMetric = "total_ms" | "count" | "tokens" | "llm_calls" | "items";

export const METRIC_LABEL: Record<LedgerMetric, string> = {
  total_ms: "time spent",
  count: "operations",
  items: "items",
  llm_calls: "LLM calls",
  tokens: "tokens",
};

/** The ledger's hourly totals of one metric: a column per hour, a row per operation. */
export interface HourSeries {
  /** Start of each hour (Unix ms), oldest first, every hour of the window. */
  hours: number[];
  /** Operations, largest total first; beyond `maxOps`, the rest are summed as "other". */
  ops: string[];
  /** values[op][hour]. */
  values: number[][];
  /** The largest stacked hour. */
  max: number;
}

const HOUR = 3_600_000;

export function hourlySeries(rows: LedgerSummary[], since: number, until: number, metric: LedgerMetric, maxOps = 6): HourSeries {
  const first = Math.floor(since / HOUR) * HOUR;
  const hours: number[] = [];
  for (let t = first; t <= until; t += HOUR) hours.push(t);
  const totals = new Map<string, number>();
  for (const r of rows) totals.set(r.op ?? "?", (totals.get(r.op ?? "?") ?? 0) + r[metric]);
  const ranked = [...totals.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([op]) => op);
  const ops = ranked.length > maxOps ? [...ranked.slice(0, maxOps - 1), "other"] : ranked;
  const values = ops.map(() => hours.map(() => 0));
  for (const r of rows) {
    if (r.period_start === null) continue;
    const h = Math.round((r.period_start - first) / HOUR);
    if (h < 0 || h >= hours.length) continue;
    let o = ops.indexOf(r.op ?? "?");
    if (o < 0) o = ops.indexOf("other");
    if (o < 0) continue;
    values[o][h] += r[metric];
  }
  let max = 0;
  for (let h = 0; h < hours.length; h++) max = Math.max(max, values.reduce((s, v) => s + v[h], 0));
  return { hours, ops, values, max };
}

/** A duration for people: "0.42 ms", "12.3 ms", "1.25 s", "2 min 5 s", "3 h 10 min". */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(2)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** A metric's value as the chart's axis and the tables show it. */
export function fmtMetric(metric: LedgerMetric, v: number): string {
  return metric === "total_ms" ? fmtMs(v) : Math.round(v).toLocaleString("en-US");
}

/// What the curation bar's buttons act on: "This memory:", "3 selected:", or, past the
/// engine's limit per action, how many of the selection they take.
export function selectionLabel(acted: number, selected: number): string {
  const n = (x: number) => x.toLocaleString("en-US");
  if (acted <= 1 && selected <= 1) return "This memory:";
  if (selected > acted) return `${n(selected)} selected; actions take the first ${n(acted)} by id:`;
  return `${n(acted)} selected:`;
}
