//! Fact reconciliation without an LLM (seed 004): a new fact against its most similar
//! stored facts → ADD, UPDATE, DELETE or NOOP, by deterministic rules:
//! - a near-duplicate (cosine ≥ `FACT_DUPLICATE`) → NOOP;
//! - the same subject and a single-valued attribute with a new value ("Ada lives in
//!   Porto" after "Ada lives in Lisbon") → UPDATE the stored fact to the new text;
//! - an explicit negation of a stored fact ("Ada doesn't like cats" after "Ada likes
//!   cats") → DELETE the stored fact (soft, restorable) and ADD the new one; a
//!   contradiction never removes both;
//! - otherwise → ADD.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", content = "target", rename_all = "snake_case")]
pub enum FactAction {
    Add,
    /// Rewrite this stored fact to the new text.
    Update(i64),
    /// Soft-delete this stored fact (it is contradicted), then add the new one.
    Delete(i64),
    /// Already known (this stored fact says it).
    Noop(i64),
}

/// Attributes a subject has one value of at a time (after the subject's name).
const SINGLE_VALUED: &[&str] = &[
    "'s name is ",
    " lives in ",
    " works as ",
    " works at ",
    " works for ",
    " works in ",
    " is from ",
    " lives with ",
    "'s wife ",
    "'s husband ",
    "'s partner ",
];

/// (positive, negative) forms of attributes a statement can negate.
const NEGATABLE: &[(&str, &str)] = &[
    (" likes ", " doesn't like "),
    (" loves ", " doesn't love "),
    (" enjoys ", " doesn't enjoy "),
    (" eats ", " doesn't eat "),
    (" has a ", " doesn't have a "),
    (" lives in ", " doesn't live in "),
    (" works at ", " doesn't work at "),
];

/// A fact split into subject, attribute and value ("Ada", " lives in ", "Lisbon").
#[derive(Debug, PartialEq)]
struct Parsed<'a> {
    subject: &'a str,
    attribute: &'a str,
    value: String,
}

fn parse<'a>(fact: &'a str, subject: &'a str) -> Option<Parsed<'a>> {
    let rest = fact.strip_prefix(subject)?;
    let attributes = SINGLE_VALUED
        .iter()
        .chain(NEGATABLE.iter().flat_map(|(p, n)| [p, n]));
    for a in attributes {
        if let Some(value) = rest.strip_prefix(a) {
            return Some(Parsed {
                subject,
                attribute: a,
                value: normalise(value),
            });
        }
    }
    if let Some(after) = rest
        .strip_prefix("'s favorite ")
        .or(rest.strip_prefix("'s favourite "))
    {
        let is = after.find(" is ")?;
        let len = rest.len() - after.len() + is + 4;
        return Some(Parsed {
            subject,
            attribute: &rest[..len],
            value: normalise(&after[is + 4..]),
        });
    }
    None
}

fn normalise(v: &str) -> String {
    v.trim()
        .trim_end_matches(['.', '!'])
        .trim_start_matches("the ")
        .to_lowercase()
}

fn single_valued(attribute: &str) -> bool {
    SINGLE_VALUED.contains(&attribute) || attribute.contains(" favo")
}

fn negation_of(a: &str, b: &str) -> bool {
    NEGATABLE
        .iter()
        .any(|(p, n)| (a == *p && b == *n) || (a == *n && b == *p))
}

/// Decides what a new fact of `subject` does, given its most similar stored facts
/// `(id, text, cosine)`, most similar first.
pub fn reconcile(
    new: &str,
    subject: &str,
    similar: &[(i64, String, f32)],
    duplicate: f32,
) -> FactAction {
    if let Some((id, _, _)) = similar.iter().find(|s| s.2 >= duplicate) {
        return FactAction::Noop(*id);
    }
    let Some(n) = parse(new, subject) else {
        return FactAction::Add;
    };
    for (id, text, _) in similar {
        let Some(old) = parse(text, subject) else {
            continue;
        };
        if old.attribute == n.attribute {
            if old.value == n.value {
                return FactAction::Noop(*id);
            }
            if single_valued(n.attribute) {
                return FactAction::Update(*id);
            }
        } else if negation_of(old.attribute, n.attribute) && old.value == n.value {
            return FactAction::Delete(*id);
        }
    }
    FactAction::Add
}

