//! Search: one request type for every front end, and the compact result agents receive
//! (the app and the CLI's `--json` take the engine's full response with every signal).

use crate::limits::{CONVERSATION_TOKENS, SEARCH_K, SEARCH_WINDOW};
use crate::{Api, Filters};
use serde::{Deserialize, Serialize};
use somna_engine::retrieve::{Budget, Weights};
use somna_engine::{Result, Route, ScoreMode, SearchQuery, SearchResponse};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for, in natural language.
    pub query: String,
    /// How many results (1 to 200, default 10).
    pub k: Option<usize>,
    /// Scoring mode (default fusion).
    pub mode: Option<ScoreMode>,
    /// Force a retrieval route (default: chosen from the query).
    pub route: Option<Route>,
    /// Restrict the candidates.
    pub filters: Option<Filters>,
    /// Search the store as it was at this instant (Unix milliseconds): the memories that
    /// existed then, ranked by their texts and states of then. The result says so.
    pub as_of: Option<i64>,
}

/// How the front end runs a search; not part of what an agent may ask.
#[derive(Debug, Clone, Copy)]
pub struct SearchOptions {
    /// Count the hits as accessed (their usage signal). An agent's search does; looking at
    /// memories in the app does not.
    pub track: bool,
    /// The context window the result is packed for.
    pub budget: Budget,
    /// Fusion weights in place of the defaults (they must sum to 1).
    pub weights: Option<Weights>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            track: true,
            budget: Budget::default(),
            weights: None,
        }
    }
}

/// The app's search: a search with the context window and fusion weights a person set in
/// the X-ray (left out: the defaults).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct TunedSearchArgs {
    pub search: SearchArgs,
    /// The context window in tokens (2048 to 200000, default 8192); the system and output
    /// reserves come out of it.
    pub window: Option<usize>,
    /// Fusion weights, each within 0..=1, summing to 1.
    pub weights: Option<Weights>,
}

/// What the X-ray's tuning starts from and resets to: the default fusion weights and context
/// window, the reserves taken out of the window, and the window's range.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchDefaults {
    pub weights: Weights,
    pub window: usize,
    pub system_reserve: usize,
    pub output_reserve: usize,
    pub window_min: usize,
    pub window_max: usize,
}

impl Default for SearchDefaults {
    fn default() -> Self {
        let b = Budget::default();
        Self {
            weights: Weights::default(),
            window: b.window,
            system_reserve: b.system_reserve,
            output_reserve: b.output_reserve,
            window_min: SEARCH_WINDOW.min,
            window_max: SEARCH_WINDOW.max,
        }
    }
}

impl TunedSearchArgs {
    /// The search and the options it runs with: `track` as given, the window and weights
    /// as set (checked when the search runs).
    pub fn split(self, track: bool) -> (SearchArgs, SearchOptions) {
        let budget = Budget {
            window: self.window.unwrap_or(Budget::default().window),
            ..Budget::default()
        };
        let opts = SearchOptions {
            track,
            budget,
            weights: self.weights,
        };
        (self.search, opts)
    }
}

impl SearchArgs {
    /// The engine's query, after the one set of checks (non-empty query, `k` in range,
    /// a time range that is not reversed, a context window and conversation size in range).
    pub fn to_query(&self, budget: Budget) -> Result<SearchQuery> {
        if self.query.trim().is_empty() {
            return Err(somna_engine::Error::InvalidInput(
                "query must not be empty".into(),
            ));
        }
        let mut q = SearchQuery::new(self.query.clone());
        q.k = SEARCH_K.check(self.k)?;
        q.mode = self.mode.unwrap_or_default();
        q.route = self.route;
        q.filter = self.filters.clone().unwrap_or_default().to_filter()?;
        q.as_of = self.as_of;
        q.budget = checked_budget(budget)?;
        Ok(q)
    }
}

/// `budget` if its window and conversation size are within the limits (every front end's
/// budget passes here: the CLI's `--window`, the defaults of the server and the app).
fn checked_budget(budget: Budget) -> Result<Budget> {
    SEARCH_WINDOW.check(Some(budget.window))?;
    CONVERSATION_TOKENS.check(Some(budget.conversation_tokens))?;
    Ok(budget)
}

