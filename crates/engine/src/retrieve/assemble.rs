//! The assemble stage: the ranked candidates become hits (the top k and the near misses
//! below the cut, with every signal kept for the retrieval debugger's X-ray), the
//! connected bubbles of the top results join at score 0 (seed 004), and MMR orders the
//! top k for diversity.

use super::gather::Candidates;
use super::pack::mmr;
use super::sources::Sources;
use super::{Hit, Origin, SearchQuery, Signals, CONNECTED_FROM};
use crate::embed::Embedder;
use crate::memory::Memory;
use crate::Result;
use std::collections::HashSet;

/// Hits just below the cut kept as near misses.
const NEAR_MISSES: usize = 10;

pub(crate) struct Assembled {
    /// The top k, best first, each with its MMR score and rank.
    pub hits: Vec<Hit>,
    pub near_misses: Vec<Hit>,
    pub connected: Vec<Hit>,
    /// Each hit's vector (zeros when it has none), in hit order.
    pub vectors: Vec<Vec<f32>>,
    /// Each hit's score relative to the best.
    pub relevance: Vec<f64>,
    /// (hit index, MMR score) in MMR order.
    pub order: Vec<(usize, f64)>,
}

pub(crate) fn assemble(
    sources: &dyn Sources,
    embedder: &dyn Embedder,
    c: &Candidates,
    ranked: &[(i64, Signals, f64)],
    q: &SearchQuery,
) -> Result<Assembled> {
    let mut hits: Vec<Hit> = ranked
        .iter()
        .take(q.k + NEAR_MISSES)
        .enumerate()
        .map(|(i, &(id, signals, score))| {
            let mut h = hit(embedder, c.memories[&id].clone(), c.cands[&id].origin);
            (h.rank, h.signals, h.score) = (Some(i + 1), signals, score);
            h
        })
        .collect();
    let near_misses = hits.split_off(hits.len().min(q.k));
    let connected = connected(sources, embedder, &hits, q)?;
    sources.prefetch_vectors(&hits.iter().map(|h| h.memory.id).collect::<Vec<_>>())?;
    let vectors: Vec<Vec<f32>> = hits
        .iter()
        .map(|h| {
            sources
                .vector(h.memory.id)
                .unwrap_or_else(|| vec![0.0; c.qvec.len()])
        })
        .collect();
    let vec_refs: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
    let top = hits.first().map_or(1.0, |h| h.score.max(1e-9));
    let relevance: Vec<f64> = hits.iter().map(|h| h.score / top).collect();
    let order = mmr(&relevance, &vec_refs, q.mmr_lambda);
    for (r, &(i, s)) in order.iter().enumerate() {
        hits[i].mmr_score = Some(s);
        hits[i].mmr_rank = Some(r + 1);
    }
    Ok(Assembled {
        hits,
        near_misses,
        connected,
        vectors,
        relevance,
        order,
    })
}

/// A hit for `memory` with no rank, signals or score yet.
fn hit(embedder: &dyn Embedder, memory: Memory, origin: Origin) -> Hit {
    Hit {
        tokens: tokens_of(embedder, &memory),
        memory,
        rank: None,
        origin,
        signals: Signals::default(),
        score: 0.0,
        mmr_score: None,
        mmr_rank: None,
        packed: false,
        attention: None,
        reasons: Vec::new(),
    }
}

/// Memories the top results are linked to by similarity and the filter allows, not
/// already hits, in the order reached.
fn connected(
    sources: &dyn Sources,
    embedder: &dyn Embedder,
    hits: &[Hit],
    q: &SearchQuery,
) -> Result<Vec<Hit>> {
    let mut seen: HashSet<i64> = hits.iter().map(|h| h.memory.id).collect();
    let mut linked = Vec::new();
    for h in hits.iter().take(CONNECTED_FROM) {
        for (n, _) in sources.similar(h.memory.id)? {
            if seen.insert(n) {
                linked.push(n);
            }
        }
    }
    Ok(sources
        .memories(&linked)?
        .into_iter()
        .filter(|m| q.filter.matches(m))
        .map(|m| hit(embedder, m, Origin::Connected))
        .collect())
}

