//! Per-thread visited marks for graph searches (Somna's patch).
//!
//! A search marks each point it reaches by writing the search's epoch into the slot of the
//! point's dense rank, so "seen already?" is one array read instead of a hash-map probe, and
//! starting a search clears nothing: it only takes the next epoch. Each thread keeps one
//! list, reused by every search it runs (hnswlib's `VisitedListPool` does the same).

use std::cell::RefCell;

/// Marks of the points one search has reached.
pub(crate) struct Visited {
    marks: Vec<u32>,
    epoch: u32,
}

impl Visited {
    fn new() -> Self {
        Visited {
            marks: Vec::new(),
            epoch: 0,
        }
    }

    /// Starts a new search over points of rank below `capacity` (more are accepted).
    fn start(&mut self, capacity: usize) {
        if self.marks.len() < capacity {
            self.marks.resize(capacity, 0);
        }
        if self.epoch == u32::MAX {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
    }

    /// Marks `rank`; true when it was not marked yet in this search.
    #[inline]
    pub(crate) fn insert(&mut self, rank: usize) -> bool {
        if rank >= self.marks.len() {
            // A point inserted by another thread after this search started.
            self.marks.resize((rank + 1).max(self.marks.len() * 2), 0);
        }
        let mark = &mut self.marks[rank];
        if *mark == self.epoch {
            false
        } else {
            *mark = self.epoch;
            true
        }
    }
}

thread_local! {
    static VISITED: RefCell<Visited> = RefCell::new(Visited::new());
}

/// Runs `f` with this thread's visited list, started for a new search.
pub(crate) fn with_visited<R>(capacity: usize, f: impl FnOnce(&mut Visited) -> R) -> R {
    VISITED.with(|cell| match cell.try_borrow_mut() {
        Ok(mut visited) => {
            visited.start(capacity);
            f(&mut visited)
        }
        // A search started from inside another on this thread: give it its own list.
        Err(_) => {
            let mut visited = Visited::new();
            visited.start(capacity);
            f(&mut visited)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_new_once_per_search() {
        with_visited(4, |v| {
            assert!(v.insert(2));
            assert!(!v.insert(2));
            assert!(v.insert(3));
        });
        with_visited(4, |v| assert!(v.insert(2)));
    }

    #[test]
    fn ranks_beyond_the_capacity_grow_the_list() {
        with_visited(2, |v| {
            assert!(v.insert(100));
            assert!(!v.insert(100));
            assert!(v.insert(1));
        });
    }

    #[test]
    fn epochs_wrap_without_stale_marks() {
        let mut v = Visited::new();
        v.start(3);
        assert!(v.insert(1));
        v.epoch = u32::MAX - 1;
        v.start(3);
        v.marks[2] = u32::MAX;
        v.start(3); // wraps: every mark cleared
        assert_eq!(v.epoch, 1);
        assert!(v.insert(2));
        assert!(v.insert(1));
    }
}
