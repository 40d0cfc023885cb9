//! A search over the store as a sleep cycle would leave it (the what-if simulator): some
//! memories forgotten (hidden, as forgotten memories are), others with another lifecycle
//! state or importance. Every other memory is unchanged, so the store and its index answer
//! for it. Nothing is written.

use super::sources::{Allowed, Sources};
use crate::index::SearchPath;
use crate::lang::time::DayRange;
use crate::memory::{Memory, State};
use crate::store::MemoryFilter;
use crate::Result;
use std::collections::{HashMap, HashSet};

/// The predicted changes a search sees.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// Memories forgotten by then: no search returns them.
    pub hidden: HashSet<i64>,
    /// Memories whose state or importance would change: (state, importance).
    pub fields: HashMap<i64, (State, f64)>,
}

/// `inner` with an [`Overlay`] over it.
pub struct OverlaySources<'a, S: Sources> {
    pub inner: S,
    pub overlay: &'a Overlay,
}

impl<S: Sources> OverlaySources<'_, S> {
    fn shown(&self, id: i64) -> bool {
        !self.overlay.hidden.contains(&id)
    }
}

impl<S: Sources> Sources for OverlaySources<'_, S> {
    fn allowed(&self, filter: &MemoryFilter) -> Result<Allowed> {
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
        Ok(match self.inner.allowed(filter)? {
            Allowed::All if hidden.is_empty() => Allowed::All,
            Allowed::All => Allowed::Except(hidden.clone()),
            Allowed::Except(h) => Allowed::Except(h.into_iter().chain(hidden.clone()).collect()),
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

    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        allowed: &Allowed,
    ) -> (Vec<(i64, f32)>, SearchPath) {
        self.inner.nearest(vector, k, allowed)
    }

    fn similarity(&self, vector: &[f32], id: i64) -> Option<f32> {
        self.inner.similarity(vector, id)
    }

    fn vector(&self, id: i64) -> Option<Vec<f32>> {
        self.inner.vector(id)
    }

    fn lexical(&self, query: &str, filter: &MemoryFilter, limit: usize) -> Result<Vec<(i64, f64)>> {
        Ok(self
            .inner
            .lexical(query, filter, limit + self.overlay.hidden.len().min(limit))?
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
        Ok(self
            .inner
            .occurred_in(days, filter, limit + self.overlay.hidden.len().min(limit))?
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
}
