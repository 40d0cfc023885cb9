//! A search over the store as a sleep cycle would leave it (the what-if simulator): some
//! memories forgotten (hidden, as forgotten memories are), others with another lifecycle
//! state or importance. Every other memory is unchanged, so the store and its index answer
//! for it. Nothing is written.
//!
//! A simulation ranks the same queries over two overlays (the saved settings' and the
//! proposed ones'). What the store answers before an overlay filters it (its own
//! visibility, lexical matches, dated memories) is the same for both, so it is read once
//! per simulation and kept in [`Reads`]; each overlay's visibility is kept in its own.

use super::sources::{Allowed, Sources};
use crate::index::SearchPath;
use crate::lang::time::DayRange;
use crate::memory::{Memory, State};
use crate::store::MemoryFilter;
use crate::Result;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The predicted changes a search sees.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlay {
    /// Memories forgotten by then: no search returns them.
    pub hidden: HashSet<i64>,
    /// Memories whose state or importance would change: (state, importance).
    pub fields: HashMap<i64, (State, f64)>,
}

/// A lexical question: the query, the filter (as JSON) and how many matches.
type LexicalKey = (String, String, usize);
/// A vector question: the vector's bits, how many, and which visibility ([`which`]).
type NearestKey = (Vec<u32>, usize, u64);
/// Its answer: (id, cosine) best first, and how it was found.
type Nearest = (Vec<(i64, f32)>, SearchPath);

/// Names a visibility for [`NearestKey`]: a kept set by its address (kept, so alive and
/// unique for the simulation), an explicit list by a hash of its ids.
fn which(allowed: &Allowed) -> u64 {
    use std::hash::{Hash, Hasher};
    match allowed {
        Allowed::All => 0,
        Allowed::Except(set) => Arc::as_ptr(set) as usize as u64,
        Allowed::Only { ids, .. } => {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            ids.hash(&mut h);
            h.finish() | 1 << 63
        }
    }
}

/// Answers kept for the searches of one simulation, by filter (as JSON) and question.
#[derive(Default)]
pub struct Reads {
    allowed: Mutex<HashMap<String, Allowed>>,
    lexical: Mutex<HashMap<LexicalKey, Vec<(i64, f64)>>>,
    occurred: Mutex<HashMap<(DayRange, String, usize), Vec<i64>>>,
    nearest: Mutex<HashMap<NearestKey, Nearest>>,
}

fn key(filter: &MemoryFilter) -> String {
    serde_json::to_string(filter).unwrap_or_default()
}

/// The kept answer under `k`, or `read`'s (then kept). Two threads may read the same
/// answer at once; the first one kept is the one both return, so a visibility keeps one
/// address for [`which`] while it is in use.
fn kept<K: std::hash::Hash + Eq, V: Clone>(
    map: &Mutex<HashMap<K, V>>,
    k: K,
    read: impl FnOnce() -> Result<V>,
) -> Result<V> {
    if let Some(v) = map.lock().unwrap_or_else(|p| p.into_inner()).get(&k) {
        return Ok(v.clone());
    }
    let v = read()?;
    Ok(map
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(k)
        .or_insert(v)
        .clone())
}

/// `inner` with an [`Overlay`] over it. `shared` keeps the store's answers for every
/// overlay of a simulation, `own` this overlay's visibility and nearest neighbours (two
/// sides with equal overlays, a change of weights only, can share one `own`).
pub struct OverlaySources<'a, S: Sources> {
    pub inner: S,
    pub overlay: &'a Overlay,
    pub shared: &'a Reads,
    pub own: &'a Reads,
}

