import { describe, expect, it } from "vitest";
import { listWindow, MAX_SCROLL_PX, ROW } from "./virtual";

const VIEW = 600;

/// The rows whose pixels intersect the viewport, as drawn by a window.
function visibleRows(total: number, scrollTop: number): number[] {
  const w = listWindow(total, scrollTop, VIEW);
  const rows: number[] = [];
  for (let j = 0; j < w.count; j++) {
    const top = w.offset + j * ROW;
    if (top + ROW > scrollTop && top < scrollTop + VIEW) rows.push(w.first + j);
  }
  return rows;
}

describe("listWindow", () => {
  it("draws the first rows at the top, unscaled for a short list", () => {
    const w = listWindow(1000, 0, VIEW);
    expect(w).toMatchObject({ height: 1000 * ROW, first: 0, offset: 0 });
    expect(visibleRows(1000, 0)[0]).toBe(0);
  });

  it("moves one row per row height scrolled when unscaled", () => {
    expect(visibleRows(100_000, 10 * ROW)[0]).toBe(10);
    expect(visibleRows(100_000, 11 * ROW)[0]).toBe(11);
  });

  it("reaches the last of 1M rows at the bottom of the scaled scrollbar", () => {
    const total = 1_000_000;
    const w = listWindow(total, 0, VIEW);
    expect(w.height).toBe(MAX_SCROLL_PX);
    const bottom = MAX_SCROLL_PX - VIEW;
    const rows = visibleRows(total, bottom);
    expect(rows[rows.length - 1]).toBe(total - 1);
    // The last row ends at the bottom edge of the viewport.
    const end = listWindow(total, bottom, VIEW);
    expect(end.offset + (total - 1 - end.first) * ROW + ROW).toBeCloseTo(bottom + VIEW, 6);
    expect(end.first + end.count).toBe(total);
  });

  it("maps the scaled scrollbar's middle to the middle of 1M rows, with no gap between rows", () => {
    const total = 1_000_000;
    const rows = visibleRows(total, (MAX_SCROLL_PX - VIEW) / 2);
    expect(Math.abs(rows[0] - total / 2)).toBeLessThan(VIEW / ROW + 1);
    expect(rows.length).toBeGreaterThanOrEqual(Math.floor(VIEW / ROW));
    rows.forEach((r, i) => expect(r).toBe(rows[0] + i));
  });

  it("draws nothing for an empty list", () => {
    expect(listWindow(0, 0, VIEW)).toMatchObject({ height: 0, count: 0 });
  });
});