/// The stored token count, or a count now for memories written before counts were stored.
fn tokens_of(embedder: &dyn Embedder, m: &Memory) -> usize {
    m.tokens
        .map_or_else(|| embedder.count_tokens(&m.text), |t| t as usize)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{memory, MapSources};
    use super::super::gather::{Cand, GatherTimings};
    use super::*;
    use crate::embed::HashEmbedder;
    use crate::index::SearchPath;
    use std::collections::HashMap;

    /// Three candidates: 1 and 2 point the same way, 3 elsewhere.
    fn setup() -> (MapSources, Candidates) {
        let s = MapSources::default()
            .with(memory(1, "one", "Ada"), vec![1.0, 0.0])
            .with(memory(2, "two", "Ada"), vec![0.999, 0.0447])
            .with(memory(3, "three", "Ada"), vec![0.0, 1.0]);
        let cand = Cand {
            origin: Origin::Vector,
            semantic: 0.0,
            lexical_raw: 0.0,
            graph: 0.0,
            expand: 0.0,
            clause: 0.0,
            via: None,
        };
        let c = Candidates {
            cands: (1..=3).map(|id| (id, cand.clone())).collect(),
            memories: s.memories.clone(),
            adjacency: HashMap::new(),
            qvec: vec![1.0, 0.0],
            clause_vecs: vec![],
            vector_path: SearchPath::Exact,
            max_bm25: 0.0,
            timings: GatherTimings::default(),
        };
        (s, c)
    }

    fn ranked() -> Vec<(i64, Signals, f64)> {
        vec![
            (1, Signals::default(), 0.9),
            (2, Signals::default(), 0.89),
            (3, Signals::default(), 0.5),
        ]
    }

    #[test]
    fn the_top_k_are_ranked_and_the_rest_are_near_misses() {
        let (s, c) = setup();
        let mut q = SearchQuery::new("one");
        q.k = 2;
        let a = assemble(&s, &HashEmbedder::new(2), &c, &ranked(), &q).unwrap();
        let ids: Vec<(i64, Option<usize>)> = a.hits.iter().map(|h| (h.memory.id, h.rank)).collect();
        assert_eq!(ids, vec![(1, Some(1)), (2, Some(2))]);
        assert_eq!(a.near_misses[0].memory.id, 3);
        assert_eq!(a.near_misses[0].rank, Some(3));
        assert_eq!(a.relevance, vec![1.0, 0.89 / 0.9]);
        assert_eq!(a.hits[0].tokens, 10);
    }

    #[test]
    fn mmr_puts_the_near_duplicate_last() {
        let (s, c) = setup();
        let a = assemble(
            &s,
            &HashEmbedder::new(2),
            &c,
            &ranked(),
            &SearchQuery::new("one"),
        )
        .unwrap();
        let by_mmr: Vec<usize> = a.order.iter().map(|o| o.0).collect();
        assert_eq!(by_mmr, vec![0, 2, 1]);
        assert_eq!(a.hits[2].mmr_rank, Some(2));
        assert_eq!(a.hits[1].mmr_rank, Some(3));
    }

    #[test]
    fn connected_bubbles_are_linked_from_the_top_and_not_hits_already() {
        let (mut s, c) = setup();
        s.memories.insert(4, memory(4, "four", "Ada"));
        s.similar.insert(1, vec![(2, 0.9), (4, 0.8)]);
        let mut q = SearchQuery::new("one");
        q.k = 2;
        let a = assemble(&s, &HashEmbedder::new(2), &c, &ranked(), &q).unwrap();
        let ids: Vec<i64> = a.connected.iter().map(|h| h.memory.id).collect();
        assert_eq!(ids, vec![4]);
        assert_eq!(
            (a.connected[0].origin, a.connected[0].rank),
            (Origin::Connected, None)
        );
    }
}
