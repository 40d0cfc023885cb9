//! Where a search's candidates come from. The gather stage asks only these questions; the
//! store answers them in SQL, and the nearest neighbours come from the engine's HNSW index
//! on SQLite and from pgvector's HNSW index in the database on Postgres.

use crate::index::{SearchPath, VectorIndex};
use crate::lang::time::DayRange;
use crate::memory::{LinkKind, Memory, State};
use crate::store::{MemoryFilter, Superseded, Tx, VectorScope};
use crate::Result;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Which memories a search may return.
#[derive(Debug, Clone)]
pub enum Allowed {
    /// The default visibility, nothing hidden.
    All,
    /// The default visibility minus these (forgotten) memories; deleted ones are not indexed.
    /// Shared, so a set kept for many searches (the what-if simulator's) is not copied.
    Except(Arc<HashSet<i64>>),
    /// Exactly these (an explicit filter), listed for an exact scan when few.
    Only { ids: Vec<i64>, set: HashSet<i64> },
}

impl Allowed {
    pub fn allows(&self, id: i64) -> bool {
        match self {
            Allowed::All => true,
            Allowed::Except(s) => !s.contains(&id),
            Allowed::Only { set, .. } => set.contains(&id),
        }
    }

    /// The explicit id list, if the filter named one.
    pub fn scope(&self) -> Option<&[i64]> {
        match self {
            Allowed::Only { ids, .. } => Some(ids),
            _ => None,
        }
    }
}

/// The candidate sources of a search, read-only.
pub trait Sources {
    /// The memories `filter` lets a search return.
    fn allowed(&self, filter: &MemoryFilter) -> Result<Allowed>;
    /// The `k` nearest memories to `vector` among `allowed`, best first, as (id, cosine).
    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        allowed: &Allowed,
    ) -> Result<(Vec<(i64, f32)>, SearchPath)>;
    /// Cosine similarity of `vector` to memory `id`'s vector, if it has one.
    fn similarity(&self, vector: &[f32], id: i64) -> Option<f32>;
    /// Memory `id`'s vector, if it has one.
    fn vector(&self, id: i64) -> Option<Vec<f32>>;
    /// Reads in one go the vectors of `ids` that [`Sources::similarity`] and
    /// [`Sources::vector`] are about to be asked for, where they would otherwise be read one
    /// by one (a Postgres store whose process has not read every vector).
    fn prefetch_vectors(&self, _ids: &[i64]) -> Result<()> {
        Ok(())
    }
    /// BM25 matches of `query` among memories passing `filter`, best first, (id, score > 0).
    fn lexical(&self, query: &str, filter: &MemoryFilter, limit: usize) -> Result<Vec<(i64, f64)>>;
    /// (id, depth) of memories within `depth` causal/derived hops of `seeds`.
    fn causal(&self, seeds: &[i64], depth: usize) -> Result<Vec<(i64, usize)>>;
    /// Memories linked to `id` by similarity, with the link's score.
    fn similar(&self, id: i64) -> Result<Vec<(i64, f64)>>;
    /// The episodes said just before and just after each of `ids` in its conversation,
    /// by id.
    fn adjacent(&self, ids: &[i64]) -> Result<HashMap<i64, [Option<i64>; 2]>>;
    /// The memories with these ids (missing ones left out).
    fn memories(&self, ids: &[i64]) -> Result<Vec<Memory>>;
    /// At most `limit` memories passing `filter` that happened within `days`, the most
    /// important first.
    fn occurred_in(&self, days: DayRange, filter: &MemoryFilter, limit: usize) -> Result<Vec<i64>>;
}

/// Unix ms of the first and last instant of `days` (UTC).
pub fn day_span_ms(days: DayRange) -> (i64, i64) {
    let ms = |d: chrono::NaiveDate| {
        d.and_hms_opt(0, 0, 0)
            .map_or(0, |t| t.and_utc().timestamp_millis())
    };
    (ms(days.start), ms(days.end) + 86_400_000 - 1)
}

/// The store read in one transaction, with the engine's vector index beside it (on
/// Postgres the index serves vectors by id; neighbours come from the database).
pub struct StoreSources<'a> {
    pub read: &'a Tx<'a>,
    pub index: &'a VectorIndex,
    /// Vectors read from the database for this search (see [`Sources::prefetch_vectors`]).
    fetched: RefCell<HashMap<i64, Vec<f32>>>,
}

impl<'a> StoreSources<'a> {
    pub fn new(read: &'a Tx<'a>, index: &'a VectorIndex) -> Self {
        Self {
            read,
            index,
            fetched: RefCell::default(),
        }
    }
}

