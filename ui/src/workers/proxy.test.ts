import { afterEach, describe, expect, it } from "vitest";
import { serve, transfer, WorkerError, WorkerProxy, type Method, type Port } from "./proxy";

type Echo = {
  double: Method<{ xs: Float32Array<ArrayBuffer> }, Float32Array<ArrayBuffer>>;
  wait: Method<{ ms: number; tag: string }, string>;
  count: Method<number, number, number>;
  fail: Method<string, never>;
};

const channels: MessageChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

function connect(): WorkerProxy<Echo> {
  const c = new MessageChannel();
  channels.push(c);
  serve<Echo>(c.port2 as unknown as Port, {
    double: ({ xs }) => {
      const out = xs.map((x) => 2 * x);
      return transfer(out, [out.buffer]);
    },
    wait: ({ ms, tag }) => new Promise((r) => setTimeout(() => r(tag), ms)),
    count: (n, ctx) => {
      for (let i = 1; i <= n; i++) ctx.emit(i);
      return n;
    },
    fail: (why) => {
      throw new Error(why);
    },
  });
  return new WorkerProxy<Echo>(c.port1 as unknown as Port);
}

describe("WorkerProxy and serve", () => {
  it("answers a call with the handler's response", async () => {
    const w = connect();
    const out = await w.call("double", { xs: Float32Array.from([1, 2, 3]) });
    expect(Array.from(out)).toEqual([2, 4, 6]);
  });

  it("moves the buffers it is told to transfer instead of copying them", async () => {
    const w = connect();
    const xs = Float32Array.from([1, 2]);
    const done = w.call("double", { xs }, { transfer: [xs.buffer] });
    // Transferred: the sender's view is detached at once.
    expect(xs.length).toBe(0);
    expect(Array.from(await done)).toEqual([2, 4]);
  });

  it("matches replies to calls by sequence number when they come back out of order", async () => {
    const w = connect();
    const slow = w.call("wait", { ms: 40, tag: "slow" });
    const fast = w.call("wait", { ms: 1, tag: "fast" });
    const order: string[] = [];
    await Promise.all([slow.then((t) => order.push(t)), fast.then((t) => order.push(t))]);
    expect(order).toEqual(["fast", "slow"]);
    expect(await slow).toBe("slow");
    expect(w.inFlight).toBe(0);
  });

  it("delivers a call's events to that call only, before its response", async () => {
    const w = connect();
    const a: number[] = [], b: number[] = [];
    const [ra, rb] = await Promise.all([w.call("count", 3, { onEvent: (e) => a.push(e) }), w.call("count", 2, { onEvent: (e) => b.push(e) })]);
    expect([ra, rb]).toEqual([3, 2]);
    expect(a).toEqual([1, 2, 3]);
    expect(b).toEqual([1, 2]);
  });

  it("rejects with the handler's error message when it throws", async () => {
    const w = connect();
    await expect(w.call("fail", "no such thing")).rejects.toThrow(new WorkerError("no such thing"));
    // The worker keeps answering afterwards.
    expect(Array.from(await w.call("double", { xs: Float32Array.of(5) }))).toEqual([10]);
  });

  it("rejects a method the worker does not have", async () => {
    const w = connect() as unknown as WorkerProxy<{ nope: Method<null, null> }>;
    await expect(w.call("nope", null)).rejects.toThrow(/unknown worker method nope/);
  });

  it("rejects every waiting call when the worker itself fails", async () => {
    const posted: unknown[] = [];
    const port = { onmessage: null, onerror: null as ((e: ErrorEvent) => void) | null, postMessage: (m: unknown) => posted.push(m) };
    const w = new WorkerProxy<Echo>(port);
    const a = w.call("wait", { ms: 1, tag: "a" }), b = w.call("count", 1);
    expect(posted).toHaveLength(2);
    port.onerror!({ message: "script error" } as ErrorEvent);
    await expect(a).rejects.toThrow(/the worker failed: script error/);
    await expect(b).rejects.toThrow(WorkerError);
    expect(w.inFlight).toBe(0);
  });
});
