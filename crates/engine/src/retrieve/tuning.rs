//! Retrieval constants beyond the fusion weights: one weight per evidence stage (time,
//! entities, clauses, graph expansion, session spread). Evaluations tune them by name
//! (`somna eval locomo --folds --grid NAME=…`). Two stages are on by default, at the values
//! leave-one-conversation-out chose (README, "Leave one conversation out"): the time a
//! question names, the when-prior, and the kind of entity a question's answer is.

use serde::{Deserialize, Serialize};

/// Each weight is 0 when its stage is off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct Tuning {
    /// Memories dated within the time a question names ("in May 2023", "in August").
    pub temporal: f64,
    /// For a "when" question: memories that carry a date of their own ("yesterday").
    pub when_prior: f64,
    /// The share of the question's entities a memory names.
    pub entity: f64,
    /// For a question whose answer is a place or a title: memories that name one.
    pub answer_kind: f64,
    /// The best similarity to one part of a multi-part question.
    pub clause: f64,
    /// Reached along a similarity link from a top hit.
    pub expand: f64,
    /// Taken off a hit's score for every better hit from the same session.
    pub spread: f64,
    /// The same, only for questions that ask for several things.
    pub spread_aggregate: f64,
    /// 1: embed the question without its question words ("When did", "What is").
    pub strip_question: f64,
    /// 1: the lexical query leaves out the names of the people it is about ("… the child of
    /// Bob …" searches the other words), whom the actor signal already scores; otherwise a
    /// short memory that only names them ("Bob works as a pastry chef") wins on BM25.
    pub lexical_without_actors: f64,
    /// 1: the question is embedded without the names of the people it is about. A memory's
    /// embedded text starts with its speaker's name, so a short turn that says little
    /// ("Jon: Thanks for having my back.") is near any question naming Jon by the name
    /// alone; the actor signal already scores who a memory is by.
    pub semantic_without_actors: f64,
}

impl Default for Tuning {
    /// The time stages on at the weights the folds chose (every held-out conversation kept
    /// or gained R@10 with them: `temporal` 0.2–0.5 is a plateau, 0.3 its middle); the
    /// stages that did not generalise off. The lexical query without the actors' names: every
    /// fold chose it and every held-out conversation gained R@10 (0.781 → 0.795 on average).
    /// The embedded question without them: every fold chose it, and every held-out
    /// conversation kept or gained R@10 (0.795 → 0.816 on average). Session spread for
    /// questions that ask for several things: chosen by R@10 and All@10 together, every fold
    /// chose it (0.05 in four, 0.03 in one), and every held-out conversation kept or gained
    /// All@10 (multi-hop All@10 0.226 → 0.244, overall R@10 unchanged at 0.816). A place or
    /// a title for questions that ask for one: the folds chose 0.1–0.3 (0.2 in two, the
    /// middle), and every held-out conversation gained R@10 (multi-hop All@10 0.251 → 0.300).
    fn default() -> Self {
        Self {
            temporal: 0.3,
            when_prior: 0.1,
            entity: 0.0,
            answer_kind: 0.2,
            clause: 0.0,
            expand: 0.0,
            spread: 0.0,
            spread_aggregate: 0.05,
            strip_question: 0.0,
            lexical_without_actors: 1.0,
            semantic_without_actors: 1.0,
        }
    }
}

impl Tuning {
    /// Every stage off: ranking by the fusion weights alone.
    pub fn off() -> Self {
        Self {
            temporal: 0.0,
            when_prior: 0.0,
            ..Self::default()
        }
    }

    pub const NAMES: &'static [&'static str] = &[
        "temporal",
        "when_prior",
        "entity",
        "answer_kind",
        "clause",
        "expand",
        "spread",
        "spread_aggregate",
        "strip_question",
        "lexical_without_actors",
        "semantic_without_actors",
    ];

    /// Sets a constant by name; false when there is none of that name.
    pub fn set(&mut self, name: &str, value: f64) -> bool {
        let field = match name {
            "temporal" => &mut self.temporal,
            "when_prior" => &mut self.when_prior,
            "entity" => &mut self.entity,
            "answer_kind" => &mut self.answer_kind,
            "clause" => &mut self.clause,
            "expand" => &mut self.expand,
            "spread" => &mut self.spread,
            "spread_aggregate" => &mut self.spread_aggregate,
            "strip_question" => &mut self.strip_question,
            "lexical_without_actors" => &mut self.lexical_without_actors,
            "semantic_without_actors" => &mut self.semantic_without_actors,
            _ => return false,
        };
        *field = value;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_constant_can_be_set() {
        let mut t = Tuning::default();
        for (i, name) in Tuning::NAMES.iter().enumerate() {
            assert!(t.set(name, i as f64 + 1.0), "{name}");
        }
        let json = serde_json::to_value(t).unwrap();
        for (i, name) in Tuning::NAMES.iter().enumerate() {
            assert_eq!(json[name], i as f64 + 1.0, "{name}");
        }
        assert!(!t.set("nope", 1.0));
    }
}
