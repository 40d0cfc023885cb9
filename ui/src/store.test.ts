import { describe, expect, it } from "vitest";
import { parsePoints, RowIndex } from "./store";

describe("RowIndex", () => {
  it("finds every id of an ascending list and nothing else", () => {
    const ids = Int32Array.from([3, 5, 8, 13, 21, 34]);
    const index = new RowIndex(ids);
    ids.forEach((id, row) => expect(index.get(id)).toBe(row));
    for (const missing of [0, 4, 9, 22, 35, -1]) expect(index.get(missing)).toBeUndefined();
  });

  it("finds ids that are not in order", () => {
    const index = new RowIndex(Int32Array.from([9, 2, 7, 2000]));
    expect(index.get(9)).toBe(0);
    expect(index.get(7)).toBe(2);
    expect(index.get(2000)).toBe(3);
    expect(index.get(8)).toBeUndefined();
  });

  it("is empty for no points", () => {
    expect(new RowIndex(new Int32Array(0)).get(1)).toBeUndefined();
  });
});

describe("parsePoints", () => {
  it("reads the SMPA columns and indexes the ids", () => {
    const n = 2;
    const buf = new ArrayBuffer(16 + n * 24 + n * 2);
    const dv = new DataView(buf);
    "SMPA".split("").forEach((c, i) => dv.setUint8(i, c.charCodeAt(0)));
    dv.setUint32(4, n, true);
    dv.setFloat64(8, 1000, true);
    new Int32Array(buf, 16, n).set([10, 20]);
    new Int32Array(buf, 16 + 4 * n, n).set([-1, 3]);
    new Uint8Array(buf, 16 + 24 * n, n).set([1, 0]);
    new Uint8Array(buf, 16 + 25 * n, n).set([0, 2]);
    const p = parsePoints(buf);
    expect(p.n).toBe(2);
    expect(p.t0).toBe(1000);
    expect(Array.from(p.clusters)).toEqual([-1, 3]);
    expect(Array.from(p.kinds)).toEqual([1, 0]);
    expect(Array.from(p.states)).toEqual([0, 2]);
    expect(p.index.get(20)).toBe(1);
  });

  it("rejects a buffer that is not point data", () => {
    expect(() => parsePoints(new ArrayBuffer(16))).toThrow(/bad point buffer/);
  });
});
