//! What a question asks for, read without an LLM: whether it asks when something happened,
//! the times it names ("in May 2023", "in August"), the entities it is about, whether it
//! asks for several things across occasions ("What books has Melanie read?"), and the
//! clauses it can be split into for retrieval ("Which city have both Jean and John
//! visited?" → one question per person; "… a hike after the roadtrip?" → the hike, the
//! roadtrip).

use super::entities::{extract_entities, Entity, EntityKind};
use super::time::{find_times, TimeMention};
use super::words;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QueryPlan {
    /// It asks for a time or a duration ("when", "what year", "how long ago").
    pub asks_when: bool,
    /// Times the question names, resolved without a date of its own.
    pub times: Vec<TimeMention>,
    pub entities: Vec<Entity>,
    /// It asks for several things, likely said on several occasions.
    pub aggregate: bool,
    /// Sub-questions for retrieval, when the question has several parts (else empty).
    pub clauses: Vec<String>,
    /// The kind of entity its answer is: a place ("Where …", "Which cities …") or a title
    /// ("What books …"); none for other questions.
    pub expects: Option<EntityKind>,
}

const WHEN_OPENINGS: &[&str] = &[
    "when",
    "what date",
    "what day",
    "what year",
    "what month",
    "what time",
    "which year",
    "which month",
    "which day",
    "which date",
    "how long ago",
    "how long has",
    "how long have",
    "how long did",
    "how long had",
    "how long was",
    "since when",
    "in what year",
    "in which year",
    "in what month",
    "in which month",
    "how many years",
    "how many months",
    "how many weeks",
    "how many days",
];

/// Words after which a plural noun makes the question ask for a list.
const LIST_CUES: &[&str] = &[
    "kinds",
    "types",
    "ways",
    "things",
    "activities",
    "places",
    "events",
    "items",
    "hobbies",
    "all",
    "both",
    "ever",
    "various",
    "some",
    "several",
    "many",
];

/// Words that end with "s" and are not plural nouns.
const NOT_PLURAL: &[&str] = &[
    "is", "was", "has", "does", "this", "its", "his", "hers", "yes", "us", "as", "always",
    "perhaps", "across", "plus", "thus", "less", "unless", "was", "ours", "yours", "theirs",
];

/// Nouns that make a "what / which" question ask for a place.
const PLACE_NOUNS: &[&str] = &[
    "city",
    "cities",
    "country",
    "countries",
    "place",
    "places",
    "town",
    "towns",
    "state",
    "states",
    "destination",
    "destinations",
    "location",
    "locations",
];

/// Nouns that make a "what / which" question ask for a title (a book, a song, a film).
const TITLE_NOUNS: &[&str] = &[
    "book", "books", "novel", "novels", "song", "songs", "movie", "movies", "film", "films",
    "album", "albums", "show", "shows", "series", "podcast", "podcasts",
];

/// Separators between the parts of a multi-part question.
const CLAUSE_SPLITS: &[&str] = &[
    " after ",
    " before ",
    " while ",
    " because ",
    " and then ",
    ", and ",
    " and also ",
    " as well as ",
];

/// Reads `query`; `known` are the store's speaker names (people).
pub fn analyse(query: &str, known: &[String]) -> QueryPlan {
    let lower = query.trim().to_lowercase();
    let opening: Vec<String> = words(&lower).into_iter().take(4).map(|w| w.lower).collect();
    let opening = format!("{} ", opening.join(" "));
    let asks_when = WHEN_OPENINGS
        .iter()
        .any(|o| opening.starts_with(&format!("{o} ")));
    let entities = extract_entities(query, None, known);
    let people: Vec<String> = entities
        .iter()
        .filter(|e| {
            e.kind == super::entities::EntityKind::Person
                || known.iter().any(|k| k.eq_ignore_ascii_case(&e.text))
        })
        .map(|e| e.text.clone())
        .collect();
    QueryPlan {
        asks_when,
        times: find_times(query, None),
        aggregate: !asks_when && is_aggregate(&lower),
        clauses: clauses(query, &people),
        expects: expected_kind(&lower),
        entities,
    }
}

/// The kind of entity a question's answer is: "Where …" and "What / which city, country,
/// place …" a place; "What / which book, song, film …" a title (within the question's first
/// five words: "What kind of books …", "In which city …").
fn expected_kind(lower: &str) -> Option<EntityKind> {
    let ws: Vec<String> = words(lower).into_iter().take(5).map(|w| w.lower).collect();
    let asks = ws
        .iter()
        .position(|w| matches!(w.as_str(), "what" | "which" | "where"))?;
    if asks > 1 {
        return None;
    }
    if ws[asks] == "where" {
        return Some(EntityKind::Place);
    }
    let rest = &ws[asks + 1..];
    if rest.iter().any(|w| PLACE_NOUNS.contains(&w.as_str())) {
        Some(EntityKind::Place)
    } else if rest.iter().any(|w| TITLE_NOUNS.contains(&w.as_str())) {
        Some(EntityKind::Title)
    } else {
        None
    }
}