/// One search result, as agents receive it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SearchHit {
    pub id: i64,
    /// 1-based rank.
    pub rank: Option<usize>,
    /// The score the ranking used (fused or context-mode).
    pub score: f64,
    /// How the candidate was found: vector, lexical, both, graph, adjacent, date.
    pub origin: String,
    pub kind: String,
    pub text: String,
    pub who: Option<String>,
    pub conversation: Option<String>,
    /// Unix milliseconds.
    pub occurred_at: Option<i64>,
    pub importance: f64,
    /// Why it matched beyond its score: the date that met the question's time, the
    /// question's entities or exact strings it holds, the link it was reached by.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// A search's ranked hits, as agents receive them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SearchResult {
    pub query: String,
    pub route: String,
    pub mode: String,
    pub hits: Vec<SearchHit>,
    pub candidates_considered: usize,
    pub total_ms: f64,
    /// Set when the hits are the store as it was at this instant (Unix ms), not now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<i64>,
}

impl From<SearchResponse> for SearchResult {
    fn from(r: SearchResponse) -> Self {
        SearchResult {
            route: snake(&r.route),
            mode: snake(&r.mode),
            hits: r
                .hits
                .into_iter()
                .map(|h| SearchHit {
                    id: h.memory.id,
                    rank: h.rank,
                    score: h.score,
                    origin: snake(&h.origin),
                    kind: h.memory.kind.to_string(),
                    text: h.memory.text,
                    who: h.memory.w5h1.who,
                    conversation: h.memory.conversation,
                    occurred_at: h.memory.occurred_at,
                    importance: h.memory.importance,
                    why: h.reasons.iter().map(ToString::to_string).collect(),
                })
                .collect(),
            query: r.query,
            candidates_considered: r.candidates_considered,
            total_ms: r.timings.total_ms,
            as_of: r.as_of,
        }
    }
}

/// The snake_case name of a serde unit enum value (route, mode, origin).
fn snake<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

impl Api {
    /// Hybrid search with the engine's full response (every signal of every hit), ranked
    /// with the saved fusion weights.
    pub fn search(&self, args: &SearchArgs, opts: SearchOptions) -> Result<SearchResponse> {
        let mut q = args.to_query(opts.budget)?;
        // The X-ray's weights for this search when a person set them, else the saved ones.
        q.weights = match opts.weights {
            Some(w) => {
                w.validate()?;
                w
            }
            None => self.engine().settings()?.weights,
        };
        if opts.track {
            self.engine().search(&q)
        } else {
            self.engine().search_readonly(&q)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(query: &str, k: Option<usize>) -> SearchArgs {
        SearchArgs {
            query: query.into(),
            k,
            mode: None,
            route: None,
            filters: None,
            as_of: None,
        }
    }

    #[test]
    fn an_empty_query_is_refused() {
        let e = args("  ", None).to_query(Budget::default()).unwrap_err();
        assert!(e.to_string().contains("query must not be empty"), "{e}");
    }

    #[test]
    fn k_above_the_front_end_limit_is_refused_though_the_engine_would_take_it() {
        let e = args("x", Some(201))
            .to_query(Budget::default())
            .unwrap_err();
        assert!(
            e.to_string().contains("k must be 1 to 200 (got 201)"),
            "{e}"
        );
        assert_eq!(args("x", None).to_query(Budget::default()).unwrap().k, 10);
    }

    #[test]
    fn a_huge_context_window_or_conversation_is_refused_before_anything_is_allocated() {
        for window in [100_000_000_000_000, usize::MAX, 200_001, 0] {
            let budget = Budget {
                window,
                ..Budget::default()
            };
            let e = args("x", None).to_query(budget).unwrap_err();
            assert_eq!(e.code(), "invalid_input");
            assert!(
                e.to_string().contains("window must be 2048 to 200000"),
                "{e}"
            );
        }
        let budget = Budget {
            conversation_tokens: usize::MAX,
            ..Budget::default()
        };
        let e = args("x", None).to_query(budget).unwrap_err();
        assert!(
            e.to_string()
                .contains("conversation_tokens must be 0 to 200000"),
            "{e}"
        );
        let widest = Budget {
            window: 200_000,
            conversation_tokens: 200_000,
            ..Budget::default()
        };
        assert_eq!(args("x", None).to_query(widest).unwrap().budget, widest);
    }
}
