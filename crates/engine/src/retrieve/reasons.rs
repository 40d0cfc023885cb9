//! Why a hit matched, in words a person can check: the date it carries that meets the
//! time the question names, the question's entities it names, and the link it was reached
//! by. Computed for the hits and near misses only, after ranking; the scores are not read
//! from here.

use super::evidence::{self, MemoryFacts};
use super::gather::Candidates;
use super::plan::Plan;
use super::Hit;
use crate::lang::entities::EntityKind;
use serde::{Deserialize, Serialize};

/// One reason a memory matched a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// The memory is dated within (or near) a time the question names. `phrase` is how its
    /// text wrote the date ("yesterday"), none when it is the day the memory happened.
    Date {
        phrase: Option<String>,
        date: String,
        asked: String,
        /// Days between the two (0 when they overlap).
        gap_days: i64,
    },
    /// The question asks "when" and the memory's text refers to a date of its own.
    Dated { phrase: String, date: String },
    /// The memory names these of the question's entities.
    Entity { names: Vec<String> },
    /// The question's answer is a place or a title, and the memory names these of that kind.
    Answer {
        entity: EntityKind,
        names: Vec<String>,
    },
    /// The memory holds these exact strings of a pattern query (quoted phrases, code-like
    /// tokens), lower-cased.
    Pattern { found: Vec<String> },
    /// Reached from another memory: `link` is "replies to" or "is followed by" (adjacent
    /// turns), "causal" or "similar" (links in the store).
    Link { link: String, from: Option<i64> },
}

/// As the X-ray and `somna search` write it: `"yesterday" = 7 May 2023, within May 2023`,
/// `names Lake Tahoe`, `holds "the lean startup"`, `replies to #2`.
impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Date {
                phrase,
                date,
                asked,
                gap_days,
            } => {
                match phrase {
                    None => write!(f, "happened {date}")?,
                    Some(p) => write!(f, "\"{p}\" = {date}")?,
                }
                if *gap_days == 0 {
                    write!(f, ", within {asked}")
                } else {
                    write!(f, ", {gap_days} d from {asked}")
                }
            }
            Reason::Dated { phrase, date } => write!(f, "\"{phrase}\" = {date}"),
            Reason::Entity { names } => write!(f, "names {}", names.join(", ")),
            Reason::Answer { entity, names } => {
                let what = match entity {
                    EntityKind::Place => "a place",
                    EntityKind::Title => "a title",
                    EntityKind::Person => "a person",
                    EntityKind::Organisation => "an organisation",
                    EntityKind::Possession => "a thing owned",
                    EntityKind::Name => "a name",
                };
                write!(f, "{what}: {}", names.join(", "))
            }
            Reason::Pattern { found } => write!(f, "holds \"{}\"", found.join("\", \"")),
            Reason::Link { link, from: None } => write!(f, "reached by a {link} link"),
            Reason::Link {
                link,
                from: Some(id),
            } => write!(f, "{link} #{id}"),
        }
    }
}

/// Fills the reasons of `hits` from the plan and the candidates they were ranked among.
pub(crate) fn explain(hits: &mut [Hit], plan: &Plan, c: &Candidates, known: &[String]) {
    let entity_keys = evidence::query_entity_keys(&plan.analysis, &plan.actors);
    let reads_dates = plan.analysis.asks_when || !plan.analysis.times.is_empty();
    // The kind of entity the answer is, when that stage scored the hits.
    let answer = plan
        .analysis
        .expects
        .filter(|_| plan.tuning.answer_kind > 0.0);
    let reads_entities = !entity_keys.is_empty() || answer.is_some();
    for h in hits {
        let facts = match (reads_entities, reads_dates) {
            (true, _) => evidence::facts_of(&h.memory, known),
            (false, true) => evidence::dates_of(&h.memory),
            (false, false) => MemoryFacts::default(),
        };
        let mut out = dates(plan, &facts);
        let named: Vec<String> = plan
            .analysis
            .entities
            .iter()
            .filter(|e| entity_keys.contains(&e.key))
            .filter(|e| evidence::entity_signal(std::slice::from_ref(&e.key), &facts) > 0.0)
            .map(|e| e.text.clone())
            .collect();
        if !named.is_empty() {
            out.push(Reason::Entity { names: named });
        }
        if let Some(kind) = answer {
            let names: Vec<String> = facts
                .entities
                .iter()
                .filter(|e| e.kind == kind)
                .map(|e| e.text.clone())
                .collect();
            if !names.is_empty() {
                out.push(Reason::Answer {
                    entity: kind,
                    names,
                });
            }
        }
        let lower = h.memory.text.to_lowercase();
        let found: Vec<String> = plan
            .patterns
            .iter()
            .filter(|p| lower.contains(p.as_str()))
            .cloned()
            .collect();
        if !found.is_empty() {
            out.push(Reason::Pattern { found });
        }
        out.extend(links(h, c));
        h.reasons = out;
    }
}

