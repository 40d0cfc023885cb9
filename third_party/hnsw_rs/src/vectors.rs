//! Each point's vector by rank (Somna's patch).
//!
//! A neighbour entry carries its point's rank, so a search can reach the neighbour's vector
//! through this table without reading the point first: one table read (an entry of 24
//! bytes a point, a small fraction of the points' memory, so mostly in cache) instead of a
//! read of the point's struct somewhere on the heap. The
//! table is append-only and filled in rank order, as points are created; lookups take no
//! lock while other threads insert.

/// The address of one point's vector.
struct Slot<T>(*const [T]);

// SAFETY: a slot is a shared view of a vector that is only read; sending or sharing it
// between threads is sharing `&[T]`, which `T: Sync` allows.
unsafe impl<T: Sync> Send for Slot<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Slot<T> {}

/// The vectors of an index's points, by rank.
pub(crate) struct VectorTable<T> {
    /// (boxed: the table's head holds its bucket pointers inline, 500 bytes)
    slots: Box<boxcar::Vec<Slot<T>>>,
}

impl<T: Sync> VectorTable<T> {
    pub(crate) fn new() -> Self {
        VectorTable {
            slots: Box::new(boxcar::Vec::new()),
        }
    }

    /// Records `v` as the vector of the point of rank `rank`, the next rank.
    ///
    /// # Safety
    /// `v` must stay valid, unmoved and unchanged for as long as the table lives: the
    /// vector of a point the same index holds until it is dropped.
    pub(crate) unsafe fn push(&self, rank: usize, v: &[T]) {
        let slot = self.slots.push(Slot(v as *const [T]));
        assert_eq!(slot, rank, "points are recorded in rank order");
    }

    /// The vector of the point of rank `rank`, if recorded.
    #[inline]
    pub(crate) fn get(&self, rank: usize) -> Option<&[T]> {
        // SAFETY: by `push`'s contract the vector outlives the table, hence `&self`.
        self.slots.get(rank).map(|s| unsafe { &*s.0 })
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_by_rank() {
        let (a, b) = (vec![1.0f32, 2.0], vec![3.0f32, 4.0]);
        let table = VectorTable::new();
        // SAFETY: `a` and `b` outlive `table`.
        unsafe {
            table.push(0, &a);
            table.push(1, &b);
        }
        assert_eq!(table.get(0), Some(&a[..]));
        assert_eq!(table.get(1), Some(&b[..]));
        assert_eq!(table.get(2), None);
        assert_eq!(table.len(), 2);
    }

    #[test]
    #[should_panic(expected = "rank order")]
    fn a_rank_out_of_order_is_refused() {
        let a = vec![1.0f32];
        let table = VectorTable::new();
        // SAFETY: `a` outlives `table`.
        unsafe { table.push(1, &a) };
    }
}