impl Sources for StoreSources<'_> {
    fn allowed(&self, filter: &MemoryFilter) -> Result<Allowed> {
        if filter.is_default_visibility() {
            // Deleted memories are not indexed; forgotten ones and superseded facts are.
            let mut hidden: HashSet<i64> = self
                .read
                .filter_ids(&MemoryFilter {
                    states: vec![State::Forgotten],
                    include_deleted: true,
                    superseded: Superseded::Include,
                    ..Default::default()
                })?
                .into_iter()
                .collect();
            hidden.extend(self.read.filter_ids(&MemoryFilter {
                states: State::ALL.to_vec(),
                include_deleted: true,
                superseded: Superseded::Only,
                ..Default::default()
            })?);
            return Ok(if hidden.is_empty() {
                Allowed::All
            } else {
                Allowed::Except(Arc::new(hidden))
            });
        }
        let ids = self.read.filter_ids(filter)?;
        Ok(Allowed::Only {
            set: ids.iter().copied().collect(),
            ids,
        })
    }

    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        allowed: &Allowed,
    ) -> Result<(Vec<(i64, f32)>, SearchPath)> {
        if self.read.vectors_in_database() {
            let scope = match allowed {
                Allowed::All => VectorScope::All,
                Allowed::Except(hidden) => VectorScope::Except(hidden),
                Allowed::Only { ids, .. } => VectorScope::Only(ids),
            };
            let ef = self.index.params().ef_search.max(2 * k);
            let (hits, exact) =
                self.read
                    .nearest_in_database(vector, k, ef, scope, crate::index::EXACT_LIMIT)?;
            let path = if exact {
                SearchPath::Exact
            } else {
                SearchPath::Pgvector
            };
            return Ok((hits, path));
        }
        let allow = |id: i64| allowed.allows(id);
        let filter: Option<&dyn Fn(i64) -> bool> = match allowed {
            Allowed::All => None,
            _ => Some(&allow),
        };
        Ok(self.index.search(vector, k, filter, allowed.scope()))
    }

    fn similarity(&self, vector: &[f32], id: i64) -> Option<f32> {
        if let Some(s) = self.index.similarity(vector, id) {
            return Some(s);
        }
        if let Some(v) = self.fetched.borrow().get(&id) {
            return Some(crate::embed::dot(vector, v));
        }
        self.read
            .vectors_in_database()
            .then(|| self.vector(id))
            .flatten()
            .map(|v| crate::embed::dot(vector, &v))
    }

    fn vector(&self, id: i64) -> Option<Vec<f32>> {
        if let Some(v) = self.index.vector(id) {
            return Some(v.to_vec());
        }
        if let Some(v) = self.fetched.borrow().get(&id) {
            return Some(v.clone());
        }
        // A process that has not read every vector, or another process's memory this one
        // has not caught up with yet.
        if !self.read.vectors_in_database() {
            return None;
        }
        let v = self.read.embedding_of(id).ok().flatten()?;
        self.fetched.borrow_mut().insert(id, v.clone());
        Some(v)
    }

    fn prefetch_vectors(&self, ids: &[i64]) -> Result<()> {
        if !self.read.vectors_in_database() {
            return Ok(());
        }
        let missing: Vec<i64> = {
            let fetched = self.fetched.borrow();
            ids.iter()
                .copied()
                .filter(|&id| self.index.vector(id).is_none() && !fetched.contains_key(&id))
                .collect()
        };
        let found = self.read.embeddings_of(&missing)?;
        self.fetched.borrow_mut().extend(found);
        Ok(())
    }

    fn lexical(&self, query: &str, filter: &MemoryFilter, limit: usize) -> Result<Vec<(i64, f64)>> {
        self.read.lexical_search(query, filter, limit)
    }

    fn causal(&self, seeds: &[i64], depth: usize) -> Result<Vec<(i64, usize)>> {
        super::causal::expand(self.read, seeds, depth)
    }

    fn similar(&self, id: i64) -> Result<Vec<(i64, f64)>> {
        self.read.neighbours(id, &[LinkKind::Similar])
    }

    fn adjacent(&self, ids: &[i64]) -> Result<HashMap<i64, [Option<i64>; 2]>> {
        self.read.adjacent_episodes(ids)
    }

    fn memories(&self, ids: &[i64]) -> Result<Vec<Memory>> {
        self.read.get_memories(ids)
    }

    fn occurred_in(&self, days: DayRange, filter: &MemoryFilter, limit: usize) -> Result<Vec<i64>> {
        let (from, to) = day_span_ms(days);
        self.read.occurred_between(filter, from, to, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_follows_its_rule_and_only_an_explicit_filter_has_a_scope() {
        assert!(Allowed::All.allows(7) && Allowed::All.scope().is_none());
        let except = Allowed::Except(Arc::new(HashSet::from([7])));
        assert!(!except.allows(7) && except.allows(8) && except.scope().is_none());
        let only = Allowed::Only {
            ids: vec![7],
            set: HashSet::from([7]),
        };
        assert!(only.allows(7) && !only.allows(8));
        assert_eq!(only.scope(), Some(&[7][..]));
    }
}
