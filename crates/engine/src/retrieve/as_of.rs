//! A search as of an instant: the same stages over the store as it was then. Memories that
//! changed since ([`AsOf`]'s delta) are answered as they were: their visibility and
//! fields from then, their vectors from then (re-embedded when their text changed or the
//! memory is gone now). Every other memory is unchanged, so the store and its index answer
//! for it.
//!
//! One thing is approximate: the lexical stage reads today's full-text index, so a memory
//! whose text changed since is found by its words of then only through its vector.

use super::sources::{Allowed, Sources, StoreSources};
use crate::embed::{dot, Embedder};
use crate::index::SearchPath;
use crate::memory::{embedding_text, Memory, State};
use crate::store::{MemoryFilter, Superseded};
use crate::timetravel::AsOf;
use crate::Result;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// [`StoreSources`] as of [`AsOf::at`].
pub struct AsOfSources<'a> {
    now: StoreSources<'a>,
    then: &'a AsOf,
    /// Vectors of the memories that existed then and that today's index cannot answer
    /// for (gone, deleted or forgotten now, or with another text now).
    vectors: HashMap<i64, Vec<f32>>,
    /// Those whose text then is not today's (or that are gone): today's full-text index
    /// does not know their words of then.
    retexted: HashSet<i64>,
}

impl<'a> AsOfSources<'a> {
    pub fn new(now: StoreSources<'a>, then: &'a AsOf, embedder: &dyn Embedder) -> Result<Self> {
        let today = &then.today;
        let mut vectors = HashMap::new();
        let mut retexted = HashSet::new();
        let mut to_embed: Vec<(i64, String)> = Vec::new();
        for m in then.then.values().flatten() {
            let same_text = today.get(&m.id).filter(|t| t.text == m.text);
            if same_text.is_none() {
                retexted.insert(m.id);
            }
            let indexed = same_text
                .is_some_and(|t| t.deleted_at.is_none() && t.state != State::Forgotten)
                .then(|| now.index.vector(m.id))
                .flatten();
            if indexed.is_some() {
                continue;
            }
            match same_text
                .map(|_| now.read.embedding_of(m.id))
                .transpose()?
                .flatten()
            {
                Some(v) => {
                    vectors.insert(m.id, v);
                }
                None => to_embed.push((m.id, embedding_text(m.kind, &m.text, &m.w5h1))),
            }
        }
        let texts: Vec<&str> = to_embed.iter().map(|(_, t)| t.as_str()).collect();
        if !texts.is_empty() {
            for ((id, _), v) in to_embed.iter().zip(embedder.embed(&texts)?) {
                vectors.insert(*id, v);
            }
        }
        Ok(Self {
            now,
            then,
            vectors,
            retexted,
        })
    }

    /// Memory `id` as it was, if it existed then.
    fn memory_then(&self, id: i64) -> Option<&Memory> {
        self.then.then.get(&id).and_then(Option::as_ref)
    }

    /// `allowed` without the memories whose vectors this type holds (today's index must
    /// not answer for them).
    fn without_own(&self, allowed: &Allowed) -> Allowed {
        let own = self.vectors.keys().copied();
        match allowed {
            Allowed::All => Allowed::Except(Arc::new(own.collect())),
            Allowed::Except(h) => Allowed::Except(Arc::new(h.iter().copied().chain(own).collect())),
            Allowed::Only { ids, set } => {
                let ids: Vec<i64> = ids
                    .iter()
                    .copied()
                    .filter(|i| !self.vectors.contains_key(i))
                    .collect();
                let set = set
                    .iter()
                    .copied()
                    .filter(|i| !self.vectors.contains_key(i))
                    .collect();
                Allowed::Only { ids, set }
            }
        }
    }

    /// True when `id` existed then (every memory the delta does not name did).
    fn existed(&self, id: i64) -> bool {
        !self.then.changed(id) || self.memory_then(id).is_some()
    }
}

