//! Fact reconciliation on ingest (seed 004): NOOP, ADD, and a new value or a negation that
//! supersedes the stored fact (closed, kept, linked), every change in history.

use crate::common::{msg_at, ts, Fixture};
use somna_engine::store::Superseded;
use somna_engine::{AddOptions, Kind, ListQuery, MemoryFilter, SearchQuery};

fn facts(f: &Fixture, filter: MemoryFilter) -> Vec<String> {
    let mut out: Vec<String> = f
        .engine
        .list(&ListQuery {
            filter: MemoryFilter {
                kinds: vec![Kind::Fact],
                ..filter
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
fn a_new_value_or_a_negation_supersedes_the_stored_fact_which_is_kept_and_closed() {
    let f = Fixture::hash();
    let add = |text: &str, month: u32| {
        f.engine
            .add(
                "c",
                &[msg_at("Ada", text, "s", ts(2026, month, 1, 12, 0))],
                &AddOptions::default(),
            )
            .unwrap()
    };
    let first = add("I live in Lisbon. I like cats. I love jazz.", 5);
    assert_eq!(first.facts_added.len(), 3);
    let lisbon = f.engine.get(first.facts_added[0]).unwrap().memory;
    assert_eq!(lisbon.text, "Ada lives in Lisbon");
    assert_eq!(lisbon.valid_from, Some(ts(2026, 5, 1, 12, 0)));

    // Same subject and attribute, new value: a new fact, and the old one closed.
    let moved = add("I live in Porto.", 9);
    assert_eq!(moved.facts_added.len(), 1);
    assert_eq!(moved.facts_updated, vec![lisbon.id]);
    let porto = moved.facts_added[0];
    let old = f.engine.get(lisbon.id).unwrap().memory;
    assert_eq!(old.text, "Ada lives in Lisbon", "kept as it was");
    assert_eq!(
        (old.valid_to, old.superseded_by),
        (Some(ts(2026, 9, 1, 12, 0)), Some(porto))
    );
    let last = f.engine.history(lisbon.id).unwrap().pop().unwrap();
    assert_eq!(last.event, "update");
    assert_eq!(last.new_value.as_ref().unwrap()["superseded_by"], porto);
    assert!(last.cause.unwrap().contains("Ada lives in Porto"));

    // The same statement again changes nothing.
    let again = add("I live in Porto.", 10);
    assert_eq!(again.facts_unchanged, 1);
    assert!(again.facts_updated.is_empty() && again.facts_added.is_empty());

    // An explicit negation closes the old fact too and keeps the new one.
    let negated = add("I don't like cats.", 10);
    assert_eq!(negated.facts_updated.len(), 1);
    assert_eq!(negated.facts_added.len(), 1);
    assert!(negated.facts_deleted.is_empty());
    assert_eq!(
        facts(&f, MemoryFilter::default()),
        vec![
            "Ada doesn't like cats",
            "Ada lives in Porto",
            "Ada loves jazz"
        ]
    );
    // The stale ones are one filter away; what held in June is another.
    let stale = MemoryFilter {
        superseded: Superseded::Only,
        ..Default::default()
    };
    assert_eq!(
        facts(&f, stale),
        vec!["Ada likes cats", "Ada lives in Lisbon"]
    );
    let june = MemoryFilter {
        valid_at: Some(ts(2026, 6, 15, 0, 0)),
        ..Default::default()
    };
    assert_eq!(
        facts(&f, june.clone()),
        vec!["Ada likes cats", "Ada lives in Lisbon", "Ada loves jazz"]
    );

    // Search answers with the current value, and with June's when asked as of June.
    let mut q = SearchQuery::new("where Ada lives");
    q.filter.kinds = vec![Kind::Fact];
    let now = f.engine.search_readonly(&q).unwrap();
    assert_eq!(now.hits[0].memory.text, "Ada lives in Porto");
    assert!(now.hits.iter().all(|h| h.memory.id != lisbon.id));
    q.filter = MemoryFilter {
        kinds: vec![Kind::Fact],
        ..june
    };
    let then = f.engine.search_readonly(&q).unwrap();
    assert_eq!(then.hits[0].memory.text, "Ada lives in Lisbon");
    assert!(then.hits.iter().all(|h| h.memory.id != porto));

    // A new taste is added next to the old one.
    let more = add("I love techno.", 11);
    assert_eq!(more.facts_added.len(), 1);
    assert!(more.facts_updated.is_empty());
}
