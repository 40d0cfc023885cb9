//! The plan stage: everything a search decides from the query alone, before it reads the
//! store. Validation, the route and its weights, the clock, the candidate pool, the actors
//! and place the query names, and the texts to embed.

use super::evidence;
use super::router::{classify, Route};
use super::{ScoreMode, SearchQuery, Tuning, Weights};
use crate::lang::query::{analyse, QueryPlan};
use crate::text::find_location;
use crate::{Error, Result};
use std::collections::HashSet;

/// Queries longer than this (in characters) are cut before lexical matching.
const MAX_QUERY_CHARS: usize = 4_000;

/// What a search will do, decided from the query.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The query, trimmed and cut to `MAX_QUERY_CHARS`.
    pub query: String,
    pub route: Route,
    pub route_reason: &'static str,
    /// The caller's weights as the route uses them.
    pub weights: Weights,
    pub tuning: Tuning,
    /// Unix ms the recency signals are measured from.
    pub now: i64,
    /// Candidates each source is asked for.
    pub pool: usize,
    /// Times, entities, clauses and the "when"/aggregate shape of the question.
    pub analysis: QueryPlan,
    /// Actors the query is about.
    pub actors: Vec<String>,
    /// A location the query names.
    pub place: Option<String>,
    /// The texts embedded: the question first, then the parts of a multi-part question.
    pub to_embed: Vec<String>,
    /// The exact strings the pattern route looks for (quoted phrases, code-like tokens).
    pub patterns: Vec<String>,
    /// The text the lexical stage searches: the query, without the actors' names when
    /// [`Tuning::lexical_without_actors`] is on and other words remain.
    pub lexical_query: String,
}

/// Validates `q` and plans its search; `now` is used unless the query fixes the time.
pub(crate) fn plan(
    q: &SearchQuery,
    has_causal_links: bool,
    known_actors: &[String],
    now: i64,
) -> Result<Plan> {
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
    let (route, route_reason) = match q.route {
        Some(r) => (r, "forced by the caller"),
        None => classify(&query, has_causal_links),
    };
    let tuning = q.tuning;
    let analysis = analyse(&query, known_actors);
    // What is embedded: the question (without its question words, if so tuned), then the
    // parts of a multi-part question.
    let actors = query_actors(&query, q.actor.as_deref(), known_actors);
    let mut to_embed = vec![question_text(&query, &tuning, &actors)];
    if tuning.clause > 0.0 {
        to_embed.extend(analysis.clauses.iter().cloned());
    }
    let lexical_query = if tuning.lexical_without_actors > 0.0 {
        without_names(&query, &actors)
    } else {
        query.clone()
    };
    Ok(Plan {
        actors,
        lexical_query,
        place: find_location(&query),
        route,
        route_reason,
        weights: q.weights.for_route(route),
        tuning,
        now: q.recency_from.or(q.as_of).unwrap_or(now),
        pool: pool(q.k),
        analysis,
        to_embed,
        patterns: if route == Route::Pattern {
            super::router::patterns(&query)
        } else {
            Vec::new()
        },
        query,
    })
}

/// The text a search embeds for the question `query` (trimmed and cut): without its
/// question words and without the names of `actors`, as `tuning` says.
fn question_text(query: &str, tuning: &Tuning, actors: &[String]) -> String {
    let question = if tuning.strip_question > 0.0 {
        evidence::strip_question(query)
    } else {
        query.to_string()
    };
    if tuning.semantic_without_actors > 0.0 {
        without_names(&question, actors)
    } else {
        question
    }
}

/// The text a search for `q` embeds for its question, given the store's speaker names
/// (`known_actors`): what a saved vector for `q` must be the vector of.
pub(crate) fn embedded_question(q: &SearchQuery, known_actors: &[String]) -> String {
    let query: String = q.query.trim().chars().take(MAX_QUERY_CHARS).collect();
    let actors = query_actors(&query, q.actor.as_deref(), known_actors);
    question_text(&query, &q.tuning, &actors)
}

/// Candidates each source brings: five per result up to [`POOL_FULL`], then k plus
/// [`POOL_MARGIN`]. Fusion re-ranks the pool, so it must reach past the vector top k; at
/// k = 200 five per result (1,000) cost 2.5× the time of k = 10 in loading memories and
/// adjacent turns, for candidates ranked far below the cut.
fn pool(k: usize) -> usize {
    (k.max(10) * 5).min(POOL_FULL.max(k + POOL_MARGIN))
}

/// The pool below which five candidates per result are gathered (k ≤ 60, the depth the
/// LoCoMo evaluation ranks to).
const POOL_FULL: usize = 300;
/// Candidates beyond k gathered once k is over 60.
const POOL_MARGIN: usize = 150;

