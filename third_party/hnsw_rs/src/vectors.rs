//! Each point and its vector by rank (Somna's patch).
//!
//! A neighbour entry is a rank and a distance (8 bytes), so a search reaches the
//! neighbour's vector, and an insertion the neighbour's point, through this table: one table
//! read (an entry of 32 bytes a point, a small fraction of the points' memory, so mostly in
//! cache) instead of a read of the point's struct somewhere on the heap. The table is
//! append-only and filled in rank order, as points are created; lookups take no lock while
//! other threads insert.

use std::sync::Arc;

use crate::hnsw::Point;

/// One point and the address of its vector.
struct Slot<'b, T: Clone + Send + Sync> {
    point: *const Point<'b, T>,
    vector: *const [T],
}

// SAFETY: a slot is a shared view of a point and its vector, which are only read through
// it; sending or sharing it between threads is sharing `&Point` and `&[T]`, which
// `Point: Sync` (its neighbour lists sit behind a lock) and `T: Sync` allow.
unsafe impl<T: Clone + Send + Sync> Send for Slot<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Clone + Send + Sync> Sync for Slot<'_, T> {}

/// The points of an index and their vectors, by rank.
pub(crate) struct RankTable<'b, T: Clone + Send + Sync> {
    /// (boxed: the table's head holds its bucket pointers inline, 500 bytes)
    slots: Box<boxcar::Vec<Slot<'b, T>>>,
}

impl<'b, T: Clone + Send + Sync> RankTable<'b, T> {
    pub(crate) fn new() -> Self {
        RankTable {
            slots: Box::new(boxcar::Vec::new()),
        }
    }

    /// Records `point`, whose rank must be the next one.
    ///
    /// # Safety
    /// `point` must stay alive (another `Arc` to it held), unmoved and its vector unchanged
    /// for as long as the table lives: a point the same index holds until it is dropped.
    pub(crate) unsafe fn push(&self, point: &Arc<Point<'b, T>>) {
        let slot = self.slots.push(Slot {
            point: Arc::as_ptr(point),
            vector: point.get_v() as *const [T],
        });
        assert_eq!(slot, point.rank, "points are recorded in rank order");
    }

    /// The point of rank `rank` and its vector, if recorded.
    #[inline]
    pub(crate) fn get(&self, rank: usize) -> Option<(&Point<'b, T>, &[T])> {
        // SAFETY: by `push`'s contract the point and its vector outlive the table, hence
        // `&self`.
        self.slots
            .get(rank)
            .map(|s| unsafe { (&*s.point, &*s.vector) })
    }

    /// The vector of the point of rank `rank`, if recorded.
    #[cfg(test)]
    pub(crate) fn vector(&self, rank: usize) -> Option<&[T]> {
        // SAFETY: by `push`'s contract the vector outlives the table, hence `&self`.
        self.slots.get(rank).map(|s| unsafe { &*s.vector })
    }

    /// Another `Arc` of the point of rank `rank`, if recorded.
    pub(crate) fn arc(&self, rank: usize) -> Option<Arc<Point<'b, T>>> {
        self.slots.get(rank).map(|s| {
            // SAFETY: `s.point` came from `Arc::as_ptr` of a point another `Arc` keeps
            // alive while the table lives (`push`'s contract), so one more may be counted.
            unsafe {
                Arc::increment_strong_count(s.point);
                Arc::from_raw(s.point)
            }
        })
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hnsw::PointId;

    fn point(v: Vec<f32>, rank: usize) -> Arc<Point<'static, f32>> {
        Arc::new(Point::new(v, 10 + rank, PointId(0, rank as i32), rank))
    }

    #[test]
    fn points_and_vectors_come_back_by_rank() {
        let (a, b) = (point(vec![1.0, 2.0], 0), point(vec![3.0, 4.0], 1));
        let table = RankTable::new();
        // SAFETY: `a` and `b` outlive `table`.
        unsafe {
            table.push(&a);
            table.push(&b);
        }
        assert_eq!(table.vector(0), Some(&[1.0, 2.0][..]));
        assert_eq!(table.vector(1), Some(&[3.0, 4.0][..]));
        assert!(std::ptr::eq(table.get(1).unwrap().0, Arc::as_ptr(&b)));
        assert_eq!(table.vector(2), None);
        assert!(table.get(2).is_none());
        assert_eq!(table.len(), 2);
        let again = table.arc(0).unwrap();
        assert_eq!(again.get_origin_id(), 10);
        assert_eq!(Arc::strong_count(&a), 2);
        drop(again);
        assert_eq!(Arc::strong_count(&a), 1);
    }

    #[test]
    #[should_panic(expected = "rank order")]
    fn a_rank_out_of_order_is_refused() {
        let a = point(vec![1.0], 1);
        let table = RankTable::new();
        // SAFETY: `a` outlives `table`.
        unsafe { table.push(&a) };
    }
}
