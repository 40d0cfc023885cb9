//! Evidence beyond similarity, read from a question's plan ([`crate::lang::query`]) and a
//! memory's text: whether the memory is dated within the time the question names, whether
//! it carries a date at all (for "when" questions), which of the question's entities it
//! names; and the session spread that keeps one session from filling the top of a list.

use crate::lang::entities::{extract_entities, Entity};
use crate::lang::query::QueryPlan;
use crate::lang::time::{day_of_ms, find_times, DayRange, When};
use crate::memory::Memory;
use std::collections::HashMap;

/// What a memory says about time and names, computed once per candidate.
#[derive(Debug, Clone, Default)]
pub struct MemoryFacts {
    /// The day it happened and the days its text refers to (vague ones left out).
    pub dates: Vec<DayRange>,
    /// The phrase each of `dates` was written as; none for the day it happened.
    pub phrases: Vec<Option<String>>,
    /// Whether its text refers to a time of its own.
    pub dated_text: bool,
    /// The entities its text names (key, kind and the words written).
    pub entities: Vec<Entity>,
}

/// Reads a memory's dates and entities; `known` are the store's speakers.
pub fn facts_of(m: &Memory, known: &[String]) -> MemoryFacts {
    MemoryFacts {
        entities: extract_entities(&m.text, m.w5h1.who.as_deref(), known),
        ..dates_of(m)
    }
}

/// Reads a memory's dates only: the day it happened and the days its text refers to,
/// resolved against that day.
pub fn dates_of(m: &Memory) -> MemoryFacts {
    let day = m.occurred_at.and_then(day_of_ms);
    let mut dates: Vec<DayRange> = day.map(DayRange::day).into_iter().collect();
    let mut phrases: Vec<Option<String>> = dates.iter().map(|_| None).collect();
    let mut dated_text = false;
    for t in find_times(&m.text, day) {
        if let When::Range(r) = t.when {
            if !t.vague {
                dates.push(r);
                phrases.push(Some(t.phrase));
                dated_text = true;
            }
        }
    }
    MemoryFacts {
        dates,
        phrases,
        dated_text,
        entities: Vec::new(),
    }
}

/// For a question whose answer is a place or a title ([`QueryPlan::expects`]): 1 when the
/// memory names one of that kind, else 0.
pub fn answer_signal(plan: &QueryPlan, facts: &MemoryFacts) -> f64 {
    match plan.expects {
        Some(kind) if facts.entities.iter().any(|e| e.kind == kind) => 1.0,
        _ => 0.0,
    }
}

/// How well a memory's dates meet the times the question names: 1 on overlap, falling
/// with the gap (half at a week). 0 when the question names no time.
pub fn temporal_signal(plan: &QueryPlan, facts: &MemoryFacts) -> f64 {
    plan.times
        .iter()
        .flat_map(|t| facts.dates.iter().map(move |d| t.when.gap_days(d)))
        .map(|gap| 1.0 / (1.0 + gap as f64 / 7.0))
        .fold(0.0, f64::max)
}

/// 1 when the question asks "when" and the memory's text carries a date of its own.
pub fn when_signal(plan: &QueryPlan, facts: &MemoryFacts) -> f64 {
    if plan.asks_when && facts.dated_text {
        1.0
    } else {
        0.0
    }
}

/// The question's entity keys that are not just the speakers (the actor signal covers
/// those).
pub fn query_entity_keys(plan: &QueryPlan, actors: &[String]) -> Vec<String> {
    plan.entities
        .iter()
        .map(|e| e.key.clone())
        .filter(|k| !actors.iter().any(|a| a.eq_ignore_ascii_case(k)))
        .collect()
}

/// The share of the question's entity keys the memory names.
pub fn entity_signal(keys: &[String], facts: &MemoryFacts) -> f64 {
    if keys.is_empty() {
        return 0.0;
    }
    let hit = keys
        .iter()
        .filter(|k| {
            facts.entities.iter().any(|e| {
                let e = &e.key;
                e == *k || e.ends_with(&format!(" {k}")) || k.ends_with(&format!(" {e}"))
            })
        })
        .count();
    hit as f64 / keys.len() as f64
}