/// `query` without the words that are one of `names` (or their possessive, "Bob's"); the
/// query itself when nothing else would remain.
fn without_names(query: &str, names: &[String]) -> String {
    let is_name = |w: &str| {
        let w = w.trim_end_matches("'s").trim_end_matches("’s");
        names.iter().any(|n| n.eq_ignore_ascii_case(w))
    };
    let mut out = String::with_capacity(query.len());
    let mut at = 0;
    for w in crate::lang::words(query) {
        if is_name(&query[w.start..w.end]) {
            out.push_str(&query[at..w.start]);
            at = w.end;
        }
    }
    out.push_str(&query[at..]);
    if crate::lang::words(&out).is_empty() {
        query.to_string()
    } else {
        out
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        vec![
            "Caroline".to_string(),
            "Melanie".to_string(),
            "Jon Snow".to_string(),
        ]
    }

    #[test]
    fn the_lexical_query_can_leave_out_the_names_of_its_actors() {
        let names = ["Bob".to_string()];
        assert_eq!(
            without_names("What is the child of Bob learning? And Bob's wife?", &names),
            "What is the child of  learning? And  wife?"
        );
        assert_eq!(without_names("Bob", &names), "Bob");
        assert_eq!(without_names("Bobby plays", &names), "Bobby plays");
    }

    #[test]
    fn actors_are_found_by_name() {
        assert_eq!(
            query_actors("What did Caroline's mom say?", None, &known()),
            vec!["Caroline"]
        );
        assert_eq!(
            query_actors("where is jon snow", None, &known()),
            vec!["Jon Snow"]
        );
        assert!(query_actors("what happened", None, &known()).is_empty());
    }

    #[test]
    fn an_empty_query_a_bad_k_and_bad_weights_are_refused() {
        let mut q = SearchQuery::new("   ");
        assert_eq!(plan(&q, false, &[], 0).unwrap_err().code(), "invalid_input");
        q.query = "kafka".into();
        q.k = 0;
        assert_eq!(plan(&q, false, &[], 0).unwrap_err().code(), "invalid_input");
        q.k = 1001;
        assert_eq!(plan(&q, false, &[], 0).unwrap_err().code(), "invalid_input");
        q.k = 10;
        q.weights.semantic = 0.9;
        assert_eq!(plan(&q, false, &[], 0).unwrap_err().code(), "invalid_input");
        q.mode = ScoreMode::Context;
        assert!(
            plan(&q, false, &[], 0).is_ok(),
            "context mode ignores weights"
        );
    }

    #[test]
    fn the_route_is_classified_unless_forced_and_direct_moves_lexical_weight_to_semantic() {
        let mut q = SearchQuery::new("  why did the build fail  ");
        let p = plan(&q, true, &[], 0).unwrap();
        assert_eq!(
            (p.route, p.query.as_str()),
            (Route::Causal, "why did the build fail")
        );
        assert_eq!(p.weights, Weights::default());
        q.route = Some(Route::Direct);
        let p = plan(&q, true, &[], 0).unwrap();
        assert_eq!(
            (p.route, p.route_reason),
            (Route::Direct, "forced by the caller")
        );
        assert_eq!(p.weights.lexical, 0.0);
        assert!((p.weights.semantic - 0.75).abs() < 1e-12);
    }

    #[test]
    fn the_pool_clock_actors_and_place_come_from_the_query() {
        let mut q = SearchQuery::new("What did Melanie do in /home/ada/projects?");
        q.k = 30;
        let p = plan(&q, false, &known(), 1_000).unwrap();
        assert_eq!((p.pool, p.now), (150, 1_000));
        assert_eq!(p.actors, vec!["Melanie"]);
        assert_eq!(p.place, find_location(&q.query));
        q.k = 1;
        q.recency_from = Some(5);
        q.actor = Some("Ada".into());
        let p = plan(&q, false, &known(), 1_000).unwrap();
        assert_eq!((p.pool, p.now), (50, 5));
        assert_eq!((pool(60), pool(100), pool(200)), (300, 300, 350));
        assert_eq!(p.actors, vec!["Ada"]);
    }

    #[test]
    fn clauses_are_embedded_only_when_tuned_and_questions_stripped_only_when_tuned() {
        let mut q = SearchQuery::new("When did Caroline go hiking and what did Melanie paint?");
        q.tuning.semantic_without_actors = 0.0;
        let p = plan(&q, false, &known(), 0).unwrap();
        assert_eq!(p.to_embed, vec![p.query.clone()]);
        q.tuning.clause = 0.1;
        q.tuning.strip_question = 1.0;
        let p = plan(&q, false, &known(), 0).unwrap();
        assert_eq!(p.to_embed[0], evidence::strip_question(&p.query));
        assert_eq!(&p.to_embed[1..], p.analysis.clauses.as_slice());
    }

    #[test]
    fn the_question_is_embedded_without_the_names_of_its_actors_by_default() {
        let mut q = SearchQuery::new("Which cities has Melanie visited?");
        let p = plan(&q, false, &known(), 0).unwrap();
        assert_eq!(p.to_embed, vec!["Which cities has  visited?".to_string()]);
        assert_eq!(p.actors, vec!["Melanie"]);
        // A question that is only a name keeps it: nothing else would be embedded.
        q.query = "Melanie".into();
        assert_eq!(
            plan(&q, false, &known(), 0).unwrap().to_embed,
            vec!["Melanie"]
        );
        q.query = "Which cities has Melanie visited?".into();
        q.tuning.semantic_without_actors = 0.0;
        assert_eq!(
            plan(&q, false, &known(), 0).unwrap().to_embed,
            vec![q.query.clone()]
        );
    }

    #[test]
    fn the_embedded_question_is_what_the_plan_embeds() {
        for text in [
            "  Which cities has Melanie visited? ",
            "Melanie",
            "where is jon snow",
        ] {
            let mut q = SearchQuery::new(text);
            for (strip, names) in [(0.0, 1.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)] {
                q.tuning.strip_question = strip;
                q.tuning.semantic_without_actors = names;
                let p = plan(&q, false, &known(), 0).unwrap();
                assert_eq!(embedded_question(&q, &known()), p.to_embed[0], "{text}");
            }
        }
    }
}
