//! The gather stage: the query's vectors, then candidates from every source merged into
//! one [`Candidates`] value. Vector k-NN and BM25 first (each part of a multi-part question
//! brings its own nearest memories; the causal route walks causal links from the best
//! vector hits); then the graph around the strongest: similarity links (when tuned) and
//! the turns adjacent to each episode, with every candidate's memory loaded.

use super::causal::{CAUSAL_DEPTH, CAUSAL_SEEDS};
use super::plan::Plan;
use super::sources::{Allowed, Sources};
use super::{ms, Origin, Route, SearchQuery, CONNECTED_FROM};
use crate::embed::Embedder;
use crate::index::SearchPath;
use crate::lang::time::{DayRange, When};
use crate::memory::{Kind, Memory};
use crate::{Error, Result};
use std::collections::HashMap;
use std::time::Instant;

/// A candidate's evidence before scoring.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cand {
    pub origin: Origin,
    /// Cosine similarity to the query.
    pub semantic: f64,
    /// BM25, unscaled (0 when not a lexical match).
    pub lexical_raw: f64,
    /// 1 / depth when reached along causal links.
    pub graph: f64,
    /// The score of the similarity link it was reached by.
    pub expand: f64,
    /// Best similarity to one part of a multi-part question.
    pub clause: f64,
    /// The candidate it was reached from along a similarity link.
    pub via: Option<i64>,
}

impl Cand {
    fn new(origin: Origin, semantic: f64) -> Self {
        Self {
            origin,
            semantic,
            lexical_raw: 0.0,
            graph: 0.0,
            expand: 0.0,
            clause: 0.0,
            via: None,
        }
    }
}

