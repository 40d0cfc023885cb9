import { describe, expect, it } from "vitest";
import type { VisibilitySteps } from "./bindings";
import { countAt, statesAt } from "./timesteps";

// Memory 1: born at 10 active, cold from 20, deleted at 30. Memory 2: born at 15, archived
// from 40. Memory 4: born at 50.
const steps: VisibilitySteps = {
  ids: [1, 2, 4],
  offsets: [0, 3, 5, 6],
  at: [10, 20, 30, 15, 40, 50],
  states: [0, 2, -1, 0, 3, 0],
};

describe("statesAt", () => {
  it("gives each memory its state at the instant, -1 before its birth and while hidden", () => {
    expect([...statesAt(steps, [1, 2, 4], 5)]).toEqual([-1, -1, -1]);
    expect([...statesAt(steps, [1, 2, 4], 10)]).toEqual([0, -1, -1]);
    expect([...statesAt(steps, [1, 2, 4], 25)]).toEqual([2, 0, -1]);
    expect([...statesAt(steps, [1, 2, 4], 45)]).toEqual([-1, 3, -1]);
    expect([...statesAt(steps, [1, 2, 4], 60)]).toEqual([-1, 3, 0]);
  });

  it("counts an id the steps do not know as there, and counts what was shown", () => {
    expect([...statesAt(steps, Int32Array.from([2, 3, 4]), 20)]).toEqual([0, 0, -1]);
    expect(countAt(steps, 5)).toBe(0);
    expect(countAt(steps, 10)).toBe(1);
    expect(countAt(steps, 25)).toBe(2);
    expect(countAt(steps, 45)).toBe(1);
    expect(countAt(steps, 60)).toBe(2);
  });
});