/// The best date match per time the question names, and for a "when" question the dates
/// the text refers to.
fn dates(plan: &Plan, facts: &MemoryFacts) -> Vec<Reason> {
    let mut out = Vec::new();
    for t in &plan.analysis.times {
        let best = facts
            .dates
            .iter()
            .zip(&facts.phrases)
            .map(|(d, p)| (t.when.gap_days(d), d, p))
            .min_by_key(|x| x.0);
        if let Some((gap, d, p)) = best {
            // The temporal signal is half at a week; past four weeks it adds little.
            if gap <= 28 {
                out.push(Reason::Date {
                    phrase: p.clone(),
                    date: d.label(),
                    asked: t.when.label(),
                    gap_days: gap,
                });
            }
        }
    }
    if plan.analysis.asks_when {
        for (d, p) in facts.dates.iter().zip(&facts.phrases) {
            // "3 July 2023" needs no "= 3 July 2023".
            if let Some(p) = p.as_ref().filter(|p| !p.eq_ignore_ascii_case(&d.label())) {
                out.push(Reason::Dated {
                    phrase: p.clone(),
                    date: d.label(),
                });
            }
        }
    }
    out
}

/// The link a hit was reached by, or the adjacent turn whose evidence it inherits.
fn links(h: &Hit, c: &Candidates) -> Vec<Reason> {
    let mut out = Vec::new();
    if h.signals.graph > 0.0 {
        out.push(Reason::Link {
            link: "causal".into(),
            from: None,
        });
    }
    if h.signals.expand > 0.0 {
        out.push(Reason::Link {
            link: "similar".into(),
            from: c.cands.get(&h.memory.id).and_then(|x| x.via),
        });
    }
    if h.signals.neighbour > 0.0 {
        if let Some([prev, next]) = c.adjacency.get(&h.memory.id) {
            let strength = |id: &Option<i64>| {
                id.and_then(|id| c.cands.get(&id))
                    .map_or(0.0, |x| x.semantic + c.lexical(x.lexical_raw))
            };
            let (link, from) = if strength(prev) >= strength(next) * 0.25 {
                ("replies to", *prev)
            } else {
                ("is followed by", *next)
            };
            if from.is_some() {
                out.push(Reason::Link {
                    link: link.into(),
                    from,
                });
            }
        }
    }
    out
}

/// What the search read in the question, for the X-ray's header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Question {
    /// It asks for a time ("when", "what year", "how long ago").
    pub asks_when: bool,
    /// The times it names, each as written and as resolved ("in May 2023 = May 2023").
    pub times: Vec<String>,
    /// The entities it names besides the speakers.
    pub entities: Vec<String>,
}

