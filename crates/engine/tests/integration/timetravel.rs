//! Time travel: the store as of an instant equals the store as it was observed at that
//! instant, through adds, edits, deletes, restores, a hard delete, a curation, two sleep
//! cycles and an undo.

use crate::common::Fixture;
use crate::sleep::{conversation, options};
use somna_engine::compress::Extractive;
use somna_engine::curate::CurateAction;
use somna_engine::store::{ListQuery, MemoryFilter, MemoryUpdate};
use somna_engine::{Job, Memory, SearchQuery, Somna, State};
use std::collections::BTreeMap;

/// Every memory as the export shows it (deleted and forgotten ones included).
fn observed(engine: &Somna) -> BTreeMap<i64, Memory> {
    engine
        .export()
        .unwrap()
        .memories
        .into_iter()
        .map(|e| (e.memory.id, e.memory))
        .collect()
}

/// Every memory as of `at`, through the listing.
fn as_of(engine: &Somna, at: i64) -> BTreeMap<i64, Memory> {
    let q = ListQuery {
        filter: MemoryFilter {
            states: State::ALL.to_vec(),
            include_deleted: true,
            ..Default::default()
        },
        limit: 100_000,
        ..Default::default()
    };
    let page = engine.list_as_of(&q, at).unwrap();
    assert_eq!(page.as_of, Some(at));
    assert_eq!(page.total as usize, page.memories.len());
    page.memories.into_iter().map(|m| (m.id, m)).collect()
}

/// An instant after everything so far, and before everything after.
fn instant() -> i64 {
    std::thread::sleep(std::time::Duration::from_millis(3));
    let t = somna_engine::store::now_ms();
    std::thread::sleep(std::time::Duration::from_millis(3));
    t
}

#[test]
fn the_store_as_of_each_instant_equals_what_was_observed_then() {
    let f = Fixture::hash();
    let e = &f.engine;
    let mut seen: Vec<(&str, i64, BTreeMap<i64, Memory>)> = Vec::new();
    let mut look = |label: &'static str, e: &Somna| seen.push((label, instant(), observed(e)));

    look("empty", e);
    conversation(e);
    look("imported", e);

    let ids: Vec<i64> = observed(e).keys().copied().collect();
    let (edited, deleted, hard) = (ids[0], ids[1], ids[2]);
    e.update(
        edited,
        &MemoryUpdate {
            text: Some("We went hiking in the Alps instead.".into()),
            importance: Some(0.9),
            ..Default::default()
        },
        "user",
    )
    .unwrap();
    e.delete(deleted, false, "user").unwrap();
    look("edited and deleted", e);

    e.restore(deleted, "user").unwrap();
    e.delete(hard, true, "user").unwrap();
    let tag = CurateAction::Tag {
        ids: vec![ids[3], ids[4]],
        add: vec!["trip".into()],
        remove: vec![],
    };
    e.curate(&tag, false, "test", &Extractive::default())
        .unwrap();
    look("restored, hard-deleted, tagged", e);

    let first = e.sleep(&options(), &Job::default()).unwrap();
    assert!(
        !first.created.is_empty() && !first.changed.is_empty(),
        "the cycle consolidates and decays"
    );
    look("first cycle", e);

    e.sleep_undo(first.id.unwrap(), &Job::default()).unwrap();
    look("first cycle undone", e);

    e.sleep(&options(), &Job::default()).unwrap();
    look("second cycle", e);

    for (label, at, then) in &seen {
        let got = as_of(e, *at);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            then.keys().collect::<Vec<_>>(),
            "which memories existed: {label}"
        );
        for (id, m) in then {
            assert_eq!(&got[id], m, "memory {id} {label}");
        }
    }
    // As of now, a memory is what `get` shows, provenance chain included.
    let summary = observed(e)
        .into_values()
        .find(|m| m.kind == somna_engine::Kind::Summary)
        .expect("the second cycle's summaries");
    let (then, now) = (
        e.get_as_of(summary.id, somna_engine::store::now_ms())
            .unwrap(),
        e.get(summary.id).unwrap(),
    );
    assert!(!now.provenance.is_empty());
    assert_eq!(then.provenance, now.provenance);
    assert_eq!(
        (then.memory, then.links.len()),
        (now.memory, now.links.len())
    );
}

#[test]
fn a_search_as_of_an_instant_finds_what_was_there_then_and_records_no_access() {
    let f = Fixture::hash();
    let e = &f.engine;
    conversation(e);
    let before = instant();
    let id = observed(e).keys().copied().next().unwrap();
    e.update(
        id,
        &MemoryUpdate {
            text: Some("A quiet evening of chess at the harbour.".into()),
            ..Default::default()
        },
        "user",
    )
    .unwrap();
    let old = observed(e)[&id].clone();
    let mut q = SearchQuery::new("pottery bowl kiln");
    q.k = 50;
    q.as_of = Some(before);
    let then = e.search(&q).unwrap();
    assert_eq!(then.as_of, Some(before));
    let hit = then
        .hits
        .iter()
        .find(|h| h.memory.id == id)
        .expect("found by its text then");
    assert!(hit.memory.text.contains("pottery"), "{}", hit.memory.text);

    q.as_of = None;
    q.query = "chess harbour".into();
    q.as_of = Some(before);
    let then = e.search(&q).unwrap();
    assert!(
        then.hits.iter().all(|h| !h.memory.text.contains("chess")),
        "the edit did not exist then"
    );
    assert_eq!(
        observed(e)[&id].access_count,
        old.access_count,
        "no access recorded"
    );
}

#[test]
fn a_memory_as_of_before_it_existed_is_not_found_and_the_timeline_marks_what_happened() {
    let f = Fixture::hash();
    let e = &f.engine;
    let before = instant();
    conversation(e);
    let id = observed(e).keys().copied().next().unwrap();
    assert_eq!(e.get_as_of(id, before).unwrap_err().code(), "not_found");
    let report = e.sleep(&options(), &Job::default()).unwrap();
    e.sleep_undo(report.id.unwrap(), &Job::default()).unwrap();

    let t = e.timeline().unwrap();
    let kinds: Vec<&str> = t.ticks.iter().map(|t| t.kind.as_str()).collect();
    assert_eq!(kinds, ["import", "sleep", "undo"], "{:?}", t.ticks);
    assert!(t.first.unwrap() > before && t.first <= t.last);

    // The scrubber's steps agree with the listing as of each tick.
    let steps = e.visibility_steps().unwrap();
    for tick in &t.ticks {
        let listed = as_of(e, tick.at);
        for (i, id) in steps.ids.iter().enumerate() {
            let shown = listed
                .get(id)
                .is_some_and(|m| m.deleted_at.is_none() && m.state != State::Forgotten);
            assert_eq!(
                steps.state_at(i, tick.at).is_some(),
                shown,
                "memory {id} at {tick:?}"
            );
        }
    }
}