/// Everything the score stage reads.
#[derive(Debug, Clone)]
pub(crate) struct Candidates {
    pub cands: HashMap<i64, Cand>,
    /// The memory of every candidate.
    pub memories: HashMap<i64, Memory>,
    /// (previous, next) episode of each strong episode candidate.
    pub adjacency: HashMap<i64, [Option<i64>; 2]>,
    pub qvec: Vec<f32>,
    /// One vector per part of a multi-part question.
    pub clause_vecs: Vec<Vec<f32>>,
    pub vector_path: SearchPath,
    /// The best BM25 among the candidates (lexical scores are scaled by it).
    pub max_bm25: f64,
    pub timings: GatherTimings,
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GatherTimings {
    pub embed_ms: f64,
    pub lexical_ms: f64,
    /// The filter and the query's k-NN.
    pub vector_ms: f64,
    /// Similarity links, adjacent turns and loading the memories.
    pub graph_ms: f64,
}

impl Candidates {
    /// BM25 scaled to [0, 1] by the best in the set.
    pub fn lexical(&self, raw: f64) -> f64 {
        if self.max_bm25 > 0.0 {
            raw / self.max_bm25
        } else {
            0.0
        }
    }
}

/// Runs the gather stage for `plan`.
pub(crate) fn gather(
    sources: &dyn Sources,
    embedder: &dyn Embedder,
    plan: &Plan,
    q: &SearchQuery,
) -> Result<Candidates> {
    let matched = embed_and_match(sources, embedder, plan, q);
    let (embed_ms, lexical_ms) = (matched.embed_ms, matched.lexical_ms);
    let mut qvecs = matched.vectors?;
    if qvecs.is_empty() {
        return Err(Error::Embedding("no vector for the query".into()));
    }
    let clause_vecs = qvecs.split_off(1);
    let qvec = qvecs.remove(0);

    let t = Instant::now();
    let allowed = sources.allowed(&q.filter)?;
    let (vector_hits, vector_path) = sources.nearest(&qvec, plan.pool, &allowed)?;
    let vector_ms = ms(t);
    let mut cands: HashMap<i64, Cand> = vector_hits
        .iter()
        .map(|&(id, s)| (id, Cand::new(Origin::Vector, s as f64)))
        .collect();
    let lexical = matched.lexical?;
    prefetch(sources, &lexical)?;
    for (id, bm25) in lexical {
        let c = cands
            .entry(id)
            .or_insert_with(|| Cand::new(Origin::Lexical, semantic(sources, &qvec, id)));
        if c.origin == Origin::Vector {
            c.origin = Origin::Both;
        }
        c.lexical_raw = bm25;
    }
    for cv in &clause_vecs {
        let near = sources.nearest(cv, plan.pool / 2, &allowed)?.0;
        prefetch(sources, &near)?;
        for (id, _) in near {
            cands
                .entry(id)
                .or_insert_with(|| Cand::new(Origin::Vector, semantic(sources, &qvec, id)));
        }
    }
    for days in dated_days(plan) {
        let dated = sources.occurred_in(days, &q.filter, plan.pool / 2)?;
        sources.prefetch_vectors(&dated)?;
        for id in dated {
            if allowed.allows(id) {
                cands
                    .entry(id)
                    .or_insert_with(|| Cand::new(Origin::Date, semantic(sources, &qvec, id)));
            }
        }
    }
    // The causal route walks causal and derived links two hops from its seeds; the hybrid
    // route combines the vector and lexical search with a one-hop walk (seed 001).
    let walk = match plan.route {
        Route::Causal => CAUSAL_DEPTH,
        Route::Hybrid => 1,
        Route::Direct | Route::Pattern => 0,
    };
    if walk > 0 {
        let seeds: Vec<i64> = vector_hits.iter().take(CAUSAL_SEEDS).map(|h| h.0).collect();
        let walked = sources.causal(&seeds, walk)?;
        prefetch(sources, &walked)?;
        for (id, depth) in walked {
            if allowed.allows(id) {
                let c = cands
                    .entry(id)
                    .or_insert_with(|| Cand::new(Origin::Graph, semantic(sources, &qvec, id)));
                c.graph = c.graph.max(1.0 / depth as f64);
            }
        }
    }
    let max_bm25 = cands.values().map(|c| c.lexical_raw).fold(0.0, f64::max);
    let mut out = Candidates {
        cands,
        memories: HashMap::new(),
        adjacency: HashMap::new(),
        qvec,
        clause_vecs,
        vector_path,
        max_bm25,
        timings: GatherTimings {
            embed_ms,
            lexical_ms,
            vector_ms,
            graph_ms: 0.0,
        },
    };
    let t = Instant::now();
    grow(sources, plan, q, &allowed, &mut out)?;
    clause_similarities(sources, &mut out);
    out.timings.graph_ms = ms(t);
    Ok(out)
}

/// Days whose memories join the candidates: each time the question names that spans at most
/// [`DATED_MAX_DAYS`], widened by a week on either side (the temporal signal is half at a
/// week). Off when the temporal stage is.
fn dated_days(plan: &Plan) -> Vec<DayRange> {
    if plan.tuning.temporal <= 0.0 {
        return Vec::new();
    }
    plan.analysis
        .times
        .iter()
        .filter_map(|t| match t.when {
            When::Range(r) if r.days() <= DATED_MAX_DAYS => Some(DayRange::new(
                r.start - chrono::Duration::days(7),
                r.end + chrono::Duration::days(7),
            )),
            _ => None,
        })
        .collect()
}

/// A named time longer than this ("in 2023") is too wide to bring candidates by date; the
/// temporal signal still ranks the others by it.
const DATED_MAX_DAYS: i64 = 31;

/// The query's vectors and its BM25 matches, each as it came out, with its time.
struct QueryMatches {
    vectors: Result<Vec<Vec<f32>>>,
    embed_ms: f64,
    lexical: Result<Vec<(i64, f64)>>,
    lexical_ms: f64,
}

/// The query's vectors and its BM25 matches, computed at once: the embedding on another
/// core, the lexical search here (a store connection cannot leave its thread, the embedder
/// can).
fn embed_and_match(
    sources: &dyn Sources,
    embedder: &dyn Embedder,
    plan: &Plan,
    q: &SearchQuery,
) -> QueryMatches {
    let to_embed = &plan.to_embed;
    std::thread::scope(|s| {
        let embedding = s.spawn(|| {
            let t = Instant::now();
            let out = if to_embed.len() == 1 {
                embedder.embed_one(&to_embed[0]).map(|v| vec![v])
            } else {
                let refs: Vec<&str> = to_embed.iter().map(String::as_str).collect();
                embedder.embed(&refs)
            };
            (out, ms(t))
        });
        let t = Instant::now();
        let lexical = if plan.route == Route::Direct {
            Ok(Vec::new())
        } else {
            sources.lexical(&plan.lexical_query, &q.filter, plan.pool)
        };
        let lexical_ms = ms(t);
        let (vectors, embed_ms) = embedding
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        QueryMatches {
            vectors,
            embed_ms,
            lexical,
            lexical_ms,
        }
    })
}

/// [`Sources::prefetch_vectors`] of the ids of (id, anything) pairs a stage found.
fn prefetch<T>(sources: &dyn Sources, found: &[(i64, T)]) -> Result<()> {
    sources.prefetch_vectors(&found.iter().map(|f| f.0).collect::<Vec<_>>())
}

fn semantic(sources: &dyn Sources, qvec: &[f32], id: i64) -> f64 {
    sources.similarity(qvec, id).unwrap_or(0.0) as f64
}

/// Adds the graph around the strongest candidates (by semantic and lexical evidence):
/// memories a top candidate is linked to by similarity (seed 001's traversal, when tuned)
/// and the turns adjacent to each episode (a reply's evidence is often in the turn it
/// answers); loads every candidate's memory.
fn grow(
    sources: &dyn Sources,
    plan: &Plan,
    q: &SearchQuery,
    allowed: &Allowed,
    out: &mut Candidates,
) -> Result<()> {
    let w = plan.weights;
    let mut by_base: Vec<(i64, f64)> = out
        .cands
        .iter()
        .map(|(&id, c)| {
            (
                id,
                w.semantic * c.semantic + w.lexical * out.lexical(c.lexical_raw),
            )
        })
        .collect();
    by_base.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if plan.tuning.expand > 0.0 {
        for &(id, _) in by_base.iter().take(CONNECTED_FROM) {
            let linked = sources.similar(id)?;
            prefetch(sources, &linked)?;
            for (n, link) in linked {
                if !allowed.allows(n) {
                    continue;
                }
                let c = out
                    .cands
                    .entry(n)
                    .or_insert_with(|| Cand::new(Origin::Graph, semantic(sources, &out.qvec, n)));
                if link > c.expand {
                    (c.expand, c.via) = (link, Some(id));
                }
            }
        }
    }
    out.memories = sources
        .memories(&out.cands.keys().copied().collect::<Vec<_>>())?
        .into_iter()
        .map(|m| (m.id, m))
        .collect();
    if q.neighbour_weight > 0.0 {
        add_adjacent(
            sources,
            &by_base[..by_base.len().min(plan.pool)],
            allowed,
            out,
        )?;
    }
    Ok(())
}

/// The turns before and after each episode among `strongest` join the candidates (with
/// their memories), and the adjacency is kept for the neighbour signal.
fn add_adjacent(
    sources: &dyn Sources,
    strongest: &[(i64, f64)],
    allowed: &Allowed,
    out: &mut Candidates,
) -> Result<()> {
    let episodes: Vec<i64> = strongest
        .iter()
        .map(|&(id, _)| id)
        .filter(|id| {
            out.memories
                .get(id)
                .is_some_and(|m| m.kind == Kind::Episode)
        })
        .collect();
    let mut adjacent = sources.adjacent(&episodes)?;
    let turns: Vec<i64> = adjacent.values().flatten().flatten().copied().collect();
    sources.prefetch_vectors(&turns)?;
    for id in episodes {
        let Some(adj) = adjacent.remove(&id) else {
            continue;
        };
        for &n in adj.iter().flatten() {
            if allowed.allows(n) && !out.cands.contains_key(&n) {
                let c = Cand::new(Origin::Adjacent, semantic(sources, &out.qvec, n));
                out.cands.insert(n, c);
            }
        }
        out.adjacency.insert(id, adj);
    }
    let missing: Vec<i64> = out
        .cands
        .keys()
        .filter(|id| !out.memories.contains_key(id))
        .copied()
        .collect();
    for m in sources.memories(&missing)? {
        out.memories.insert(m.id, m);
    }
    Ok(())
}

/// Each candidate's best similarity to a part of a multi-part question.
fn clause_similarities(sources: &dyn Sources, out: &mut Candidates) {
    if out.clause_vecs.is_empty() {
        return;
    }
    for (&id, c) in out.cands.iter_mut() {
        c.clause = out
            .clause_vecs
            .iter()
            .filter_map(|cv| sources.similarity(cv, id))
            .fold(0.0f64, |a, b| a.max(b as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{memory, MapSources};
    use super::super::plan::plan;
    use super::*;
    use crate::embed::HashEmbedder;

    /// Sources whose vectors are the hashing embedder's, so the query "alpha" is nearest
    /// to memory 1.
    fn sources() -> MapSources {
        let e = HashEmbedder::new(32);
        let texts = ["alpha", "beta", "gamma", "delta"];
        texts
            .iter()
            .enumerate()
            .fold(MapSources::default(), |s, (i, t)| {
                let id = i as i64 + 1;
                s.with(memory(id, t, "Ada"), e.embed_one(t).unwrap())
            })
    }

    fn run(s: &MapSources, q: &SearchQuery) -> Candidates {
        let p = plan(q, true, &[], 0).unwrap();
        gather(s, &HashEmbedder::new(32), &p, q).unwrap()
    }

    #[test]
    fn vector_and_lexical_hits_merge_and_a_match_of_both_is_marked_both() {
        let mut s = sources();
        s.bm25 = HashMap::from([(1, 4.0), (9, 2.0)]);
        s.memories.insert(9, memory(9, "no vector", "Ada"));
        let c = run(&s, &SearchQuery::new("alpha"));
        assert_eq!(c.cands[&1].origin, Origin::Both);
        assert_eq!(c.cands[&2].origin, Origin::Vector);
        assert_eq!(c.cands[&9].origin, Origin::Lexical);
        assert_eq!((c.cands[&9].semantic, c.cands[&9].lexical_raw), (0.0, 2.0));
        assert!((c.cands[&1].semantic - 1.0).abs() < 1e-6);
        assert_eq!((c.max_bm25, c.lexical(2.0)), (4.0, 0.5));
        assert_eq!(c.memories.len(), 5, "every candidate's memory is loaded");
    }

    #[test]
    fn a_named_day_brings_the_memories_that_happened_then_beyond_the_vector_pool() {
        let e = HashEmbedder::new(32);
        // 60 memories nearer the query than the dated one; k = 1 asks each source for 50.
        let mut s = (1..=60).fold(MapSources::default(), |s, id| {
            let text = format!("alpha beta {id}");
            let v = e.embed_one(&text).unwrap();
            s.with(memory(id, &text, "Ada"), v)
        });
        let mut dated = memory(99, "zeta", "Ada");
        dated.occurred_at = Some(1_682_942_400_000); // 1 May 2023, noon UTC
        let mut other_day = memory(98, "zeta", "Ada");
        other_day.occurred_at = Some(1_690_000_000_000); // late July 2023
        s = s
            .with(dated, e.embed_one("zeta").unwrap())
            .with(other_day, e.embed_one("zeta").unwrap());
        let mut q = SearchQuery::new("alpha beta on 1 May 2023");
        q.k = 1;
        let c = run(&s, &q);
        assert_eq!(c.cands[&99].origin, Origin::Date);
        assert!(!c.cands.contains_key(&98), "another day is not brought");
        q.tuning.temporal = 0.0;
        assert!(!run(&s, &q).cands.contains_key(&99), "off with its stage");
    }

    #[test]
    fn the_direct_route_asks_no_lexical_source() {
        let mut s = sources();
        s.bm25 = HashMap::from([(9, 2.0)]);
        let mut q = SearchQuery::new("alpha");
        q.route = Some(Route::Direct);
        let c = run(&s, &q);
        assert!(!c.cands.contains_key(&9));
        assert_eq!(c.max_bm25, 0.0);
    }

    #[test]
    fn the_causal_route_walks_two_hops_the_hybrid_one_and_the_others_none() {
        let mut s = sources();
        s.vectors.retain(|&id, _| id <= 2);
        s.memories.insert(7, memory(7, "cause", "Ada"));
        s.memories.insert(8, memory(8, "hidden", "Ada"));
        s.memories.insert(6, memory(6, "effect", "Ada"));
        s.causal = vec![(7, 2), (8, 1), (6, 1)];
        s.hidden = vec![8];
        let mut q = SearchQuery::new("why alpha");
        q.route = Some(Route::Causal);
        let c = run(&s, &q);
        assert_eq!(c.cands[&7].origin, Origin::Graph);
        assert_eq!(c.cands[&7].graph, 0.5);
        assert!(!c.cands.contains_key(&8));
        q.route = Some(Route::Hybrid);
        let c = run(&s, &q);
        assert!(!c.cands.contains_key(&7), "the hybrid route walks one hop");
        assert_eq!(
            (c.cands[&6].origin, c.cands[&6].graph),
            (Origin::Graph, 1.0)
        );
        for route in [Route::Pattern, Route::Direct] {
            q.route = Some(route);
            assert!(!run(&s, &q).cands.contains_key(&6), "{route:?} walks none");
        }
    }

    #[test]
    fn adjacent_turns_join_only_with_a_neighbour_weight() {
        let mut s = sources();
        s.vectors.retain(|&id, _| id == 1);
        s.adjacent.insert(1, [Some(3), None]);
        let mut q = SearchQuery::new("alpha");
        let c = run(&s, &q);
        assert_eq!(c.cands[&3].origin, Origin::Adjacent);
        assert_eq!(c.adjacency[&1], [Some(3), None]);
        assert_eq!(c.memories[&3].text, "gamma");
        q.neighbour_weight = 0.0;
        let c = run(&s, &q);
        assert!(!c.cands.contains_key(&3) && c.adjacency.is_empty());
    }

    #[test]
    fn similarity_links_of_the_strongest_join_only_when_tuned() {
        let mut s = sources();
        s.vectors.retain(|&id, _| id == 1);
        s.similar.insert(1, vec![(4, 0.8)]);
        let mut q = SearchQuery::new("alpha");
        q.neighbour_weight = 0.0;
        assert!(!run(&s, &q).cands.contains_key(&4));
        q.tuning.expand = 0.1;
        let c = run(&s, &q);
        assert_eq!(
            (c.cands[&4].origin, c.cands[&4].expand),
            (Origin::Graph, 0.8)
        );
    }
}
