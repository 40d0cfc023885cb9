//! The score stage: every signal of every candidate, fused into one score (or the
//! context-mode product), ranked best first, then spread over sessions when tuned.

use super::evidence::{self, MemoryFacts};
use super::gather::{Cand, Candidates};
use super::plan::Plan;
use super::{ScoreMode, SearchQuery, Signals};
use crate::memory::{Kind, Memory};
use std::collections::HashSet;

const DAY_MS: f64 = 86_400_000.0;
/// The pattern route's credit for holding the query's exact patterns (all of them).
const PATTERN_WEIGHT: f64 = 0.2;
/// Adjacent-turn signal: the preceding turn counts fully when it was a question, by this
/// share when it was a statement; the following turn by `NEXT_TURN_SHARE`.
const STATEMENT_SHARE: f64 = 0.5;
const NEXT_TURN_SHARE: f64 = 0.25;

/// (id, signals, score) of each candidate that passes the filter, best first (ties by id).
pub(crate) fn score(
    c: &Candidates,
    plan: &Plan,
    q: &SearchQuery,
    known_actors: &[String],
) -> Vec<(i64, Signals, f64)> {
    let max_access = c
        .memories
        .values()
        .map(|m| m.access_count)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let tuning = plan.tuning;
    // A memory's dates matter only to a question that names a time or asks when.
    let reads_dates = (tuning.temporal > 0.0 && !plan.analysis.times.is_empty())
        || (tuning.when_prior > 0.0 && plan.analysis.asks_when);
    // Its entities, to one that names some or whose answer is of a kind.
    let reads_entities =
        tuning.entity > 0.0 || (tuning.answer_kind > 0.0 && plan.analysis.expects.is_some());
    let entity_keys = evidence::query_entity_keys(&plan.analysis, &plan.actors);
    let mut scored: Vec<(i64, Signals, f64)> = Vec::with_capacity(c.cands.len());
    for (&id, cand) in &c.cands {
        let Some(m) = c.memories.get(&id) else {
            continue;
        };
        if !q.filter.matches(m) {
            continue;
        }
        let facts = if reads_entities {
            evidence::facts_of(m, known_actors)
        } else if reads_dates {
            evidence::dates_of(m)
        } else {
            MemoryFacts::default()
        };
        let e = signals_of(c, plan, id, cand, m, &facts, &entity_keys, max_access);
        scored.push((id, e.signals, fuse(plan, q, m, &e)));
    }
    scored.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let spread = tuning.spread
        + if plan.analysis.aggregate {
            tuning.spread_aggregate
        } else {
            0.0
        };
    evidence::spread_sessions(
        scored,
        &|id| c.memories.get(&id).and_then(|m| m.session.clone()),
        spread,
    )
}

/// A candidate's signals and what its score needs beyond them.
struct Evidence {
    signals: Signals,
    /// Dated within the time the question names.
    dated_in: f64,
    /// Carries a date of its own, for a "when" question.
    dated: f64,
    /// Names an entity of the kind the question's answer is.
    answered: f64,
    age_days: f64,
}

#[allow(clippy::too_many_arguments)]
fn signals_of(
    c: &Candidates,
    plan: &Plan,
    id: i64,
    cand: &Cand,
    m: &Memory,
    facts: &MemoryFacts,
    entity_keys: &[String],
    max_access: f64,
) -> Evidence {
    let (dated_in, dated) = (
        evidence::temporal_signal(&plan.analysis, facts),
        evidence::when_signal(&plan.analysis, facts),
    );
    let age_days = m
        .occurred_at
        .or(Some(m.created_at))
        .map_or(0.0, |t| ((plan.now - t) as f64 / DAY_MS).max(0.0));
    let recency = match m.kind {
        Kind::Fact => 1.0,
        _ => (-std::f64::consts::LN_2 * age_days / 30.0).exp(),
    };
    let signals = Signals {
        semantic: cand.semantic.clamp(0.0, 1.0),
        lexical: c.lexical(cand.lexical_raw),
        recency,
        actor: actor_signal(m, &plan.actors),
        spatial: plan
            .place
            .as_deref()
            .map_or(0.0, |p| spatial(p, m.w5h1.where_.as_deref().unwrap_or(""))),
        usage: (m.access_count as f64 / max_access) * recency,
        neighbour: neighbour_signal(c, plan, id),
        graph: cand.graph,
        temporal: dated_in.max(dated),
        entity: evidence::entity_signal(entity_keys, facts),
        clause: cand.clause,
        expand: cand.expand,
        pattern: super::router::pattern_share(&plan.patterns, &m.text),
    };
    Evidence {
        signals,
        dated_in,
        dated,
        answered: evidence::answer_signal(&plan.analysis, facts),
        age_days,
    }
}

/// The turn a memory replies to carries most of its context (all of it when that turn was
/// a question), the turn after it less.
fn neighbour_signal(c: &Candidates, plan: &Plan, id: i64) -> f64 {
    let w = plan.weights;
    let evidence_weight = (w.semantic + w.lexical).max(1e-9);
    // Semantic and lexical evidence of a candidate, normalised to [0, 1].
    let base = |id: i64| -> f64 {
        c.cands.get(&id).map_or(0.0, |c2| {
            (w.semantic * c2.semantic.clamp(0.0, 1.0) + w.lexical * c.lexical(c2.lexical_raw))
                / evidence_weight
        })
    };
    c.adjacency.get(&id).map_or(0.0, |[prev, next]| {
        let p = prev.map_or(0.0, |p| {
            let asked = c
                .memories
                .get(&p)
                .is_some_and(|m| crate::lang::asks::ends_with_question(&m.text));
            base(p) * if asked { 1.0 } else { STATEMENT_SHARE }
        });
        p.max(next.map_or(0.0, base) * NEXT_TURN_SHARE)
    })
}