impl<S: Sources> OverlaySources<'_, S> {
    fn shown(&self, id: i64) -> bool {
        !self.overlay.hidden.contains(&id)
    }

    /// The store's visibility under `filter` less what the overlay hides.
    fn overlaid(&self, filter: &MemoryFilter) -> Result<Allowed> {
        let hidden = &self.overlay.hidden;
        // A filter naming states loses the memories whose predicted state it does not name.
        let left_state = |id: &i64| {
            !filter.states.is_empty()
                && self
                    .overlay
                    .fields
                    .get(id)
                    .is_some_and(|(s, _)| !filter.states.contains(s))
        };
        let base = kept(&self.shared.allowed, key(filter), || {
            self.inner.allowed(filter)
        })?;
        Ok(match base {
            Allowed::All if hidden.is_empty() => Allowed::All,
            Allowed::All => Allowed::Except(Arc::new(hidden.clone())),
            Allowed::Except(h) => {
                Allowed::Except(Arc::new(h.iter().chain(hidden).copied().collect()))
            }
            Allowed::Only { ids, .. } => {
                let ids: Vec<i64> = ids
                    .into_iter()
                    .filter(|i| !hidden.contains(i) && !left_state(i))
                    .collect();
                Allowed::Only {
                    set: ids.iter().copied().collect(),
                    ids,
                }
            }
        })
    }
}

