// A set of memory ids kept as one sorted Int32Array: a lasso over a million points selects
// hundreds of thousands of ids, which a Set<number> takes tens of milliseconds to build and
// copy; here they arrive sorted from the worker and are used as they are. Immutable: every
// change makes a new set.

export class IdSet implements Iterable<number> {
  static readonly empty = new IdSet(new Int32Array(0));

  private constructor(private readonly ids: Int32Array) {}

  /// Any ids, in any order, with repeats.
  static of(ids: Iterable<number>): IdSet {
    const a = Int32Array.from(ids).sort();
    let k = 0;
    for (let i = 0; i < a.length; i++) if (i === 0 || a[i] !== a[k - 1]) a[k++] = a[i];
    return new IdSet(k === a.length ? a : a.slice(0, k));
  }

  /// Ids already strictly ascending (not checked: the caller vouches for it).
  static fromSorted(ids: Int32Array): IdSet {
    return new IdSet(ids);
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: number): boolean {
    const a = this.ids;
    let lo = 0, hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = a[mid];
      if (v === id) return true;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /// The smallest id, or null when empty.
  first(): number | null {
    return this.ids.length ? this.ids[0] : null;
  }

  /// The ids, ascending (a view: do not write to it).
  sorted(): Int32Array {
    return this.ids;
  }

  /// At most `k` ids, ascending.
  take(k: number): number[] {
    return Array.from(this.ids.subarray(0, k));
  }

  values(): IterableIterator<number> {
    return this.ids.values();
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this.ids.values();
  }

  /// This set with `id` added if it was missing, removed if it was present.
  toggle(id: number): IdSet {
    if (this.has(id)) return new IdSet(this.ids.filter((x) => x !== id));
    return this.union(new IdSet(Int32Array.of(id)));
  }

  /// Every id in either set (a merge of the two sorted arrays).
  union(other: IdSet): IdSet {
    const a = this.ids, b = other.ids;
    if (!b.length) return this;
    if (!a.length) return other;
    const out = new Int32Array(a.length + b.length);
    let i = 0, j = 0, k = 0;
    while (i < a.length && j < b.length) {
      if (a[i] < b[j]) out[k++] = a[i++];
      else if (b[j] < a[i]) out[k++] = b[j++];
      else { out[k++] = a[i++]; j++; }
    }
    while (i < a.length) out[k++] = a[i++];
    while (j < b.length) out[k++] = b[j++];
    return new IdSet(out.slice(0, k));
  }
}
