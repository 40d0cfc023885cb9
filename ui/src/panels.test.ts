import { describe, expect, it } from "vitest";
import type { GoldenOutcome, GoldenRun, LedgerSummary, Weights } from "./bindings";
import { fmtChange, fmtMs, groupRuns, hourlySeries, normaliseWeights, queryDeltas, sameWeights, selectionLabel, weightSum } from "./panels";

const w = (semantic: number, lexical: number, recency = 0, actor = 0, spatial = 0, usage = 0): Weights =>
  ({ semantic, lexical, recency, actor, spatial, usage });

describe("normaliseWeights", () => {
  it("scales weights to sum 1 and keeps their proportions", () => {
    const n = normaliseWeights(w(0.6, 0.6, 0.3, 0.3, 0.1, 0.1))!;
    expect(weightSum(n)).toBeCloseTo(1, 12);
    expect(n.semantic).toBeCloseTo(0.3, 12);
    expect(n.spatial).toBeCloseTo(0.05, 12);
  });
  it("refuses a weight outside 0..1, a blank one, and all zeros", () => {
    expect(normaliseWeights(w(1.2, 0))).toBeNull();
    expect(normaliseWeights(w(-0.1, 0.5))).toBeNull();
    expect(normaliseWeights(w(Number.NaN, 0.5))).toBeNull();
    expect(normaliseWeights(w(0, 0))).toBeNull();
  });
  it("leaves weights that already sum to 1 as they are", () => {
    const d = w(0.35, 0.4, 0.1, 0.07, 0.03, 0.05);
    expect(sameWeights(normaliseWeights(d)!, d)).toBe(true);
    expect(sameWeights(d, w(0.4, 0.35, 0.1, 0.07, 0.03, 0.05))).toBe(false);
  });
});

function outcome(query_id: number, recall: number, previous: number | null = null): GoldenOutcome {
  return { query_id, query: `q${query_id}`, k: 5, expected: [1], ranked: [], recall, ndcg: recall, previous_recall: previous, previous_ndcg: previous, regressed: previous !== null && recall < previous };
}

function run(id: number, stage: string, cycle_id: number | null, outcomes: GoldenOutcome[]): GoldenRun {
  const mean = outcomes.reduce((s, o) => s + o.recall, 0) / Math.max(1, outcomes.length);
  return { id, run_at: id * 1000, stage, cycle_id, outcomes, mean_recall: mean, mean_ndcg: mean, regressions: outcomes.filter((o) => o.regressed).length };
}

describe("groupRuns", () => {
  it("puts a cycle's before and after runs together and lists the newest first", () => {
    const runs = [
      run(5, "manual", null, [outcome(1, 1)]),
      run(4, "after_sleep", 2, [outcome(1, 0.5, 1)]),
      run(3, "before_sleep", 2, [outcome(1, 1)]),
      run(1, "manual", null, [outcome(1, 1)]),
    ];
    const g = groupRuns(runs);
    expect(g.map((x) => (x.kind === "cycle" ? `cycle ${x.cycle}` : `run ${x.run.id}`))).toEqual(["run 5", "cycle 2", "run 1"]);
    const c = g[1];
    expect(c.kind === "cycle" && c.before?.id === 3 && c.after?.id === 4).toBe(true);
  });
  it("keeps a cycle whose after run is missing (the cycle failed)", () => {
    const g = groupRuns([run(3, "before_sleep", 7, [outcome(1, 1)])]);
    expect(g).toHaveLength(1);
    expect(g[0].kind === "cycle" && g[0].after === null && g[0].before?.id === 3).toBe(true);
  });
});

describe("queryDeltas", () => {
  it("compares two runs query by query", () => {
    const d = queryDeltas(run(1, "before_sleep", 1, [outcome(1, 1), outcome(2, 0.5)]), run(2, "after_sleep", 1, [outcome(1, 0.5), outcome(2, 0.5)]));
    expect(d.map((x) => [x.query_id, x.before, x.after])).toEqual([[1, 1, 0.5], [2, 0.5, 0.5]]);
  });
  it("takes the previous result a run carries when there is no run before", () => {
    const d = queryDeltas(null, run(2, "manual", null, [outcome(1, 0.5, 1), outcome(2, 1)]));
    expect(d.map((x) => [x.before, x.after])).toEqual([[1, 0.5], [null, 1]]);
  });
  it("shows a query added after the first run with nothing before it", () => {
    const d = queryDeltas(run(1, "before_sleep", 1, [outcome(1, 1)]), run(2, "after_sleep", 1, [outcome(1, 1), outcome(3, 1)]));
    expect(d.find((x) => x.query_id === 3)?.before).toBeNull();
  });
});

describe("fmtChange and fmtMs", () => {
  it("writes a change with its sign, and the score alone when nothing changed", () => {
    expect(fmtChange(0.5, 0.75)).toBe("0.50 → 0.75 (+0.25)");
    expect(fmtChange(1, 0.5)).toBe("1.00 → 0.50 (−0.50)");
    expect(fmtChange(1, 1)).toBe("1.00");
    expect(fmtChange(null, 1)).toBe("1.00");
    expect(fmtChange(1, null)).toBe("1.00 → —");
  });
  it("writes durations in the unit a person reads", () => {
    expect(fmtMs(0.4213)).toBe("0.42 ms");
    expect(fmtMs(12.34)).toBe("12.3 ms");
    expect(fmtMs(1250)).toBe("1.25 s");
    expect(fmtMs(125_000)).toBe("2 min 5 s");
    expect(fmtMs(3 * 3_600_000 + 600_000)).toBe("3 h 10 min");
  });
});

function row(op: string, hour: number, total_ms: number, count = 1): LedgerSummary {
  return { op, period_start: hour * 3_600_000, count, total_ms, mean_ms: total_ms / count, max_ms: total_ms, items: 0, llm_calls: 0, tokens: 0 };
}

describe("hourlySeries", () => {
  it("gives every hour of the window a column, empty hours included, stacked by operation", () => {
    const since = 10 * 3_600_000 + 5, until = 13 * 3_600_000 + 10;
    const s = hourlySeries([row("search", 10, 5), row("add", 10, 20), row("search", 12, 7)], since, until, "total_ms");
    expect(s.hours).toEqual([10, 11, 12, 13].map((x) => x * 3_600_000));
    expect(s.ops).toEqual(["add", "search"]);
    expect(s.values).toEqual([[20, 0, 0, 0], [5, 0, 7, 0]]);
    expect(s.max).toBe(25);
  });
  it("sums the smallest operations as other beyond the colours it has", () => {
    const rows = ["a", "b", "c", "d"].map((op, i) => row(op, 0, 10 - i));
    const s = hourlySeries(rows, 0, 1000, "total_ms", 3);
    expect(s.ops).toEqual(["a", "b", "other"]);
    expect(s.values[2][0]).toBe(8 + 7);
  });
  it("charts another metric than time, and nothing when it is zero everywhere", () => {
    expect(hourlySeries([row("search", 0, 5, 3)], 0, 1000, "count").max).toBe(3);
    const none = hourlySeries([row("search", 0, 5, 3)], 0, 1000, "tokens");
    expect(none.ops).toEqual([]);
    expect(none.max).toBe(0);
  });
});

describe("selectionLabel", () => {
  it("names one memory, a selection, and a selection past the limit per action", () => {
    expect(selectionLabel(1, 1)).toBe("This memory:");
    expect(selectionLabel(3, 3)).toBe("3 selected:");
    expect(selectionLabel(10000, 214073)).toBe("214,073 selected; actions take the first 10,000 by id:");
  });
});