impl<S: Sources> Sources for OverlaySources<'_, S> {
    fn allowed(&self, filter: &MemoryFilter) -> Result<Allowed> {
        kept(&self.own.allowed, key(filter), || self.overlaid(filter))
    }

    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        allowed: &Allowed,
    ) -> Result<(Vec<(i64, f32)>, SearchPath)> {
        let key = (
            vector.iter().map(|x| x.to_bits()).collect(),
            k,
            which(allowed),
        );
        let lock = || self.own.nearest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = lock().get(&key) {
            return Ok(found.clone());
        }
        let found = self.inner.nearest(vector, k, allowed)?;
        lock().insert(key, found.clone());
        Ok(found)
    }

    fn similarity(&self, vector: &[f32], id: i64) -> Option<f32> {
        self.inner.similarity(vector, id)
    }

    fn vector(&self, id: i64) -> Option<Vec<f32>> {
        self.inner.vector(id)
    }

    fn prefetch_vectors(&self, ids: &[i64]) -> Result<()> {
        self.inner.prefetch_vectors(ids)
    }

    fn lexical(&self, query: &str, filter: &MemoryFilter, limit: usize) -> Result<Vec<(i64, f64)>> {
        let wider = limit + self.overlay.hidden.len().min(limit);
        let k = (query.to_string(), key(filter), wider);
        Ok(kept(&self.shared.lexical, k, || {
            self.inner.lexical(query, filter, wider)
        })?
        .into_iter()
        .filter(|(id, _)| self.shown(*id))
        .take(limit)
        .collect())
    }

    fn causal(&self, seeds: &[i64], depth: usize) -> Result<Vec<(i64, usize)>> {
        Ok(self
            .inner
            .causal(seeds, depth)?
            .into_iter()
            .filter(|(id, _)| self.shown(*id))
            .collect())
    }

    fn similar(&self, id: i64) -> Result<Vec<(i64, f64)>> {
        Ok(self
            .inner
            .similar(id)?
            .into_iter()
            .filter(|(n, _)| self.shown(*n))
            .collect())
    }

    fn adjacent(&self, ids: &[i64]) -> Result<HashMap<i64, [Option<i64>; 2]>> {
        let mut out = self.inner.adjacent(ids)?;
        for pair in out.values_mut() {
            for side in pair.iter_mut() {
                if side.is_some_and(|n| !self.shown(n)) {
                    *side = None;
                }
            }
        }
        Ok(out)
    }

    fn memories(&self, ids: &[i64]) -> Result<Vec<Memory>> {
        let mut out = self.inner.memories(ids)?;
        for m in &mut out {
            if let Some((state, importance)) = self.overlay.fields.get(&m.id) {
                m.state = *state;
                m.importance = *importance;
            }
        }
        Ok(out)
    }

    fn occurred_in(&self, days: DayRange, filter: &MemoryFilter, limit: usize) -> Result<Vec<i64>> {
        let wider = limit + self.overlay.hidden.len().min(limit);
        Ok(kept(&self.shared.occurred, (days, key(filter), wider), || {
            self.inner.occurred_in(days, filter, wider)
        })?
        .into_iter()
        .filter(|id| self.shown(*id))
        .take(limit)
        .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::fixture::{memory, MapSources};

    #[test]
    fn hidden_memories_leave_every_source_and_fields_are_overridden() {
        let mut inner = MapSources::default()
            .with(memory(1, "one", "Ann"), vec![1.0, 0.0])
            .with(memory(2, "two", "Ann"), vec![0.0, 1.0]);
        inner.bm25 = HashMap::from([(1, 2.0), (2, 3.0)]);
        inner.adjacent = HashMap::from([(1, [None, Some(2)])]);
        let overlay = Overlay {
            hidden: HashSet::from([2]),
            fields: HashMap::from([(1, (State::Archived, 0.11))]),
        };
        let sources = OverlaySources {
            inner,
            overlay: &overlay,
            shared: &Reads::default(),
            own: &Reads::default(),
        };
        let all = sources.allowed(&MemoryFilter::default()).unwrap();
        assert!(!all.allows(2) && all.allows(1));
        let lexical = sources
            .lexical("one two", &MemoryFilter::default(), 10)
            .unwrap();
        assert_eq!(lexical.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1]);
        assert_eq!(sources.adjacent(&[1]).unwrap()[&1], [None, None]);
        let ms = sources.memories(&[1]).unwrap();
        assert_eq!((ms[0].state, ms[0].importance), (State::Archived, 0.11));
    }

    #[test]
    fn two_overlays_sharing_the_stores_answers_each_filter_them_their_own_way() {
        let mut inner = MapSources::default()
            .with(memory(1, "one", "Ann"), vec![1.0, 0.0])
            .with(memory(2, "two", "Ann"), vec![0.0, 1.0]);
        inner.bm25 = HashMap::from([(1, 2.0), (2, 3.0)]);
        let (hide_1, hide_2) = (
            Overlay {
                hidden: HashSet::from([1]),
                ..Overlay::default()
            },
            Overlay {
                hidden: HashSet::from([2]),
                ..Overlay::default()
            },
        );
        let shared = Reads::default();
        let (own_1, own_2) = (Reads::default(), Reads::default());
        let side = |overlay, own| OverlaySources {
            inner: inner.clone(),
            overlay,
            shared: &shared,
            own,
        };
        let (a, b) = (side(&hide_1, &own_1), side(&hide_2, &own_2));
        let all = MemoryFilter::default();
        let ids = |s: &OverlaySources<'_, MapSources>| -> Vec<i64> {
            s.lexical("one two", &all, 10)
                .unwrap()
                .iter()
                .map(|h| h.0)
                .collect()
        };
        // Asked twice each: the second answers come from what was kept.
        for _ in 0..2 {
            assert_eq!(ids(&a), vec![2]);
            assert_eq!(ids(&b), vec![1]);
            let (va, vb) = (a.allowed(&all).unwrap(), b.allowed(&all).unwrap());
            assert!(!va.allows(1) && va.allows(2));
            assert!(vb.allows(1) && !vb.allows(2));
        }
        assert_eq!(shared.lexical.lock().unwrap().len(), 1);
        // Nearest neighbours are kept per overlay, for the visibility they were asked under.
        for _ in 0..2 {
            let va = a.allowed(&all).unwrap();
            assert_eq!(
                a.nearest(&[1.0, 0.0], 2, &va)
                    .unwrap()
                    .0
                    .iter()
                    .map(|h| h.0)
                    .collect::<Vec<_>>(),
                vec![2]
            );
        }
        assert_eq!(own_1.nearest.lock().unwrap().len(), 1);
        assert!(own_2.nearest.lock().unwrap().is_empty());
    }
}