/// Re-orders `scored` (best first) so that each hit loses `penalty` for every better hit
/// from the same session: a greedy pass that takes the best adjusted score each time.
/// Hits without a session are never penalised.
pub fn spread_sessions<T>(
    scored: Vec<(i64, T, f64)>,
    session_of: &dyn Fn(i64) -> Option<String>,
    penalty: f64,
) -> Vec<(i64, T, f64)> {
    if penalty <= 0.0 || scored.len() < 2 {
        return scored;
    }
    let sessions: Vec<Option<String>> = scored.iter().map(|s| session_of(s.0)).collect();
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut left: Vec<Option<(i64, T, f64)>> = scored.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(left.len());
    let adjusted = |score: f64, s: &Option<String>, taken: &HashMap<String, usize>| {
        score - penalty * s.as_ref().map_or(0, |s| taken.get(s).copied().unwrap_or(0)) as f64
    };
    for _ in 0..left.len() {
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in left.iter().enumerate() {
            let Some(c) = c else { continue };
            let a = adjusted(c.2, &sessions[i], &taken);
            if best.is_none_or(|b| a > b.1) {
                best = Some((i, a));
            }
        }
        let Some((i, _)) = best else { break };
        if let Some(s) = &sessions[i] {
            *taken.entry(s.clone()).or_default() += 1;
        }
        out.extend(left[i].take());
    }
    out
}