/// True when the stored fact `old` and the new fact `new`, both of `subject`, are the kind
/// of pair [`reconcile`] replaces: the same single-valued attribute with another value, or
/// the negation of the same value. Reconciliation compares a new fact with its speaker's
/// facts of the same conversation only; this finds such pairs across conversations.
pub fn contradicts(old: &str, new: &str, subject: &str) -> bool {
    let (Some(o), Some(n)) = (parse(old, subject), parse(new, subject)) else {
        return false;
    };
    if o.attribute == n.attribute {
        o.value != n.value && single_valued(n.attribute)
    } else {
        negation_of(o.attribute, n.attribute) && o.value == n.value
    }
}

/// The openings (subject and attribute, e.g. "Ada lives in ") a stored fact of `subject`
/// must start with to contradict `new`; `None` when `new` can contradict nothing (no
/// attribute the rules know, or one of which a subject has several values).
pub fn contradiction_openings(new: &str, subject: &str) -> Option<Vec<String>> {
    let n = parse(new, subject)?;
    let mut out = Vec::with_capacity(2);
    if single_valued(n.attribute) {
        out.push(format!("{subject}{}", n.attribute));
    }
    for (p, neg) in NEGATABLE {
        if n.attribute == *p {
            out.push(format!("{subject}{neg}"));
        } else if n.attribute == *neg {
            out.push(format!("{subject}{p}"));
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim(items: &[(i64, &str, f32)]) -> Vec<(i64, String, f32)> {
        items
            .iter()
            .map(|(i, t, s)| (*i, t.to_string(), *s))
            .collect()
    }

    #[test]
    fn contradictions_are_the_pairs_reconcile_replaces_and_nothing_else() {
        assert!(contradicts(
            "Ada lives in Lisbon",
            "Ada lives in Porto",
            "Ada"
        ));
        assert!(contradicts(
            "Ada likes cats",
            "Ada doesn't like cats",
            "Ada"
        ));
        assert!(contradicts(
            "Ada's favorite color is blue",
            "Ada's favorite color is green",
            "Ada"
        ));
        assert!(!contradicts(
            "Ada lives in Lisbon",
            "Ada lives in lisbon.",
            "Ada"
        ));
        assert!(!contradicts("Ada loves jazz", "Ada loves techno", "Ada"));
        assert!(!contradicts(
            "Ada likes cats",
            "Ada doesn't like dogs",
            "Ada"
        ));
        assert!(!contradicts(
            "Bob lives in Lisbon",
            "Ada lives in Porto",
            "Ada"
        ));
        assert_eq!(
            contradiction_openings("Ada lives in Porto", "Ada").unwrap(),
            vec!["Ada lives in ", "Ada doesn't live in "]
        );
        assert_eq!(
            contradiction_openings("Ada doesn't like cats", "Ada").unwrap(),
            vec!["Ada likes "]
        );
        assert_eq!(
            contradiction_openings("Ada loves techno", "Ada").unwrap(),
            vec!["Ada doesn't love "]
        );
        assert_eq!(contradiction_openings("Ada speaks Portuguese", "Ada"), None);
    }

    #[test]
    fn rules_follow_seed_004() {
        let stored = sim(&[
            (1, "Ada lives in Lisbon", 0.8),
            (2, "Ada likes cats", 0.7),
            (3, "Ada's favorite color is blue", 0.6),
            (4, "Ada loves jazz", 0.5),
        ]);
        let r = |new: &str| reconcile(new, "Ada", &stored, 0.92);
        assert_eq!(r("Ada lives in Porto"), FactAction::Update(1));
        assert_eq!(r("Ada lives in lisbon."), FactAction::Noop(1));
        assert_eq!(r("Ada doesn't like cats"), FactAction::Delete(2));
        assert_eq!(r("Ada's favorite color is green"), FactAction::Update(3));
        // Liking several things is normal: a new one is added, the old one kept.
        assert_eq!(r("Ada loves techno"), FactAction::Add);
        assert_eq!(r("Ada speaks Portuguese"), FactAction::Add);
        // Another subject never touches Ada's facts.
        assert_eq!(
            reconcile("Bob lives in Porto", "Bob", &stored, 0.92),
            FactAction::Add
        );
        // A near-duplicate is a NOOP whatever it says.
        let dup = sim(&[(7, "Ada lives in Lisbon, Portugal", 0.95)]);
        assert_eq!(
            reconcile("Ada lives in Lisbon", "Ada", &dup, 0.92),
            FactAction::Noop(7)
        );
    }
}
