import { describe, expect, it } from "vitest";
import { labelText, overlaps } from "./paint";

describe("graph labels", () => {
  it("cuts a long label at a word and marks the cut", () => {
    const node = { who: "Maya, Somna", label: "1 September 2026: Maya and Somna talked about marathon, lisbon and four hours" };
    const text = labelText(node, 40);
    expect(text.length).toBeLessThanOrEqual(40);
    expect(text.endsWith("…")).toBe(true);
    expect(text.startsWith("Maya, Somna: 1 September 2026")).toBe(true);
    expect(labelText({ who: null, label: "short" }, 40)).toBe("short");
  });

  it("finds labels that would cover each other", () => {
    const a = { left: 0, top: 0, w: 100, h: 18 };
    expect(overlaps(a, { left: 50, top: 10, w: 100, h: 18 })).toBe(true);
    expect(overlaps(a, { left: 0, top: 18, w: 100, h: 18 })).toBe(false);
    expect(overlaps(a, { left: 100, top: 0, w: 10, h: 18 })).toBe(false);
  });
});
