//! Retrieval: route the query, gather candidates (vector, lexical, graph, adjacent turns),
//! score every candidate on every signal, fuse, rank, add connected bubbles, re-rank with
//! MMR and pack the context under a token budget. Every number that decided the outcome is
//! in the response, so the retrieval debugger can show why.

mod causal;
pub mod evidence;
mod pack;
mod router;
mod tuning;

pub use pack::{attention, knapsack, mmr};
pub use router::{classify, Route};
pub use tuning::Tuning;

use crate::embed::Embedder;
use crate::index::{SearchPath, VectorIndex};
use crate::memory::{embedding_text, Kind, LinkKind, Memory};
use crate::store::{MemoryFilter, Store, Tx};
use crate::text::find_location;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

const DAY_MS: f64 = 86_400_000.0;
/// Adjacent-turn signal: the preceding turn counts fully when it was a question, by this
/// share when it was a statement; the following turn by `NEXT_TURN_SHARE`.
const STATEMENT_SHARE: f64 = 0.5;
const NEXT_TURN_SHARE: f64 = 0.25;
/// Connected bubbles are gathered from this many top results (seed 004: "for top results").
const CONNECTED_FROM: usize = 5;
/// Queries longer than this (in characters) are cut before lexical matching.
const MAX_QUERY_CHARS: usize = 4_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScoreMode {
    /// similarity × importance × recency (seed 004).
    Context,
    /// Weighted sum of six signals (seed 003).
    #[default]
    Fusion,
}

impl std::str::FromStr for ScoreMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "context" => Ok(ScoreMode::Context),
            "fusion" => Ok(ScoreMode::Fusion),
            other => Err(Error::InvalidInput(format!(
                "unknown score mode {other:?}; expected context or fusion"
            ))),
        }
    }
}

/// Fusion weights (seed 003 defaults); they must sum to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Weights {
    pub semantic: f64,
    pub lexical: f64,
    pub recency: f64,
    pub actor: f64,
    pub spatial: f64,
    pub usage: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            semantic: 0.55,
            lexical: 0.20,
            recency: 0.10,
            actor: 0.07,
            spatial: 0.03,
            usage: 0.05,
        }
    }
}

impl Weights {
    pub fn validate(&self) -> Result<()> {
        let all = [
            self.semantic,
            self.lexical,
            self.recency,
            self.actor,
            self.spatial,
            self.usage,
        ];
        if all.iter().any(|w| !(0.0..=1.0).contains(w)) {
            return Err(Error::InvalidInput(
                "every weight must be within 0..=1".into(),
            ));
        }
        let sum: f64 = all.iter().sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(Error::InvalidInput(format!(
                "weights must sum to 1, not {sum:.4}"
            )));
        }
        Ok(())
    }

    /// The weights a route uses: `direct` moves the lexical weight to semantic.
    fn for_route(self, route: Route) -> Self {
        match route {
            Route::Direct => Self {
                semantic: self.semantic + self.lexical,
                lexical: 0.0,
                ..self
            },
            _ => self,
        }
    }
}

/// Context window accounting (seed 003): budget = window − system − output − conversation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Budget {
    pub window: usize,
    pub system_reserve: usize,
    pub output_reserve: usize,
    pub conversation_tokens: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            window: 8192,
            system_reserve: 512,
            output_reserve: 1024,
            conversation_tokens: 0,
        }
    }
}

impl Budget {
    pub fn available(&self) -> usize {
        self.window
            .saturating_sub(self.system_reserve)
            .saturating_sub(self.output_reserve)
            .saturating_sub(self.conversation_tokens)
    }
}