impl Question {
    pub(crate) fn of(plan: &Plan) -> Self {
        let keys = evidence::query_entity_keys(&plan.analysis, &plan.actors);
        Self {
            asks_when: plan.analysis.asks_when,
            times: plan
                .analysis
                .times
                .iter()
                .map(|t| format!("{} = {}", t.phrase, t.when.label()))
                .collect(),
            entities: plan
                .analysis
                .entities
                .iter()
                .filter(|e| keys.contains(&e.key))
                .map(|e| e.text.clone())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{memory, MapSources};
    use super::super::{assemble, gather, plan, score, SearchQuery};
    use super::*;
    use crate::embed::HashEmbedder;

    /// 8 May 2023, noon UTC.
    const MAY_8: i64 = 1_683_547_200_000;

    /// Runs plan → gather → score → assemble → explain over `s`.
    fn explained(s: &MapSources, query: &str) -> (Vec<Hit>, Question) {
        let known = vec!["Caroline".to_string(), "Melanie".to_string()];
        let e = HashEmbedder::new(32);
        let q = SearchQuery::new(query);
        let p = plan::plan(&q, false, &known, MAY_8).unwrap();
        let c = gather::gather(s, &e, &p, &q).unwrap();
        let ranked = score::score(&c, &p, &q, &known);
        let mut a = assemble::assemble(s, &e, &c, &ranked, &q).unwrap();
        explain(&mut a.hits, &p, &c, &known);
        (a.hits, Question::of(&p))
    }

    fn sources() -> MapSources {
        let e = HashEmbedder::new(32);
        let v = |t: &str| crate::embed::Embedder::embed_one(&e, t).unwrap();
        let mut said = memory(1, "I went to a support group yesterday.", "Caroline");
        said.occurred_at = Some(MAY_8);
        let mut asked = memory(2, "Did you go anywhere?", "Melanie");
        asked.occurred_at = Some(MAY_8);
        let mut later = memory(3, "I painted a lake at Lake Tahoe.", "Melanie");
        later.occurred_at = Some(MAY_8 + 90 * 86_400_000);
        let mut s = MapSources::default()
            .with(said.clone(), v(&said.text))
            .with(asked.clone(), v(&asked.text))
            .with(later.clone(), v(&later.text));
        s.adjacent.insert(1, [Some(2), None]);
        s.similar.insert(1, vec![(3, 0.9)]);
        s
    }

    #[test]
    fn a_when_question_names_the_date_a_memory_resolves_and_the_turn_it_replies_to() {
        let (hits, question) = explained(&sources(), "When did Caroline go to a support group?");
        assert!(question.asks_when && question.times.is_empty());
        let said = hits.iter().find(|h| h.memory.id == 1).unwrap();
        assert!(
            said.reasons.contains(&Reason::Dated {
                phrase: "yesterday".into(),
                date: "7 May 2023".into()
            }),
            "{:?}",
            said.reasons
        );
        assert!(said.reasons.contains(&Reason::Link {
            link: "replies to".into(),
            from: Some(2)
        }));
        let written: Vec<String> = said.reasons.iter().map(ToString::to_string).collect();
        assert!(written.contains(&"\"yesterday\" = 7 May 2023".to_string()));
        assert!(written.contains(&"replies to #2".to_string()));
    }

    #[test]
    fn a_question_for_a_place_names_the_places_a_memory_holds() {
        let mut s = sources();
        let camped = memory(4, "We camped near Yosemite with the kids.", "Melanie");
        let v = crate::embed::Embedder::embed_one(&HashEmbedder::new(32), &camped.text).unwrap();
        s = s.with(camped, v);
        let (hits, _) = explained(&s, "Where did Melanie camp?");
        let yosemite = hits.iter().find(|h| h.memory.id == 4).unwrap();
        let answer = Reason::Answer {
            entity: EntityKind::Place,
            names: vec!["Yosemite".into()],
        };
        assert!(yosemite.reasons.contains(&answer), "{:?}", yosemite.reasons);
        assert_eq!(answer.to_string(), "a place: Yosemite");
        let said = hits.iter().find(|h| h.memory.id == 1).unwrap();
        assert!(
            !said
                .reasons
                .iter()
                .any(|r| matches!(r, Reason::Answer { .. })),
            "a support group is not a place: {:?}",
            said.reasons
        );
    }

    #[test]
    fn a_pattern_query_names_the_exact_strings_a_memory_holds() {
        let (hits, _) = explained(&sources(), r#"Caroline "support group""#);
        let said = hits.iter().find(|h| h.memory.id == 1).unwrap();
        assert!(said.reasons.contains(&Reason::Pattern {
            found: vec!["support group".into()]
        }));
        assert!(said.signals.pattern > 0.99);
    }

    #[test]
    fn a_question_that_names_a_month_is_met_by_the_day_a_memory_happened() {
        let (hits, question) = explained(
            &sources(),
            "What did Caroline do in May 2023 at the support group?",
        );
        assert_eq!(question.times, vec!["May 2023 = May 2023"]);
        let said = hits.iter().find(|h| h.memory.id == 1).unwrap();
        assert!(said.reasons.iter().any(|r| matches!(r,
            Reason::Date { phrase: None, date, asked, gap_days: 0 }
                if date == "8 May 2023" && asked == "May 2023")));
        let later = hits.iter().find(|h| h.memory.id == 3).unwrap();
        assert!(
            !later
                .reasons
                .iter()
                .any(|r| matches!(r, Reason::Date { .. })),
            "three months later is not a reason: {:?}",
            later.reasons
        );
    }
}
