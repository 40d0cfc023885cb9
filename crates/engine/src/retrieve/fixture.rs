//! Test fixtures for the search stages: memories, and candidate sources held in maps so
//! each stage runs without a store or an index.

use super::sources::{Allowed, Sources};
use crate::embed::dot;
use crate::index::SearchPath;
use crate::memory::{Details, Kind, Memory, Source, State, W5H1};
use crate::store::MemoryFilter;
use crate::Result;
use std::collections::HashMap;

/// An active episode said by `who` in session `s1`, a day after the epoch.
pub fn memory(id: i64, text: &str, who: &str) -> Memory {
    Memory {
        id,
        kind: Kind::Episode,
        text: text.into(),
        w5h1: W5H1 {
            who: Some(who.into()),
            ..Default::default()
        },
        conversation: Some("c1".into()),
        session: Some("s1".into()),
        occurred_at: Some(86_400_000),
        created_at: 86_400_000,
        updated_at: 86_400_000,
        importance: 0.5,
        novelty: 0.5,
        access_count: 0,
        last_accessed: None,
        state: State::Active,
        tags: vec![],
        source: Source::UserInput,
        l_score: 1.0,
        metadata: serde_json::json!({}),
        details: Details::None,
        deleted_at: None,
        tokens: Some(10),
        pinned: false,
        valid_from: None,
        valid_to: None,
        superseded_by: None,
    }
}

/// Sources answered from maps; k-NN is exact over `vectors`.
#[derive(Default, Clone)]
pub struct MapSources {
    pub memories: HashMap<i64, Memory>,
    pub vectors: HashMap<i64, Vec<f32>>,
    pub bm25: HashMap<i64, f64>,
    pub causal: Vec<(i64, usize)>,
    pub similar: HashMap<i64, Vec<(i64, f64)>>,
    pub adjacent: HashMap<i64, [Option<i64>; 2]>,
    pub hidden: Vec<i64>,
}

impl MapSources {
    /// Adds a memory with its vector.
    pub fn with(mut self, m: Memory, vector: Vec<f32>) -> Self {
        self.vectors.insert(m.id, vector);
        self.memories.insert(m.id, m);
        self
    }
}

impl Sources for MapSources {
    fn allowed(&self, _: &MemoryFilter) -> Result<Allowed> {
        Ok(if self.hidden.is_empty() {
            Allowed::All
        } else {
            Allowed::Except(std::sync::Arc::new(self.hidden.iter().copied().collect()))
        })
    }

    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        allowed: &Allowed,
    ) -> Result<(Vec<(i64, f32)>, SearchPath)> {
        let mut hits: Vec<(i64, f32)> = self
            .vectors
            .iter()
            .filter(|(id, _)| allowed.allows(**id))
            .map(|(&id, v)| (id, dot(vector, v)))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        Ok((hits, SearchPath::Exact))
    }

    fn similarity(&self, vector: &[f32], id: i64) -> Option<f32> {
        self.vectors.get(&id).map(|v| dot(vector, v))
    }

    fn vector(&self, id: i64) -> Option<Vec<f32>> {
        self.vectors.get(&id).cloned()
    }

    fn lexical(&self, _: &str, _: &MemoryFilter, limit: usize) -> Result<Vec<(i64, f64)>> {
        let mut hits: Vec<(i64, f64)> = self.bm25.iter().map(|(&id, &s)| (id, s)).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(limit);
        Ok(hits)
    }

    fn causal(&self, _: &[i64], depth: usize) -> Result<Vec<(i64, usize)>> {
        Ok(self
            .causal
            .iter()
            .filter(|x| x.1 <= depth)
            .copied()
            .collect())
    }

    fn similar(&self, id: i64) -> Result<Vec<(i64, f64)>> {
        Ok(self.similar.get(&id).cloned().unwrap_or_default())
    }

    fn adjacent(&self, ids: &[i64]) -> Result<HashMap<i64, [Option<i64>; 2]>> {
        Ok(ids
            .iter()
            .map(|&id| (id, self.adjacent.get(&id).copied().unwrap_or_default()))
            .collect())
    }

    fn memories(&self, ids: &[i64]) -> Result<Vec<Memory>> {
        Ok(ids
            .iter()
            .filter_map(|id| self.memories.get(id).cloned())
            .collect())
    }

    fn occurred_in(
        &self,
        days: crate::lang::time::DayRange,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<i64>> {
        let (from, to) = super::sources::day_span_ms(days);
        let mut found: Vec<&Memory> = self
            .memories
            .values()
            .filter(|m| filter.matches(m) && !self.hidden.contains(&m.id))
            .filter(|m| m.occurred_at.is_some_and(|t| from <= t && t <= to))
            .collect();
        found.sort_by(|a, b| b.importance.total_cmp(&a.importance).then(a.id.cmp(&b.id)));
        Ok(found.into_iter().take(limit).map(|m| m.id).collect())
    }
}
