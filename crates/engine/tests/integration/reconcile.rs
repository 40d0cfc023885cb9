//! Fact reconciliation on ingest (seed 004): NOOP, UPDATE, DELETE and ADD by rules,
//! every change in history and reversible.

use crate::common::{msg, Fixture};
use somna_engine::{AddOptions, Kind, ListQuery, MemoryFilter, MemoryUpdate, State};

fn facts(f: &Fixture) -> Vec<String> {
    let mut out: Vec<String> = f
        .engine
        .list(&ListQuery {
            filter: MemoryFilter {
                kinds: vec![Kind::Fact],
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap()
        .memories
        .into_iter()
        .map(|m| m.text)
        .collect();
    out.sort();
    out
}

#[test]
fn new_values_update_negations_delete_and_both_are_reversible() {
    let f = Fixture::hash();
    let add = |text: &str| {
        f.engine
            .add("c", &[msg("Ada", text)], &AddOptions::default())
            .unwrap()
    };
    let first = add("I live in Lisbon. I like cats. I love jazz.");
    assert_eq!(first.facts_added.len(), 3);

    // Same subject and attribute, new value: the stored fact is rewritten.
    let moved = add("I live in Porto.");
    assert_eq!(moved.facts_added, Vec::<i64>::new());
    assert_eq!(moved.facts_updated.len(), 1);
    let fact = moved.facts_updated[0];
    assert_eq!(
        f.engine.get(fact).unwrap().memory.text,
        "Ada lives in Porto"
    );
    let h = f.engine.history(fact).unwrap();
    let last = h.last().unwrap();
    assert_eq!(last.event, "update");
    assert_eq!(
        last.old_value.as_ref().unwrap()["text"],
        "Ada lives in Lisbon"
    );

    // The same statement again changes nothing.
    let again = add("I live in Porto.");
    assert_eq!(again.facts_unchanged, 1);
    assert!(again.facts_updated.is_empty() && again.facts_added.is_empty());

    // An explicit negation deletes the old fact (soft) and keeps the new one.
    let negated = add("I don't like cats.");
    assert_eq!(negated.facts_deleted.len(), 1);
    assert_eq!(negated.facts_added.len(), 1);
    assert_eq!(
        facts(&f),
        vec![
            "Ada doesn't like cats",
            "Ada lives in Porto",
            "Ada loves jazz"
        ]
    );
    // A new taste is added next to the old one.
    let more = add("I love techno.");
    assert_eq!(more.facts_added.len(), 1);
    assert!(more.facts_updated.is_empty() && more.facts_deleted.is_empty());

    // Reversible: restore the deleted fact, write the old value back.
    let deleted = negated.facts_deleted[0];
    let restored = f.engine.restore(deleted, "user").unwrap();
    assert_eq!(restored.text, "Ada likes cats");
    assert_eq!(restored.state, State::Active);
    let back = f
        .engine
        .update(
            fact,
            &MemoryUpdate {
                text: Some("Ada lives in Lisbon".into()),
                ..Default::default()
            },
            "user",
        )
        .unwrap();
    assert_eq!(back.text, "Ada lives in Lisbon");
}
