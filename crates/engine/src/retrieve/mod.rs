//! Retrieval, as stages over values: `plan` routes the query and sets its weights;
//! `gather` collects candidates from the [`sources::Sources`] (vector, lexical, graph,
//! adjacent turns) into `Candidates`; `score` gives every candidate every signal and fuses
//! them; `assemble` ranks, adds connected bubbles and re-ranks with MMR; `pack` fills the
//! token budget. Every number that decided the outcome is in the response, so the
//! retrieval debugger can show why.

mod as_of;
mod assemble;
mod causal;
pub mod evidence;
#[cfg(test)]
pub(crate) mod fixture;
mod gather;
pub mod overlay;
mod pack;
mod plan;
pub(crate) use plan::embedded_question;
mod reasons;
mod router;
mod score;
pub mod sources;
mod tuning;

pub use pack::{attention, knapsack, mmr};
pub use reasons::{Question, Reason};
pub use router::{classify, Route};
pub use tuning::Tuning;

use crate::embed::Embedder;
use crate::index::{SearchPath, VectorIndex};
use crate::memory::{embedding_text, Memory};
use crate::store::{MemoryFilter, Store};
use crate::timetravel::AsOf;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use sources::StoreSources;
use std::time::Instant;

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
pub struct Weights {
    pub semantic: f64,
    pub lexical: f64,
    pub recency: f64,
    pub actor: f64,
    pub spatial: f64,
    pub usage: f64,
}

impl Default for Weights {
    /// SPEC's fusion weights with 0.20 moved from semantic to lexical (SPEC: 0.55 and
    /// 0.20): leave-one-conversation-out chose lexical 0.40 over 0.20, 0.30, 0.50 and 0.60
    /// in every fold, and every held-out conversation gained (README, "Leave one
    /// conversation out").
    fn default() -> Self {
        Self {
            semantic: 0.35,
            lexical: 0.40,
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
            Route::Pattern | Route::Causal | Route::Hybrid => self,
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
    /// Time the recency signals are measured from (Unix ms); `as_of`, else now, if `None`.
    #[serde(default)]
    pub recency_from: Option<i64>,
    /// Searches the store as it was at this instant (Unix ms): the memories that existed
    /// then, with their texts, states and fields of then (time travel). Records no access.
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
            recency_from: None,
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
    /// The share of the query's exact patterns (quoted phrases, code-like tokens) the
    /// memory holds; scored on the pattern route.
    #[serde(default)]
    pub pattern: f64,
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
    /// Happened within a time the question names.
    Date,
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
    /// Why it matched beyond its scores: dates, entities, links (hits and near misses).
    #[serde(default)]
    pub reasons: Vec<Reason>,
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
    /// What the search read in the question: whether it asks when, the times and entities
    /// it names.
    #[serde(default)]
    pub question: Question,
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
    /// Set when the search was of the store as it was at this instant (Unix ms): the hits
    /// are historical, as they were then.
    #[serde(default)]
    pub as_of: Option<i64>,
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

/// Connected bubbles are gathered from this many top results (seed 004: "for top
/// results"); similarity links are followed from as many of the strongest candidates.
const CONNECTED_FROM: usize = 5;

/// Runs a search as a pipeline over values: plan (from the query alone) → gather
/// (candidates from every source) → score (signals and fusion) → assemble (hits, near
/// misses, connected bubbles, MMR order) → pack (the token budget).
pub fn search(ctx: &SearchCtx<'_>, q: &SearchQuery) -> Result<SearchResponse> {
    let t0 = Instant::now();
    let plan = plan::plan(
        q,
        ctx.has_causal_links,
        ctx.known_actors,
        crate::store::now_ms(),
    )?;
    // Every read of one search sees one snapshot of the store (and takes its lock once).
    ctx.store.snapshot(|read| {
        let sources = StoreSources::new(read, ctx.index);
        match q.as_of {
            None => run(&sources, ctx, &plan, q, t0),
            Some(at) => {
                let then = AsOf::read(read, at)?;
                let sources = as_of::AsOfSources::new(sources, &then, ctx.embedder)?;
                let mut response = run(&sources, ctx, &plan, q, t0)?;
                response.as_of = Some(at);
                Ok(response)
            }
        }
    })
}

/// [`search`] over the store as `overlay` says a sleep cycle would leave it (the what-if
/// simulator): its forgotten memories hidden, its states and importances in place. Not
/// with `as_of`. `reads` keeps answers across a simulation's searches: the store's (shared
/// by every overlay) and this overlay's own.
pub fn search_with_overlay(
    ctx: &SearchCtx<'_>,
    q: &SearchQuery,
    overlay: &overlay::Overlay,
    reads: (&overlay::Reads, &overlay::Reads),
) -> Result<SearchResponse> {
    if q.as_of.is_some() {
        return Err(Error::InvalidInput(
            "a what-if search is of the store as a cycle would leave it, not as of a time".into(),
        ));
    }
    let t0 = Instant::now();
    let plan = plan::plan(
        q,
        ctx.has_causal_links,
        ctx.known_actors,
        crate::store::now_ms(),
    )?;
    ctx.store.snapshot(|read| {
        let sources = overlay::OverlaySources {
            inner: StoreSources::new(read, ctx.index),
            overlay,
            shared: reads.0,
            own: reads.1,
        };
        run(&sources, ctx, &plan, q, t0)
    })
}

/// The stages after planning, over one set of sources.
fn run<S: sources::Sources>(
    sources: &S,
    ctx: &SearchCtx<'_>,
    plan: &plan::Plan,
    q: &SearchQuery,
    t0: Instant,
) -> Result<SearchResponse> {
    let candidates = gather::gather(sources, ctx.embedder, plan, q)?;
    let t = Instant::now();
    let ranked = score::score(&candidates, plan, q, ctx.known_actors);
    let score_ms = candidates.timings.graph_ms + ms(t);
    let t = Instant::now();
    let mut assembled = assemble::assemble(sources, ctx.embedder, &candidates, &ranked, q)?;
    reasons::explain(&mut assembled.hits, plan, &candidates, ctx.known_actors);
    reasons::explain(
        &mut assembled.near_misses,
        plan,
        &candidates,
        ctx.known_actors,
    );
    let budget = q.budget.available();
    let packed = pack::pack(&mut assembled, &candidates.qvec, budget);
    let pack_ms = ms(t);
    let g = candidates.timings;
    Ok(SearchResponse {
        query: plan.query.clone(),
        route: plan.route,
        route_reason: plan.route_reason.to_string(),
        mode: q.mode,
        weights: plan.weights,
        vector_path: candidates.vector_path,
        actors: plan.actors.clone(),
        question: Question::of(plan),
        candidates_considered: ranked.len(),
        hits: assembled.hits,
        connected: assembled.connected,
        near_misses: assembled.near_misses,
        context: packed.context,
        budget_tokens: budget,
        used_tokens: packed.used_tokens,
        as_of: None,
        timings: Timings {
            embed_ms: g.embed_ms,
            vector_ms: g.vector_ms,
            lexical_ms: g.lexical_ms,
            score_ms,
            pack_ms,
            total_ms: ms(t0),
        },
    })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
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
}
