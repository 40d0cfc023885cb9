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

/// The second rule of "stale": a fact not confirmed in N days while a newer fact
/// contradicts it. Reconciliation replaces values within a conversation only; across
/// conversations the contradiction is recorded, and the older fact stays current until a
/// person looks at it, but shows under the stale filter once it has gone unconfirmed.
#[test]
fn a_fact_a_newer_one_contradicts_elsewhere_is_stale_until_said_again_or_retrieved() {
    use crate::common::err_code;
    use somna_engine::store::now_ms;
    let f = Fixture::hash();
    let day = 86_400_000;
    let now = now_ms();
    let add = |conv: &str, who: &str, text: &str, days_ago: i64| {
        f.engine
            .add(
                conv,
                &[msg_at(who, text, "s", now - days_ago * day)],
                &AddOptions::default(),
            )
            .unwrap()
    };
    let stale = |days: Option<u32>| {
        facts(
            &f,
            MemoryFilter {
                superseded: Superseded::Stale,
                stale_days: days,
                ..Default::default()
            },
        )
    };
    let home = add(
        "home",
        "Ada",
        "I live in Lisbon. I like cats. I love jazz.",
        200,
    );
    let lisbon = home.facts_added[0];
    let work = add("work", "Ada", "I live in Porto. I don't like cats.", 100);
    // Another conversation: reconciliation replaced nothing, both values stand.
    assert!(work.facts_updated.is_empty());
    assert_eq!(work.facts_added.len(), 2);
    assert!(facts(
        &f,
        MemoryFilter {
            superseded: Superseded::Only,
            ..Default::default()
        }
    )
    .is_empty());
    assert_eq!(
        facts(&f, MemoryFilter::default()).len(),
        5,
        "contested facts are current"
    );
    // The older of each pair is contradicted, the newer one is not; jazz has no rival.
    assert_eq!(stale(None), vec!["Ada likes cats", "Ada lives in Lisbon"]);
    let pairs = f
        .engine
        .with_store(|s| s.read().contradictions_of(lisbon))
        .unwrap();
    assert_eq!(
        pairs
            .iter()
            .map(|c| (c.fact_id, c.by_id))
            .collect::<Vec<_>>(),
        vec![(lisbon, work.facts_added[0])]
    );
    // Within a year both were confirmed (they held from 200 days ago): not stale.
    assert!(stale(Some(365)).is_empty());

    // Said again five days ago: confirmed then.
    let again = add("home", "Ada", "I live in Lisbon.", 5);
    assert_eq!((again.facts_unchanged, again.facts_added.len()), (1, 0));
    let confirmed = f
        .engine
        .with_store(|s| s.read().confirmed_at(lisbon))
        .unwrap();
    assert_eq!(confirmed, Some(now - 5 * day));
    assert_eq!(stale(None), vec!["Ada likes cats"]);
    assert_eq!(
        stale(Some(3)),
        vec!["Ada likes cats", "Ada lives in Lisbon"]
    );

    // The newer fact deleted: nothing contradicts Lisbon any more.
    f.engine.delete(work.facts_added[0], false, "test").unwrap();
    assert_eq!(stale(Some(3)), vec!["Ada likes cats"]);

    // A search may ask for stale facts only, but not of the past.
    let mut q = SearchQuery::new("does Ada like cats");
    q.filter = MemoryFilter {
        superseded: Superseded::Stale,
        ..Default::default()
    };
    let hits = f.engine.search_readonly(&q).unwrap().hits;
    assert_eq!(
        hits.iter()
            .map(|h| h.memory.text.as_str())
            .collect::<Vec<_>>(),
        vec!["Ada likes cats"]
    );
    q.as_of = Some(now);
    assert_eq!(err_code(f.engine.search_readonly(&q)), "invalid_input");
    // Retrieved by a (tracked) search: confirmed now, so no longer stale.
    q.as_of = None;
    q.filter = MemoryFilter::default();
    let found = f.engine.search(&q).unwrap().hits;
    assert!(found.iter().any(|h| h.memory.text == "Ada likes cats"));
    assert!(stale(None).is_empty());

    // Said in the wrong order (the older fact imported last): the older one is stale.
    add("b2", "Bob", "I live in Oslo.", 50);
    add("b1", "Bob", "I live in Rome.", 300);
    assert_eq!(stale(None), vec!["Bob lives in Rome"]);
}