/// The score the ranking uses: the weighted sum of the signals (fusion, seed 003) or
/// similarity × importance × recency (context, seed 004).
fn fuse(plan: &Plan, q: &SearchQuery, m: &Memory, e: &Evidence) -> f64 {
    let (w, t, s) = (plan.weights, plan.tuning, &e.signals);
    match q.mode {
        ScoreMode::Fusion => {
            w.semantic * s.semantic
                + w.lexical * s.lexical
                + w.recency * s.recency
                + w.actor * s.actor
                + w.spatial * s.spatial
                + w.usage * s.usage
                + q.neighbour_weight * s.neighbour
                + 0.1 * s.graph
                + PATTERN_WEIGHT * s.pattern
                + t.temporal * e.dated_in
                + t.when_prior * e.dated
                + t.entity * s.entity
                + t.answer_kind * e.answered
                + t.clause * s.clause
                + t.expand * s.expand
        }
        ScoreMode::Context => {
            let r = match m.kind {
                Kind::Fact => 1.0,
                _ => (-0.05 * e.age_days).exp(),
            };
            s.semantic * m.importance * r
        }
    }
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

#[cfg(test)]
mod tests {
    use super::super::fixture::memory;
    use super::super::gather::GatherTimings;
    use super::super::plan::plan;
    use super::*;
    use crate::index::SearchPath;
    use std::collections::HashMap;

    fn cand(semantic: f64, lexical_raw: f64) -> Cand {
        Cand {
            origin: super::super::Origin::Vector,
            semantic,
            lexical_raw,
            graph: 0.0,
            expand: 0.0,
            clause: 0.0,
            via: None,
        }
    }

    /// Memory 1 replies to memory 2's question; memory 3 is Ben's, a week older.
    fn candidates() -> Candidates {
        let mut old = memory(3, "I went hiking.", "Ben");
        old.occurred_at = Some(0);
        let ms = [
            memory(1, "Yes, in Paris.", "Ada"),
            memory(2, "Did you travel?", "Ben"),
            old,
        ];
        Candidates {
            cands: HashMap::from([
                (1, cand(0.5, 0.0)),
                (2, cand(0.8, 2.0)),
                (3, cand(0.9, 4.0)),
            ]),
            memories: ms.into_iter().map(|m| (m.id, m)).collect(),
            adjacency: HashMap::from([(1, [Some(2), None])]),
            qvec: vec![],
            clause_vecs: vec![],
            vector_path: SearchPath::Exact,
            max_bm25: 4.0,
            timings: GatherTimings::default(),
        }
    }

    fn run(q: &SearchQuery) -> Vec<(i64, Signals, f64)> {
        let p = plan(q, false, &["Ada".into(), "Ben".into()], 86_400_000 * 8).unwrap();
        score(&candidates(), &p, q, &["Ada".into(), "Ben".into()])
    }

    #[test]
    fn fusion_is_the_weighted_sum_of_the_signals_best_first() {
        let q = SearchQuery::new("did Ada travel to Paris");
        let r = run(&q);
        let ids: Vec<i64> = r.iter().map(|x| x.0).collect();
        assert_eq!(ids, vec![3, 1, 2], "the reply rises above its question");
        let (_, s, score) = r[1];
        assert_eq!((s.semantic, s.lexical, s.actor), (0.5, 0.0, 1.0));
        let w = q.weights;
        let want = w.semantic * 0.5
            + w.recency * s.recency
            + w.actor * 1.0
            + q.neighbour_weight * s.neighbour;
        assert!((score - want).abs() < 1e-12, "{score} vs {want}");
        assert_eq!(r[0].1.lexical, 1.0);
        assert!(
            r[0].1.recency < r[1].1.recency,
            "older memories are less recent"
        );
    }

    #[test]
    fn a_reply_to_a_question_carries_the_questions_full_evidence() {
        let r = run(&SearchQuery::new("did Ada travel to Paris"));
        let reply = r.iter().find(|x| x.0 == 1).unwrap().1;
        let w = crate::retrieve::Weights::default();
        let base_of_question = (w.semantic * 0.8 + w.lexical * 0.5) / (w.semantic + w.lexical);
        assert!((reply.neighbour - base_of_question).abs() < 1e-12);
        let question = r.iter().find(|x| x.0 == 2).unwrap().1;
        assert_eq!(question.neighbour, 0.0, "no adjacency was gathered for it");
    }

    #[test]
    fn context_mode_is_similarity_times_importance_times_recency() {
        let mut q = SearchQuery::new("did Ada travel to Paris");
        q.mode = ScoreMode::Context;
        let r = run(&q);
        let (_, s, score) = *r.iter().find(|x| x.0 == 1).unwrap();
        assert!((score - s.semantic * 0.5 * (-0.05f64 * 7.0).exp()).abs() < 1e-12);
    }

    #[test]
    fn filtered_out_memories_are_not_scored() {
        let mut q = SearchQuery::new("did Ada travel to Paris");
        q.filter.who = Some("Ada".into());
        let ids: Vec<i64> = run(&q).iter().map(|x| x.0).collect();
        assert_eq!(ids, vec![1]);
    }

    #[test]
    fn actor_and_spatial_signals_follow_seed_003() {
        let m = memory(1, "x", "Ada");
        assert_eq!(actor_signal(&m, &["ada".into()]), 1.0);
        assert_eq!(actor_signal(&m, &["Ben".into()]), 0.3);
        assert_eq!(actor_signal(&m, &[]), 0.3);
        assert_eq!(spatial("/a/b/c", "/a/b/d"), 2.0 / 3.0);
        assert_eq!(spatial("", "x"), 0.0);
    }
}