/// The question without its question words, closer to how a statement of the answer
/// reads: "When did Caroline go to the support group?" → "Caroline go to the support
/// group".
pub fn strip_question(q: &str) -> String {
    const OPENERS: &[&str] = &[
        "when", "what", "which", "who", "whom", "whose", "where", "why", "how", "did", "does",
        "do", "is", "are", "was", "were", "has", "have", "had", "would", "could", "will", "can",
        "should", "long", "many", "much", "kind", "kinds", "type", "types", "of", "in", "year",
        "month", "day", "date", "time",
    ];
    let words: Vec<&str> = q.split_whitespace().collect();
    let skip = words
        .iter()
        .take_while(|w| {
            let w = w
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            OPENERS.contains(&w.as_str())
        })
        .count();
    let rest = words[skip..].join(" ");
    let rest = rest.trim_end_matches(['?', '.', '!']).trim();
    if rest.split_whitespace().count() < 2 {
        q.to_string()
    } else {
        rest.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::query::analyse;
    use crate::memory::{Kind, W5H1};

    fn memory(text: &str, who: &str, day: (i32, u32, u32)) -> Memory {
        let at = chrono::NaiveDate::from_ymd_opt(day.0, day.1, day.2)
            .unwrap()
            .and_hms_opt(13, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp_millis();
        Memory {
            id: 1,
            kind: Kind::Episode,
            text: text.into(),
            w5h1: W5H1 {
                who: Some(who.into()),
                ..Default::default()
            },
            conversation: None,
            session: None,
            occurred_at: Some(at),
            created_at: at,
            updated_at: at,
            importance: 0.5,
            novelty: 0.5,
            access_count: 0,
            last_accessed: None,
            state: crate::memory::State::Active,
            tags: vec![],
            source: crate::memory::Source::UserInput,
            l_score: 1.0,
            metadata: serde_json::json!({}),
            details: crate::memory::Details::None,
            deleted_at: None,
            tokens: None,
            pinned: false,
            valid_from: None,
            valid_to: None,
            superseded_by: None,
        }
    }

    fn known() -> Vec<String> {
        vec!["Caroline".into(), "Melanie".into()]
    }

    #[test]
    fn a_memory_dated_in_the_asked_time_scores_above_one_outside_it() {
        let plan = analyse(
            "When did Caroline attend a pride parade in August?",
            &known(),
        );
        let inside = facts_of(
            &memory("The parade was fun!", "Caroline", (2023, 8, 14)),
            &known(),
        );
        // Said in September about "last month": the text's own date is in August.
        let by_text = facts_of(
            &memory(
                "I went to a pride parade last month.",
                "Caroline",
                (2023, 9, 3),
            ),
            &known(),
        );
        let outside = facts_of(
            &memory("The parade was fun!", "Caroline", (2023, 11, 20)),
            &known(),
        );
        assert_eq!(temporal_signal(&plan, &inside), 1.0);
        assert_eq!(temporal_signal(&plan, &by_text), 1.0);
        assert!(temporal_signal(&plan, &outside) < 0.3);
        let timeless = analyse("What does Caroline like?", &known());
        assert_eq!(temporal_signal(&timeless, &inside), 0.0);
    }

    #[test]
    fn when_questions_favour_memories_that_carry_a_date() {
        let plan = analyse("When did Caroline go to the support group?", &known());
        let dated = facts_of(
            &memory(
                "I went to a support group yesterday.",
                "Caroline",
                (2023, 5, 8),
            ),
            &known(),
        );
        let undated = facts_of(
            &memory("The support group was great.", "Caroline", (2023, 5, 8)),
            &known(),
        );
        assert_eq!(when_signal(&plan, &dated), 1.0);
        assert_eq!(when_signal(&plan, &undated), 0.0);
        let what = analyse("What did Caroline find at the support group?", &known());
        assert_eq!(when_signal(&what, &dated), 0.0);
    }

    #[test]
    fn answer_signal_finds_memories_naming_the_kind_the_question_asks_for() {
        let cities = analyse("Which cities has Jon visited?", &known());
        let rome = facts_of(
            &memory(
                "We spent a week in Rome, amazing food.",
                "Jon",
                (2023, 7, 1),
            ),
            &known(),
        );
        let nothing = facts_of(
            &memory("Thanks for having my back!", "Jon", (2023, 7, 1)),
            &known(),
        );
        assert_eq!(answer_signal(&cities, &rome), 1.0);
        assert_eq!(answer_signal(&cities, &nothing), 0.0);
        let books = analyse("What books has Melanie read?", &known());
        let title = facts_of(
            &memory(
                "I just finished \"Charlotte's Web\" with the kids.",
                "Melanie",
                (2023, 7, 1),
            ),
            &known(),
        );
        assert_eq!(answer_signal(&books, &title), 1.0);
        assert_eq!(answer_signal(&books, &rome), 0.0, "a place is not a title");
        let other = analyse("What did Jon eat?", &known());
        assert_eq!(answer_signal(&other, &rome), 0.0, "no kind asked");
    }

    #[test]
    fn entity_signal_counts_the_questions_entities_named_not_its_speakers() {
        let plan = analyse("What do Melanie's kids think of Yellowstone?", &known());
        let keys = query_entity_keys(&plan, &known());
        assert!(!keys.contains(&"melanie".to_string()), "{keys:?}");
        let both = facts_of(
            &memory("My kids loved Yellowstone!", "Melanie", (2023, 7, 1)),
            &known(),
        );
        let one = facts_of(
            &memory("My kids are growing fast.", "Melanie", (2023, 7, 1)),
            &known(),
        );
        let other_owner = facts_of(
            &memory("My kids are growing fast.", "Caroline", (2023, 7, 1)),
            &known(),
        );
        assert_eq!(entity_signal(&keys, &both), 1.0);
        assert_eq!(entity_signal(&keys, &one), 0.5);
        assert_eq!(entity_signal(&keys, &other_owner), 0.0);
        assert_eq!(entity_signal(&[], &both), 0.0);
    }

    #[test]
    fn spreading_moves_a_second_hit_from_the_same_session_below_another_session() {
        let scored = vec![(1, (), 1.0), (2, (), 0.9), (3, (), 0.8), (4, (), 0.5)];
        let session = |id: i64| Some(if id <= 2 { "s1" } else { "s2" }.to_string());
        let order: Vec<i64> = spread_sessions(scored.clone(), &session, 0.2)
            .iter()
            .map(|s| s.0)
            .collect();
        assert_eq!(order, vec![1, 3, 2, 4]);
        // No penalty, no change.
        let same: Vec<i64> = spread_sessions(scored, &session, 0.0)
            .iter()
            .map(|s| s.0)
            .collect();
        assert_eq!(same, vec![1, 2, 3, 4]);
    }

    #[test]
    fn question_words_are_stripped_but_content_is_kept() {
        assert_eq!(
            strip_question("When did Caroline go to the LGBTQ support group?"),
            "Caroline go to the LGBTQ support group"
        );
        assert_eq!(
            strip_question("What kind of art does Caroline make?"),
            "art does Caroline make"
        );
        assert_eq!(strip_question("Why?"), "Why?");
    }
}