/// Everything a search can be told.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchQuery {
    pub query: String,
    #[serde(default = "default_k")]
    pub k: usize,
    #[serde(default)]
    pub mode: ScoreMode,
    /// Forces a route; `None` lets the router choose.
    #[serde(default)]
    pub route: Option<Route>,
    #[serde(default)]
    pub filter: MemoryFilter,
    #[serde(default)]
    pub weights: Weights,
    #[serde(default)]
    pub budget: Budget,
    #[serde(default = "default_lambda")]
    pub mmr_lambda: f64,
    /// Weight of the adjacent-turn signal added to an episode's fused score: a reply is
    /// often only understandable with the turn before it.
    #[serde(default = "default_neighbour_weight")]
    pub neighbour_weight: f64,
    /// The actor asking, if known (otherwise actors named in the query are used).
    #[serde(default)]
    pub actor: Option<String>,
    /// Time the recency signals are measured from (Unix ms); now if `None`.
    #[serde(default)]
    pub as_of: Option<i64>,
    /// Weights of the evidence stages beyond the fusion signals.
    #[serde(default)]
    pub tuning: Tuning,
}

fn default_k() -> usize {
    10
}
fn default_lambda() -> f64 {
    0.5
}
fn default_neighbour_weight() -> f64 {
    0.45
}

impl SearchQuery {
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            k: default_k(),
            mode: ScoreMode::default(),
            route: None,
            filter: MemoryFilter::default(),
            weights: Weights::default(),
            budget: Budget::default(),
            mmr_lambda: default_lambda(),
            neighbour_weight: default_neighbour_weight(),
            actor: None,
            as_of: None,
            tuning: Tuning::default(),
        }
    }
}

/// Each signal of a candidate, in [0, 1].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Signals {
    pub semantic: f64,
    pub lexical: f64,
    pub recency: f64,
    pub actor: f64,
    pub spatial: f64,
    pub usage: f64,
    /// Best semantic+lexical evidence of the adjacent turns.
    pub neighbour: f64,
    /// Reached by graph traversal (causal route): 1 / depth.
    pub graph: f64,
    /// Dated within the time the question names (or, for a "when" question, dated at all).
    #[serde(default)]
    pub temporal: f64,
    /// Share of the question's entities named.
    #[serde(default)]
    pub entity: f64,
    /// Best similarity to one part of a multi-part question.
    #[serde(default)]
    pub clause: f64,
    /// Reached along a similarity link from a top hit (the link's score).
    #[serde(default)]
    pub expand: f64,
}

