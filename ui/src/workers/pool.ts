// Buffers kept for reuse: a worker hands back the buffers it was sent, and the next request
// copies into memory that is already mapped instead of page-faulting fresh pages in.

export class BufferPool {
  private free = new Map<number, ArrayBuffer[]>();

  take(bytes: number): ArrayBuffer {
    return this.free.get(bytes)?.pop() ?? new ArrayBuffer(bytes);
  }

  give(bufs: ArrayBuffer[]): void {
    for (const b of bufs) {
      if (b.byteLength === 0) continue;
      const list = this.free.get(b.byteLength) ?? [];
      // A request sends up to three columns of one size, and two can be in flight; more
      // buffers of a size would only hold memory.
      if (list.length < 6) list.push(b);
      this.free.set(b.byteLength, list);
    }
  }

  /// A copy of `a` in a pooled buffer.
  copy<T extends Int32Array | Uint32Array | Float32Array | Uint8Array>(a: T): T {
    const Ctor = a.constructor as new (b: ArrayBuffer, o: number, n: number) => T;
    const c = new Ctor(this.take(a.byteLength), 0, a.length);
    (c as unknown as { set(x: T): void }).set(a);
    return c;
  }
}
