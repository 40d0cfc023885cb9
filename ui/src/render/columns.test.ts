import { describe, expect, it } from "vitest";
import { TABLE_SIZE } from "../colors";
import { packColors, shownRange } from "./columns";

function table(): Float32Array {
  const t = new Float32Array(TABLE_SIZE * 3);
  for (let i = 0; i < TABLE_SIZE; i++) t.set([i / 255, 1 - i / 255, 0.5], i * 3);
  return t;
}

describe("packColors", () => {
  it("looks table rows up and writes opaque rgba bytes", () => {
    const out = new Uint8Array(8);
    packColors(new Float32Array([0, 255]), table(), false, out);
    expect([...out]).toEqual([0, 255, 128, 255, 255, 0, 128, 255]);
  });

  it("maps ramp positions to the nearest of the table's rows, clamped", () => {
    const out = new Uint8Array(12);
    packColors(new Float32Array([0.5, -3, 7]), table(), true, out);
    expect(out[0]).toBe(128);
    expect(out[4]).toBe(0);
    expect(out[8]).toBe(255);
  });

  it("gives a value outside the table (or not a number) the first row, not garbage", () => {
    const out = new Uint8Array(8);
    packColors(new Float32Array([999, Number.NaN]), table(), false, out);
    expect([...out]).toEqual([0, 255, 128, 255, 0, 255, 128, 255]);
  });
});

describe("shownRange", () => {
  it("covers the rows from the first to the last point not hidden", () => {
    expect(shownRange(new Float32Array([0, 0, 1, 0, 2, 0]))).toEqual([2, 3]);
    expect(shownRange(new Float32Array([1, 1, 1]))).toEqual([0, 3]);
  });

  it("is empty when every point is hidden", () => {
    expect(shownRange(new Float32Array([0, 0]))[1]).toBe(0);
    expect(shownRange(new Float32Array(0))).toEqual([0, 0]);
  });
});