impl Sources for AsOfSources<'_> {
    fn allowed(&self, filter: &MemoryFilter) -> Result<Allowed> {
        let today = self.now.allowed(filter)?;
        let members = filter
            .cluster
            .map(|c| self.now.read.cluster_member_ids(c))
            .transpose()?;
        let (mut shown, mut hidden) = (HashSet::new(), self.then.later.clone());
        for (id, m) in &self.then.then {
            let visible = m.as_ref().is_some_and(|m| {
                filter.matches(m) && members.as_ref().is_none_or(|s| s.contains(id))
            });
            if visible {
                shown.insert(*id);
            } else {
                hidden.insert(*id);
            }
        }
        Ok(match today {
            Allowed::All if hidden.is_empty() => Allowed::All,
            Allowed::All => Allowed::Except(Arc::new(hidden)),
            Allowed::Except(h) => Allowed::Except(Arc::new(
                h.iter()
                    .copied()
                    .filter(|i| !shown.contains(i))
                    .chain(hidden)
                    .collect(),
            )),
            Allowed::Only { set, .. } => {
                let set: HashSet<i64> = set
                    .into_iter()
                    .filter(|i| !hidden.contains(i))
                    .chain(shown)
                    .collect();
                let mut ids: Vec<i64> = set.iter().copied().collect();
                ids.sort_unstable();
                Allowed::Only { ids, set }
            }
        })
    }

    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        allowed: &Allowed,
    ) -> Result<(Vec<(i64, f32)>, SearchPath)> {
        let (mut hits, path) = self.now.nearest(vector, k, &self.without_own(allowed))?;
        hits.extend(
            self.vectors
                .iter()
                .filter(|(id, _)| allowed.allows(**id))
                .map(|(id, v)| (*id, dot(vector, v))),
        );
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        Ok((hits, path))
    }

    fn similarity(&self, vector: &[f32], id: i64) -> Option<f32> {
        match self.vectors.get(&id) {
            Some(v) => Some(dot(vector, v)),
            None if self.existed(id) => self.now.similarity(vector, id),
            None => None,
        }
    }

    fn vector(&self, id: i64) -> Option<Vec<f32>> {
        match self.vectors.get(&id) {
            Some(v) => Some(v.clone()),
            None if self.existed(id) => self.now.vector(id),
            None => None,
        }
    }

    fn prefetch_vectors(&self, ids: &[i64]) -> Result<()> {
        self.now.prefetch_vectors(ids)
    }

    fn lexical(&self, query: &str, filter: &MemoryFilter, limit: usize) -> Result<Vec<(i64, f64)>> {
        // Today's index over every memory (then-visible ones may be deleted or forgotten
        // now), kept to those visible then whose text has not changed since.
        let allowed = self.allowed(filter)?;
        Ok(self
            .now
            .lexical(query, &widened(filter), limit + self.then.changed_count())?
            .into_iter()
            .filter(|(id, _)| allowed.allows(*id) && !self.retexted.contains(id))
            .take(limit)
            .collect())
    }

    fn causal(&self, seeds: &[i64], depth: usize) -> Result<Vec<(i64, usize)>> {
        Ok(self
            .now
            .causal(seeds, depth)?
            .into_iter()
            .filter(|(id, _)| self.existed(*id))
            .collect())
    }

    fn similar(&self, id: i64) -> Result<Vec<(i64, f64)>> {
        Ok(self
            .now
            .similar(id)?
            .into_iter()
            .filter(|(n, _)| self.existed(*n))
            .collect())
    }

    fn adjacent(&self, ids: &[i64]) -> Result<HashMap<i64, [Option<i64>; 2]>> {
        let mut out = self.now.adjacent(ids)?;
        for pair in out.values_mut() {
            for side in pair.iter_mut() {
                if side.is_some_and(|n| !self.existed(n)) {
                    *side = None;
                }
            }
        }
        Ok(out)
    }

    fn memories(&self, ids: &[i64]) -> Result<Vec<Memory>> {
        let today: HashMap<i64, Memory> = self
            .now
            .memories(ids)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        Ok(ids
            .iter()
            .filter_map(|id| self.then.memory(*id, today.get(id).cloned()))
            .collect())
    }

    fn occurred_in(
        &self,
        days: crate::lang::time::DayRange,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<i64>> {
        // A memory's time of occurrence never changes; which memories existed and were
        // visible then is the delta's to say.
        let allowed = self.allowed(filter)?;
        Ok(self
            .now
            .occurred_in(days, &widened(filter), limit + self.then.changed_count())?
            .into_iter()
            .filter(|id| allowed.allows(*id))
            .take(limit)
            .collect())
    }
}

/// `filter` over every memory today, whatever its state: one visible then may be deleted,
/// forgotten or superseded now.
fn widened(filter: &MemoryFilter) -> MemoryFilter {
    MemoryFilter {
        include_deleted: true,
        states: State::ALL.to_vec(),
        superseded: Superseded::Include,
        ..filter.clone()
    }
}