/// How a candidate entered the candidate set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Vector,
    Lexical,
    Both,
    Graph,
    Adjacent,
    /// A connected bubble of a top result (score 0).
    Connected,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Hit {
    pub memory: Memory,
    /// 1-based rank by score; connected bubbles have none.
    pub rank: Option<usize>,
    pub origin: Origin,
    pub signals: Signals,
    /// The fused (or context-mode) score the ranking used.
    pub score: f64,
    pub mmr_score: Option<f64>,
    pub mmr_rank: Option<usize>,
    pub tokens: usize,
    pub packed: bool,
    /// softmax(q·m/√d) over the packed memories.
    pub attention: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Timings {
    pub embed_ms: f64,
    pub vector_ms: f64,
    pub lexical_ms: f64,
    pub score_ms: f64,
    pub pack_ms: f64,
    pub total_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchResponse {
    pub query: String,
    pub route: Route,
    pub route_reason: String,
    pub mode: ScoreMode,
    pub weights: Weights,
    pub vector_path: SearchPath,
    /// Actors the query was matched against (from the query text or `actor`).
    pub actors: Vec<String>,
    /// The top k, best first.
    pub hits: Vec<Hit>,
    /// Connected bubbles of the top results (seed 004), score 0.
    pub connected: Vec<Hit>,
    /// The candidates just below the cut, best first (for the retrieval debugger).
    pub near_misses: Vec<Hit>,
    pub candidates_considered: usize,
    /// Ids of the packed context, in MMR order.
    pub context: Vec<i64>,
    pub budget_tokens: usize,
    pub used_tokens: usize,
    pub timings: Timings,
}

/// What a search reads; all of it is borrowed, nothing is written.
pub struct SearchCtx<'a> {
    pub store: &'a Store,
    pub index: &'a VectorIndex,
    pub embedder: &'a dyn Embedder,
    /// Every speaker name in the store (for recognising actors in the query).
    pub known_actors: &'a [String],
    pub has_causal_links: bool,
}

/// A candidate while it is being scored.
struct Cand {
    origin: Origin,
    semantic: f64,
    lexical_raw: f64,
    graph: f64,
    expand: f64,
}

pub fn search(ctx: &SearchCtx<'_>, q: &SearchQuery) -> Result<SearchResponse> {
    let t0 = Instant::now();
    let query = q.query.trim();
    if query.is_empty() {
        return Err(Error::InvalidInput("the query is empty".into()));
    }
    if q.k == 0 || q.k > 1000 {
        return Err(Error::InvalidInput("k must be between 1 and 1000".into()));
    }
    if q.mode == ScoreMode::Fusion {
        q.weights.validate()?;
    }
    let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
    let (route, reason) = match q.route {
        Some(r) => (r, "forced by the caller"),
        None => classify(&query, ctx.has_causal_links),
    };
    let weights = q.weights.for_route(route);
    let tuning = q.tuning;
    let now = q.as_of.unwrap_or_else(crate::store::now_ms);
    let read = ctx.store.read();
    let plan = crate::lang::query::analyse(&query, ctx.known_actors);
    // What is embedded: the question (without its question words, if so tuned), then the
    // parts of a multi-part question.
    let mut to_embed = vec![if tuning.strip_question > 0.0 {
        evidence::strip_question(&query)
    } else {
        query.clone()
    }];
    if tuning.clause > 0.0 {
        to_embed.extend(plan.clauses.iter().cloned());
    }

    // The query embedding (one core) and the lexical search (the other) are independent:
    // run them at once. The store connection cannot leave this thread, the embedder can.
    let pool = q.k.max(10) * 5;
    let (embedded, lexical_hits, lexical_ms) = std::thread::scope(|s| {
        let embedding = s.spawn(|| {
            let t = Instant::now();
            let out = if to_embed.len() == 1 {
                ctx.embedder.embed_one(&to_embed[0]).map(|v| vec![v])
            } else {
                let refs: Vec<&str> = to_embed.iter().map(String::as_str).collect();
                ctx.embedder.embed(&refs)
            };
            (out, ms(t))
        });
        let t = Instant::now();
        let lexical_hits = if route == Route::Direct {
            Ok(Vec::new())
        } else {
            read.lexical_search(&query, &q.filter, pool)
        };
        let lexical_ms = ms(t);
        let embedded = embedding
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (embedded, lexical_hits, lexical_ms)
    });
    let (qvecs, embed_ms) = embedded;
    let mut qvecs = qvecs?;
    if qvecs.is_empty() {
        return Err(Error::Embedding("no vector for the query".into()));
    }
    let clause_vecs = qvecs.split_off(1);
    let qvec = qvecs.remove(0);

    // Candidate set.
    let t = Instant::now();
    let (allowed, scope) = allowed_ids(&read, &q.filter)?;
    let allow = |id: i64| allowed.allows(id);
    let index_filter: Option<&dyn Fn(i64) -> bool> = match allowed {
        Allowed::All => None,
        _ => Some(&allow),
    };
    let (vector_hits, vector_path) = ctx
        .index
        .search(&qvec, pool, index_filter, scope.as_deref());
    let vector_ms = ms(t);
    let mut cands: HashMap<i64, Cand> = vector_hits
        .iter()
        .map(|&(id, s)| {
            (
                id,
                Cand {
                    origin: Origin::Vector,
                    semantic: s as f64,
                    lexical_raw: 0.0,
                    graph: 0.0,
                    expand: 0.0,
                },
            )
        })
        .collect();
    for (id, bm25) in lexical_hits? {
        let c = cands.entry(id).or_insert_with(|| Cand {
            origin: Origin::Lexical,
            semantic: ctx.index.similarity(&qvec, id).unwrap_or(0.0) as f64,
            lexical_raw: 0.0,
            graph: 0.0,
            expand: 0.0,
        });
        if c.origin == Origin::Vector {
            c.origin = Origin::Both;
        }
        c.lexical_raw = bm25;
    }

    // Each part of a multi-part question brings its own nearest memories.
    for cv in &clause_vecs {
        let (hits, _) = ctx
            .index
            .search(cv, pool / 2, index_filter, scope.as_deref());
        for (id, _) in hits {
            cands.entry(id).or_insert_with(|| Cand {
                origin: Origin::Vector,
                semantic: ctx.index.similarity(&qvec, id).unwrap_or(0.0) as f64,
                lexical_raw: 0.0,
                graph: 0.0,
                expand: 0.0,
            });
        }
    }

    if route == Route::Causal {
        let seeds: Vec<i64> = vector_hits
            .iter()
            .take(causal::CAUSAL_SEEDS)
            .map(|h| h.0)
            .collect();
        for (id, depth) in causal::expand(&read, &seeds, causal::CAUSAL_DEPTH)? {
            if allow(id) {
                let c = cands.entry(id).or_insert_with(|| Cand {
                    origin: Origin::Graph,
                    semantic: ctx.index.similarity(&qvec, id).unwrap_or(0.0) as f64,
                    lexical_raw: 0.0,
                    graph: 0.0,
                    expand: 0.0,
                });
                c.graph = c.graph.max(1.0 / depth as f64);
            }
        }
    }

    // Score.
    let t = Instant::now();
    let max_bm25 = cands.values().map(|c| c.lexical_raw).fold(0.0, f64::max);
    let lexical = |raw: f64| if max_bm25 > 0.0 { raw / max_bm25 } else { 0.0 };
    let actors = query_actors(&query, q.actor.as_deref(), ctx.known_actors);
    let place = find_location(&query);

    // Adjacent turns of the strongest candidates join the set: a reply's evidence is
    // often in the turn it answers.
    let mut by_base: Vec<(i64, f64)> = cands
        .iter()
        .map(|(&id, c)| {
            (
                id,
                weights.semantic * c.semantic + weights.lexical * lexical(c.lexical_raw),
            )
        })
        .collect();
    by_base.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    // Memories a top hit is linked to by similarity join too (seed 001's traversal).
    if tuning.expand > 0.0 {
        for &(id, _) in by_base.clone().iter().take(CONNECTED_FROM) {
            for (n, link) in read.neighbours(id, &[LinkKind::Similar])? {
                if !allow(n) {
                    continue;
                }
                let c = cands.entry(n).or_insert_with(|| Cand {
                    origin: Origin::Graph,
                    semantic: ctx.index.similarity(&qvec, n).unwrap_or(0.0) as f64,
                    lexical_raw: 0.0,
                    graph: 0.0,
                    expand: 0.0,
                });
                c.expand = c.expand.max(link);
            }
        }
    }
    let mut memories: HashMap<i64, Memory> = read
        .get_memories(&cands.keys().copied().collect::<Vec<_>>())?
        .into_iter()
        .map(|m| (m.id, m))
        .collect();
    let mut adjacency: HashMap<i64, [Option<i64>; 2]> = HashMap::new();
    if q.neighbour_weight > 0.0 {
        for &(id, _) in by_base.iter().take(pool) {
            let Some(m) = memories.get(&id) else { continue };
            if m.kind != Kind::Episode {
                continue;
            }
            let adj = read.adjacent_episodes(m)?;
            for n in adj.iter().flatten() {
                if allow(*n) && !cands.contains_key(n) {
                    cands.insert(
                        *n,
                        Cand {
                            origin: Origin::Adjacent,
                            semantic: ctx.index.similarity(&qvec, *n).unwrap_or(0.0) as f64,
                            lexical_raw: 0.0,
                            graph: 0.0,
                            expand: 0.0,
                        },
                    );
                }
            }
            adjacency.insert(id, adj);
        }
        let missing: Vec<i64> = cands
            .keys()
            .filter(|id| !memories.contains_key(id))
            .copied()
            .collect();
        for m in read.get_memories(&missing)? {
            memories.insert(m.id, m);
        }
    }
    // Semantic and lexical evidence of a candidate, normalised to [0, 1].
    let evidence_weight = (weights.semantic + weights.lexical).max(1e-9);
    let base = |id: i64| -> f64 {
        cands.get(&id).map_or(0.0, |c| {
            (weights.semantic * c.semantic.clamp(0.0, 1.0)
                + weights.lexical * lexical(c.lexical_raw))
                / evidence_weight
        })
    };
    let max_access = memories
        .values()
        .map(|m| m.access_count)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let reads_text = tuning.temporal > 0.0 || tuning.when_prior > 0.0 || tuning.entity > 0.0;
    let entity_keys = evidence::query_entity_keys(&plan, &actors);
    let mut scored: Vec<(i64, Signals, f64)> = Vec::with_capacity(cands.len());
    for (&id, c) in &cands {
        let Some(m) = memories.get(&id) else { continue };
        if !q.filter.matches(m) {
            continue;
        }
        let facts = if reads_text {
            evidence::facts_of(m, ctx.known_actors)
        } else {
            evidence::MemoryFacts::default()
        };
        let (dated_in, dated) = (
            evidence::temporal_signal(&plan, &facts),
            evidence::when_signal(&plan, &facts),
        );
        let clause = clause_vecs
            .iter()
            .filter_map(|cv| ctx.index.similarity(cv, id))
            .fold(0.0f64, |a, b| a.max(b as f64));
        let age_days = m
            .occurred_at
            .or(Some(m.created_at))
            .map_or(0.0, |t| ((now - t) as f64 / DAY_MS).max(0.0));
        let recency = match m.kind {
            Kind::Fact => 1.0,
            _ => (-std::f64::consts::LN_2 * age_days / 30.0).exp(),
        };
        // The turn a memory replies to carries most of its context (all of it when that
        // turn was a question), the turn after it less.
        let neighbour = adjacency.get(&id).map_or(0.0, |[prev, next]| {
            let p = prev.map_or(0.0, |p| {
                let asked = memories
                    .get(&p)
                    .is_some_and(|m| m.text.trim_end().ends_with('?'));
                base(p) * if asked { 1.0 } else { STATEMENT_SHARE }
            });
            p.max(next.map_or(0.0, base) * NEXT_TURN_SHARE)
        });
        let signals = Signals {
            semantic: c.semantic.clamp(0.0, 1.0),
            lexical: lexical(c.lexical_raw),
            recency,
            actor: actor_signal(m, &actors),
            spatial: place
                .as_deref()
                .map_or(0.0, |p| spatial(p, m.w5h1.where_.as_deref().unwrap_or(""))),
            usage: (m.access_count as f64 / max_access) * recency,
            neighbour,
            graph: c.graph,
            temporal: dated_in.max(dated),
            entity: evidence::entity_signal(&entity_keys, &facts),
            clause,
            expand: c.expand,
        };
        let score = match q.mode {
            ScoreMode::Fusion => {
                weights.semantic * signals.semantic
                    + weights.lexical * signals.lexical
                    + weights.recency * signals.recency
                    + weights.actor * signals.actor
                    + weights.spatial * signals.spatial
                    + weights.usage * signals.usage
                    + q.neighbour_weight * signals.neighbour
                    + 0.1 * signals.graph
                    + tuning.temporal * dated_in
                    + tuning.when_prior * dated
                    + tuning.entity * signals.entity
                    + tuning.clause * signals.clause
                    + tuning.expand * signals.expand
            }
            ScoreMode::Context => {
                let r = match m.kind {
                    Kind::Fact => 1.0,
                    _ => (-0.05 * age_days).exp(),
                };
                signals.semantic * m.importance * r
            }
        };
        scored.push((id, signals, score));
    }
    scored.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let spread = tuning.spread
        + if plan.aggregate {
            tuning.spread_aggregate
        } else {
            0.0
        };
    let scored = evidence::spread_sessions(
        scored,
        &|id| memories.get(&id).and_then(|m| m.session.clone()),
        spread,
    );
    let score_ms = ms(t);

    // Build hits: top k, near misses, connected bubbles.
    let t = Instant::now();
    let mk = |id: i64, signals: Signals, score: f64, rank: Option<usize>, origin: Origin| Hit {
        tokens: tokens_of(ctx, &memories[&id]),
        memory: memories[&id].clone(),
        rank,
        origin,
        signals,
        score,
        mmr_score: None,
        mmr_rank: None,
        packed: false,
        attention: None,
    };
    let mut ranked: Vec<Hit> = scored
        .iter()
        .take(q.k + 10)
        .enumerate()
        .map(|(i, &(id, s, score))| mk(id, s, score, Some(i + 1), cands[&id].origin))
        .collect();
    let near_misses = ranked.split_off(ranked.len().min(q.k));
    let mut hits = ranked;

    let in_hits: HashSet<i64> = hits.iter().map(|h| h.memory.id).collect();
    let mut seen = in_hits.clone();
    let mut linked = Vec::new();
    for h in hits.iter().take(CONNECTED_FROM) {
        for (n, _) in read.neighbours(h.memory.id, &[LinkKind::Similar])? {
            if seen.insert(n) {
                linked.push(n);
            }
        }
    }
    let connected: Vec<Hit> = read
        .get_memories(&linked)?
        .into_iter()
        .filter(|m| q.filter.matches(m))
        .map(|m| Hit {
            tokens: tokens_of(ctx, &m),
            memory: m,
            rank: None,
            origin: Origin::Connected,
            signals: Signals::default(),
            score: 0.0,
            mmr_score: None,
            mmr_rank: None,
            packed: false,
            attention: None,
        })
        .collect();

    // MMR over the top k, then exact knapsack under the budget.
    let vecs: Vec<Vec<f32>> = hits
        .iter()
        .map(|h| {
            ctx.index
                .vector(h.memory.id)
                .map(<[f32]>::to_vec)
                .unwrap_or_else(|| vec![0.0; qvec.len()])
        })
        .collect();
    let vec_refs: Vec<&[f32]> = vecs.iter().map(Vec::as_slice).collect();
    let top = hits.first().map_or(1.0, |h| h.score.max(1e-9));
    let relevance: Vec<f64> = hits.iter().map(|h| h.score / top).collect();
    let order = mmr(&relevance, &vec_refs, q.mmr_lambda);
    for (r, &(i, s)) in order.iter().enumerate() {
        hits[i].mmr_score = Some(s);
        hits[i].mmr_rank = Some(r + 1);
    }
    let budget = q.budget.available();
    let values: Vec<f64> = order
        .iter()
        .map(|&(i, s)| s.max(0.0) + 1e-6 * relevance[i])
        .collect();
    let weights_tok: Vec<usize> = order.iter().map(|&(i, _)| hits[i].tokens.max(1)).collect();
    let chosen = knapsack(&values, &weights_tok, budget);
    let context: Vec<i64> = chosen.iter().map(|&j| hits[order[j].0].memory.id).collect();
    let packed_vecs: Vec<&[f32]> = chosen.iter().map(|&j| vec_refs[order[j].0]).collect();
    for (&j, w) in chosen.iter().zip(attention(&qvec, &packed_vecs)) {
        let h = &mut hits[order[j].0];
        h.packed = true;
        h.attention = Some(w);
    }
    let used_tokens = chosen.iter().map(|&j| weights_tok[j]).sum();
    let pack_ms = ms(t);

    Ok(SearchResponse {
        query,
        route,
        route_reason: reason.to_string(),
        mode: q.mode,
        weights,
        vector_path,
        actors,
        candidates_considered: scored.len(),
        hits,
        connected,
        near_misses,
        context,
        budget_tokens: budget,
        used_tokens,
        timings: Timings {
            embed_ms,
            vector_ms,
            lexical_ms,
            score_ms,
            pack_ms,
            total_ms: ms(t0),
        },
    })
}

/// The stored token count, or a count now for memories written before counts were stored.
fn tokens_of(ctx: &SearchCtx<'_>, m: &Memory) -> usize {
    m.tokens
        .map_or_else(|| ctx.embedder.count_tokens(&m.text), |t| t as usize)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Which memories a search may return.
enum Allowed {
    /// The default visibility, nothing hidden.
    All,
    /// The default visibility minus these (forgotten) memories; deleted ones are not indexed.
    Except(HashSet<i64>),
    /// Exactly these (an explicit filter).
    Only(HashSet<i64>),
}

impl Allowed {
    fn allows(&self, id: i64) -> bool {
        match self {
            Allowed::All => true,
            Allowed::Except(s) => !s.contains(&id),
            Allowed::Only(s) => s.contains(&id),
        }
    }
}

/// What `f` allows, and for explicit filters the id list (scanned exactly when small).
fn allowed_ids(read: &Tx<'_>, f: &MemoryFilter) -> Result<(Allowed, Option<Vec<i64>>)> {
    if f.is_default_visibility() {
        let hidden: HashSet<i64> = read
            .filter_ids(&MemoryFilter {
                states: vec![crate::memory::State::Forgotten],
                include_deleted: true,
                ..Default::default()
            })?
            .into_iter()
            .collect();
        let allowed = if hidden.is_empty() {
            Allowed::All
        } else {
            Allowed::Except(hidden)
        };
        return Ok((allowed, None));
    }
    let ids = read.filter_ids(f)?;
    Ok((Allowed::Only(ids.iter().copied().collect()), Some(ids)))
}

/// Actors the query is about: the caller's, else known speaker names found in the query.
fn query_actors(query: &str, actor: Option<&str>, known: &[String]) -> Vec<String> {
    if let Some(a) = actor {
        return vec![a.to_string()];
    }
    let words: HashSet<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_end_matches("'s").to_lowercase())
        .collect();
    known
        .iter()
        .filter(|k| {
            let k = k.to_lowercase();
            words.contains(&k) || (k.contains(' ') && query.to_lowercase().contains(&k))
        })
        .cloned()
        .collect()
}

/// 1.0 when the memory's actor is one the query is about, 0.3 otherwise (seed 003); with
/// no actor in the query every memory gets the same 0.3.
fn actor_signal(m: &Memory, actors: &[String]) -> f64 {
    let who = m.w5h1.who.as_deref().unwrap_or("");
    if !actors.is_empty() && actors.iter().any(|a| a.eq_ignore_ascii_case(who)) {
        1.0
    } else {
        0.3
    }
}

/// Path-component overlap of two locations (seed 003).
fn spatial(a: &str, b: &str) -> f64 {
    let pa: HashSet<&str> = a.split('/').filter(|s| !s.is_empty()).collect();
    let pb: HashSet<&str> = b.split('/').filter(|s| !s.is_empty()).collect();
    let denom = pa.len().max(pb.len());
    if denom == 0 {
        0.0
    } else {
        pa.intersection(&pb).count() as f64 / denom as f64
    }
}

/// The text used for token accounting and display of a memory in a packed context.
pub fn context_line(m: &Memory) -> String {
    let mut s = embedding_text(m.kind, &m.text, &m.w5h1);
    if let Some(w) = &m.w5h1.when {
        s = format!("[{w}] {s}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_weights_sum_to_one_and_bad_ones_are_refused() {
        Weights::default().validate().unwrap();
        let bad = Weights {
            semantic: 0.9,
            ..Weights::default()
        };
        assert_eq!(bad.validate().unwrap_err().code(), "invalid_input");
    }

    #[test]
    fn budget_follows_seed_003() {
        assert_eq!(Budget::default().available(), 6656);
        let tight = Budget {
            conversation_tokens: 100_000,
            ..Budget::default()
        };
        assert_eq!(tight.available(), 0);
    }

    #[test]
    fn actors_are_found_by_name() {
        let known = vec![
            "Caroline".to_string(),
            "Melanie".to_string(),
            "Jon Snow".to_string(),
        ];
        assert_eq!(
            query_actors("What did Caroline's mom say?", None, &known),
            vec!["Caroline"]
        );
        assert_eq!(
            query_actors("where is jon snow", None, &known),
            vec!["Jon Snow"]
        );
        assert!(query_actors("what happened", None, &known).is_empty());
    }

    #[test]
    fn spatial_overlap() {
        assert_eq!(spatial("/a/b/c", "/a/b/d"), 2.0 / 3.0);
        assert_eq!(spatial("", "x"), 0.0);
    }
}