/// "What books has Melanie read?", "Which cities has Jon visited?", "What activities…",
/// "What has Melanie painted?", "… both …".
fn is_aggregate(lower: &str) -> bool {
    let ws: Vec<String> = words(lower).into_iter().map(|w| w.lower).collect();
    let Some(first) = ws.first() else {
        return false;
    };
    if ws.iter().any(|w| w == "both" || w == "all") {
        return true;
    }
    if !matches!(
        first.as_str(),
        "what" | "which" | "where" | "who" | "in" | "how"
    ) {
        return false;
    }
    // "what/which + plural noun" ("what books", "which cities", "what kinds of").
    let plural_next = ws.get(1).is_some_and(|w| {
        LIST_CUES.contains(&w.as_str())
            || (w.len() > 3
                && w.ends_with('s')
                && !w.ends_with("ss")
                && !NOT_PLURAL.contains(&w.as_str()))
    });
    // "what has X done", "where has X camped": the present perfect asks over time.
    let perfect = ws.iter().take(4).any(|w| w == "has" || w == "have");
    plural_next || perfect
}

/// The parts of a question worth retrieving for separately: per person when it joins
/// several ("both Jean and John"), per clause around "after", "before", "while", ….
/// Empty when the question is one part.
fn clauses(query: &str, people: &[String]) -> Vec<String> {
    let q = query.trim().trim_end_matches('?').trim();
    // "both A and B" / "A and B": one question per person.
    if people.len() >= 2 {
        let (a, b) = (&people[0], &people[1]);
        for joined in [format!("both {a} and {b}"), format!("{a} and {b}")] {
            if let Some(pos) = q.find(&joined) {
                return [a, b]
                    .iter()
                    .map(|p| {
                        format!("{}{}{}", &q[..pos], p, &q[pos + joined.len()..])
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
            }
        }
    }
    let lower = q.to_lowercase();
    for sep in CLAUSE_SPLITS {
        if let Some(pos) = lower.find(sep) {
            let (head, tail) = (&q[..pos], &q[pos + sep.len()..]);
            if content_words(head) >= 2 && content_words(tail) >= 1 {
                // The second part usually leaves its subject out: carry the people over.
                let missing: Vec<&String> = people
                    .iter()
                    .filter(|p| !tail.to_lowercase().contains(&p.to_lowercase()))
                    .collect();
                let tail = if missing.is_empty() {
                    tail.trim().to_string()
                } else {
                    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
                    format!("{} {}", names.join(" "), tail.trim())
                };
                return vec![head.trim().to_string(), tail];
            }
        }
    }
    Vec::new()
}

fn content_words(s: &str) -> usize {
    words(s)
        .iter()
        .filter(|w| !crate::text::is_stopword(&w.lower))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::time::When;

    fn known() -> Vec<String> {
        ["Caroline", "Melanie", "Jon", "Gina", "John", "Jean"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn when_questions_are_recognised() {
        for q in [
            "When did Caroline go to the LGBTQ support group?",
            "How long has Caroline had her current group of friends for?",
            "In what year did Jon open his studio?",
            "Which month did Gina launch her store?",
        ] {
            assert!(analyse(q, &known()).asks_when, "{q}");
        }
        assert!(!analyse("What did Caroline research?", &known()).asks_when);
        assert!(!analyse("Whenever possible, what does Jon eat?", &known()).asks_when);
    }

    #[test]
    fn times_in_a_question_are_kept_without_a_date() {
        let p = analyse(
            "When did Caroline attend a pride parade in August?",
            &known(),
        );
        assert_eq!(p.times.len(), 1);
        assert_eq!(p.times[0].when, When::MonthOfYear(8));
        assert!(analyse("What did Jon do yesterday?", &known())
            .times
            .is_empty());
    }

    #[test]
    fn questions_for_a_place_or_a_title_expect_that_kind() {
        for (q, kind) in [
            ("Which cities has Jon visited?", Some(EntityKind::Place)),
            ("Where did Melanie camp?", Some(EntityKind::Place)),
            (
                "In which country did Caroline grow up?",
                Some(EntityKind::Place),
            ),
            ("What books has Melanie read?", Some(EntityKind::Title)),
            (
                "What kind of movies does Jon like?",
                Some(EntityKind::Title),
            ),
            ("What did Jon do in the city?", None),
            ("When did Caroline move?", None),
            ("Who is Melanie's favourite author?", None),
        ] {
            assert_eq!(analyse(q, &known()).expects, kind, "{q}");
        }
    }

    #[test]
    fn list_questions_are_aggregate() {
        for q in [
            "What books has Melanie read?",
            "Which cities has Jon visited?",
            "What activities does Melanie partake in?",
            "What has Melanie painted?",
            "Which city have both Jean and John visited?",
            "What kinds of art does Caroline make?",
        ] {
            assert!(analyse(q, &known()).aggregate, "{q}");
        }
        for q in [
            "What did Caroline research?",
            "When did Melanie paint a sunrise?",
            "Why did Gina decide to start her own clothing store?",
        ] {
            assert!(!analyse(q, &known()).aggregate, "{q}");
        }
    }

    #[test]
    fn questions_split_per_person_and_per_clause() {
        let p = analyse("Which city have both Jean and John visited?", &known());
        assert_eq!(
            p.clauses,
            vec![
                "Which city have Jean visited",
                "Which city have John visited"
            ]
        );
        let p = analyse(
            "When did Melanie go on a hike after the roadtrip?",
            &known(),
        );
        assert_eq!(
            p.clauses,
            vec!["When did Melanie go on a hike", "Melanie the roadtrip"]
        );
        assert!(analyse("What did Caroline research?", &known())
            .clauses
            .is_empty());
    }

    #[test]
    fn entities_of_the_question_are_listed() {
        let p = analyse("What do Melanie's kids like?", &known());
        let keys: Vec<&str> = p.entities.iter().map(|e| e.key.as_str()).collect();
        assert!(
            keys.contains(&"melanie") && keys.contains(&"melanie:kid"),
            "{keys:?}"
        );
    }
}
