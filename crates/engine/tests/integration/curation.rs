//! Curation: merge, delete, restore, pin, tag and importance as logged operations with a
//! preview and an exact undo; pinned memories through sleep cycles; the loss guard; and
//! near-duplicate groups.

use crate::common::{err_code, msg_at, ts};
use crate::sleep::{all_states, dump, fixture, ids_of, options};
use somna_engine::curate::duplicates::DuplicateQuery;
use somna_engine::curate::CurateAction;
use somna_engine::sleep::Extractive;
use somna_engine::{AddOptions, Job, Kind, SleepConfig, SleepOptions, Somna, State};

fn curate(
    engine: &Somna,
    action: CurateAction,
) -> somna_engine::Result<somna_engine::curate::CurationReport> {
    engine.curate(&action, false, "test", &Extractive::default())
}

/// The lossless export without its timestamp: equal exports mean equal stores.
/// The export, without an undo's trace (the snapshots of what it removed, for time travel;
/// see `sleep::dump`), and without the logs every operation appends to (the operation log
/// itself and the ledger) and the highest memory id given, which an undone merge leaves
/// raised (ids are never reused).
fn export(engine: &Somna) -> String {
    let mut doc = engine.export().unwrap();
    doc.exported_at = 0;
    doc.history.retain(|h| !h.actor.starts_with("undo:"));
    doc.operations.clear();
    doc.ledger.clear();
    doc.last_memory_id = None;
    serde_json::to_string(&doc).unwrap()
}

fn sorted(ids: &[i64]) -> Vec<i64> {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v
}

fn episodes(engine: &Somna) -> Vec<i64> {
    ids_of(engine, Kind::Episode, all_states())
}

#[test]
fn a_merge_previews_then_archives_its_sources_and_undo_restores_the_store_exactly() {
    let f = fixture();
    let ids: Vec<i64> = episodes(&f.engine).into_iter().take(3).collect();
    let before_rows = dump(&f.engine);
    let before = export(&f.engine);
    let merge = CurateAction::Merge {
        ids: ids.clone(),
        text: None,
    };

    let preview = f
        .engine
        .curate(&merge, true, "test", &Extractive::default())
        .unwrap();
    assert_eq!(preview.status, "preview");
    assert_eq!(preview.id, None);
    assert_eq!(preview.changed.len(), 3, "each source archived");
    let draft = preview.merged.clone().unwrap();
    assert_eq!(draft.drafted_by, "extractive");
    assert_eq!(export(&f.engine), before, "a preview writes nothing");

    let done = curate(&f.engine, merge).unwrap();
    let merged = done.merged.clone().unwrap().id.unwrap();
    assert_eq!(done.merged.as_ref().unwrap().text, draft.text);
    let detail = f.engine.get(merged).unwrap();
    let mut prov: Vec<i64> = detail.provenance.iter().map(|m| m.id).collect();
    prov.sort();
    assert_eq!(prov, ids, "derived_from each source");
    assert!(detail.memory.tags.contains(&"merged".to_string()));
    for id in &ids {
        let m = f.engine.get(*id).unwrap().memory;
        assert_eq!(m.state, State::Archived);
        assert!(m.deleted_at.is_none(), "sources are kept");
    }
    assert_eq!(f.engine.curations(10).unwrap()[0].id, done.id);
    assert!(
        f.engine.sleep_history(10).unwrap().is_empty(),
        "curations are not sleep cycles"
    );

    let undone = f
        .engine
        .curate_undo(done.id.unwrap(), &Job::default())
        .unwrap();
    assert_eq!(undone.status, "undone");
    assert_eq!(export(&f.engine), before, "export equal after undo");
    assert_eq!(dump(&f.engine), before_rows, "every row equal after undo");
    assert_eq!(err_code(f.engine.get(merged)), "not_found");
    assert_eq!(
        err_code(f.engine.curate_undo(done.id.unwrap(), &Job::default())),
        "invalid_input",
        "undone once"
    );
}

#[test]
fn a_person_written_merge_keeps_their_text_and_search_finds_it() {
    let f = fixture();
    let ids: Vec<i64> = episodes(&f.engine).into_iter().take(2).collect();
    let done = curate(
        &f.engine,
        CurateAction::Merge {
            ids,
            text: Some("Ann throws pots at the Tuesday pottery class.".into()),
        },
    )
    .unwrap();
    let m = done.merged.unwrap();
    assert_eq!(m.drafted_by, "person");
    let hits = f
        .engine
        .search(&somna_engine::SearchQuery::new(
            "Tuesday pottery class pots",
        ))
        .unwrap();
    assert!(
        hits.hits.iter().any(|h| Some(h.memory.id) == m.id),
        "the merged memory is searchable"
    );
}

#[test]
fn delete_restore_pin_tag_and_importance_each_undo_exactly() {
    let f = fixture();
    let ids: Vec<i64> = episodes(&f.engine).into_iter().take(4).collect();
    let before = export(&f.engine);
    let actions = [
        CurateAction::Delete { ids: ids.clone() },
        CurateAction::Pin { ids: ids.clone() },
        CurateAction::Tag {
            ids: ids.clone(),
            add: vec!["kiln".into()],
            remove: vec![],
        },
        CurateAction::SetImportance {
            ids: ids.clone(),
            importance: 0.95,
        },
    ];
    for a in actions {
        let done = curate(&f.engine, a.clone()).unwrap();
        assert_eq!(done.changed.len(), ids.len(), "{a:?}");
        assert_ne!(export(&f.engine), before, "{a:?} changed the store");
        f.engine
            .curate_undo(done.id.unwrap(), &Job::default())
            .unwrap();
        assert_eq!(export(&f.engine), before, "{a:?} undone exactly");
    }

    // A deleted memory leaves search and comes back with restore (and with undo).
    let del = curate(&f.engine, CurateAction::Delete { ids: vec![ids[0]] }).unwrap();
    assert!(f.engine.get(ids[0]).unwrap().memory.deleted_at.is_some());
    assert_eq!(
        err_code(curate(&f.engine, CurateAction::Pin { ids: vec![ids[0]] })),
        "invalid_input",
        "a deleted memory is restored before anything else"
    );
    let restored = curate(&f.engine, CurateAction::Restore { ids: vec![ids[0]] }).unwrap();
    assert!(f.engine.get(ids[0]).unwrap().memory.deleted_at.is_none());
    // The delete cannot be undone while the later restore stands.
    match f.engine.curate_undo(del.id.unwrap(), &Job::default()) {
        Err(somna_engine::Error::UndoBlocked { later, .. }) => {
            assert_eq!(later, vec![restored.id.unwrap()])
        }
        other => panic!("{other:?}"),
    }
    f.engine
        .curate_undo(restored.id.unwrap(), &Job::default())
        .unwrap();
    f.engine
        .curate_undo(del.id.unwrap(), &Job::default())
        .unwrap();
    assert_eq!(export(&f.engine), before);

    assert_eq!(
        err_code(curate(&f.engine, CurateAction::Pin { ids: vec![999_999] })),
        "not_found"
    );
    assert_eq!(
        err_code(f.engine.curate_undo(424_242, &Job::default())),
        "curation_not_found"
    );
}

#[test]
fn a_sleep_cycle_that_a_later_curation_touched_is_undone_after_it_or_by_cascade() {
    let f = fixture();
    let before = export(&f.engine);
    let cycle = f.engine.sleep(&options(), &Job::default()).unwrap();
    let summary = cycle
        .created
        .iter()
        .find(|c| c.kind == Kind::Summary)
        .unwrap();
    let pin = curate(
        &f.engine,
        CurateAction::Pin {
            ids: vec![summary.id.unwrap()],
        },
    )
    .unwrap();
    assert_eq!(
        err_code(f.engine.sleep_undo(cycle.id.unwrap(), &Job::default())),
        "undo_blocked"
    );
    f.engine
        .sleep_undo_cascade(cycle.id.unwrap(), true, &Job::default())
        .unwrap();
    assert_eq!(f.engine.curations(5).unwrap()[0].status, "undone");
    assert_eq!(f.engine.curations(5).unwrap()[0].id, pin.id);
    assert_eq!(export(&f.engine), before);
}

#[test]
fn a_pinned_memory_survives_ten_aggressive_cycles() {
    let f = fixture();
    let eps = episodes(&f.engine);
    let pinned: Vec<i64> = eps.iter().copied().take(5).collect();
    curate(
        &f.engine,
        CurateAction::Pin {
            ids: pinned.clone(),
        },
    )
    .unwrap();
    let before: Vec<_> = pinned
        .iter()
        .map(|id| f.engine.get(*id).unwrap().memory)
        .collect();
    let mut opts = options();
    opts.config = SleepConfig {
        // Everything is old, worthless and short enough to forget.
        warm_after_days: 0.0,
        cold_after_days: 0.0,
        archive_after_days: 0.0,
        forget_importance: 1.0,
        forget_max_words: 1000,
        importance_half_life_days: 0.01,
        min_batch: 1,
        ..opts.config
    };
    for day in 0..10 {
        opts.config.now_ms = Some(options().config.now_ms.unwrap() + day * 86_400_000);
        f.engine.sleep(&opts, &Job::default()).unwrap();
    }
    let forgotten = ids_of(&f.engine, Kind::Episode, vec![State::Forgotten]);
    assert!(
        forgotten.len() > eps.len() / 2,
        "the settings do forget: {} of {}",
        forgotten.len(),
        eps.len()
    );
    for m in before {
        let now = f.engine.get(m.id).unwrap().memory;
        assert_eq!(
            (now.state, now.importance, now.pinned),
            (m.state, m.importance, true),
            "memory {}",
            m.id
        );
        let detail = f.engine.get(m.id).unwrap();
        assert!(
            !detail
                .links
                .iter()
                .any(|l| l.kind == somna_engine::memory::LinkKind::DerivedFrom && l.dst == m.id),
            "memory {} was never compressed into a summary",
            m.id
        );
    }
}

/// A store of `n` episodes, all a year old at the cycle's `now`, so a default cycle
/// archives every one of them.
fn old_store(n: usize) -> (crate::common::Fixture, i64) {
    let f = crate::common::Fixture::hash();
    let at = ts(2024, 1, 10, 12, 0);
    let messages: Vec<_> = (0..n)
        .map(|i| {
            msg_at(
                if i % 2 == 0 { "Ann" } else { "Bob" },
                &format!("Remark number {i} about the garden and the kiln"),
                &format!("s{}", i / 6),
                at + i as i64 * 60_000,
            )
        })
        .collect();
    f.engine
        .add(
            "old",
            &messages,
            &AddOptions {
                extract_facts: false,
                ..Default::default()
            },
        )
        .unwrap();
    (f, at + 365 * 86_400_000)
}

#[test]
fn the_loss_guard_refuses_a_cycle_that_would_archive_half_the_store_and_force_allows_it() {
    let (f, now) = old_store(24);
    let before = dump(&f.engine);
    let opts = SleepOptions {
        trigger: "test".into(),
        config: SleepConfig {
            now_ms: Some(now),
            ..Default::default()
        },
        ..Default::default()
    };
    let dry = f
        .engine
        .sleep(
            &SleepOptions {
                dry_run: true,
                ..opts.clone()
            },
            &Job::default(),
        )
        .unwrap();
    let loss = dry.loss.clone().unwrap();
    assert_eq!(loss.live, 24);
    assert!(loss.share() >= 0.5, "{loss:?}");
    assert!(
        loss.exceeded(),
        "the dry run reports what the guard would refuse"
    );

    let err = f.engine.sleep(&opts, &Job::default()).unwrap_err();
    assert_eq!(err.code(), "loss_guard");
    assert_eq!(err.kind(), somna_engine::ErrorKind::Conflict);
    let refused = &f.engine.sleep_history(1).unwrap()[0];
    assert_eq!(refused.status, "refused");
    assert!(refused.changed.is_empty() && refused.created.is_empty());
    assert!(
        refused.notes.iter().any(|n| n.contains("loss guard")),
        "{:?}",
        refused.notes
    );
    let after: Vec<String> = dump(&f.engine);
    assert_eq!(
        after, before,
        "a refused cycle writes no memory, link or history"
    );

    let forced = f
        .engine
        .sleep(
            &SleepOptions {
                force: true,
                ..opts
            },
            &Job::default(),
        )
        .unwrap();
    assert_eq!(forced.status, "completed");
    let l = forced.loss.unwrap();
    assert!(l.forced && l.lost >= 12, "{l:?}");
    assert_eq!(
        f.engine
            .sleep_report(forced.id.unwrap())
            .unwrap()
            .loss
            .unwrap()
            .lost,
        l.lost
    );
}

#[test]
fn near_duplicates_group_by_speaker_and_a_group_merges_in_one_action() {
    let f = crate::common::Fixture::hash();
    let at = ts(2025, 5, 1, 9, 0);
    let said = [
        ("Ann", "I adopted a greyhound called Pixel from the shelter"),
        ("Bob", "What a lovely dog"),
        ("Ann", "I adopted a greyhound called Pixel from the shelter"),
        ("Bob", "I adopted a greyhound called Pixel from the shelter"),
        ("Ann", "Thanks"),
        ("Ann", "Thanks"),
    ];
    let messages: Vec<_> = said
        .iter()
        .enumerate()
        .map(|(i, (who, text))| msg_at(who, text, "s1", at + i as i64 * 60_000))
        .collect();
    f.engine
        .add(
            "dogs",
            &messages,
            &AddOptions {
                extract_facts: false,
                ..Default::default()
            },
        )
        .unwrap();
    let groups = f
        .engine
        .find_duplicates(&DuplicateQuery::default())
        .unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0].ids.len(), 2, "Ann's two, not Bob's, not 'Thanks'");
    assert_eq!(groups[0].who.as_deref(), Some("Ann"));
    curate(
        &f.engine,
        CurateAction::Merge {
            ids: groups[0].ids.clone(),
            text: None,
        },
    )
    .unwrap();
    assert!(
        f.engine
            .find_duplicates(&DuplicateQuery::default())
            .unwrap()
            .is_empty(),
        "merged: the archived sources and the merged memory are not grouped again"
    );
    assert_eq!(
        err_code(f.engine.find_duplicates(&DuplicateQuery {
            threshold: 0.2,
            ..Default::default()
        })),
        "invalid_input"
    );
}

#[test]
fn a_reviewed_cycle_with_half_the_proposals_rejected_writes_exactly_the_accepted_half() {
    let f = fixture();
    let before = dump(&f.engine);
    let dry = f
        .engine
        .sleep(
            &SleepOptions {
                dry_run: true,
                ..options()
            },
            &Job::default(),
        )
        .unwrap();
    let summaries: Vec<&somna_engine::ProposedMemory> = dry
        .created
        .iter()
        .filter(|c| c.kind == Kind::Summary)
        .collect();
    assert!(
        summaries.len() >= 4,
        "the fixture proposes summaries: {}",
        summaries.len()
    );
    let accepted: Vec<Vec<i64>> = summaries
        .iter()
        .step_by(2)
        .map(|s| sorted(&s.derived_from))
        .collect();
    let state_changes: Vec<&somna_engine::FieldChange> =
        dry.changed.iter().filter(|c| c.field == "state").collect();
    assert!(state_changes.len() >= 4);
    let states: Vec<i64> = state_changes
        .iter()
        .step_by(2)
        .map(|c| c.memory_id)
        .collect();
    let review = somna_engine::Review {
        now_ms: dry.config.now_ms.unwrap_or(dry.started_at),
        summaries: accepted.clone(),
        schemas: Vec::new(),
        states: states.clone(),
        decay: false,
    };
    let done = sleep_reviewed(&f.engine, review);
    let mut written: Vec<Vec<i64>> = done
        .created
        .iter()
        .filter(|c| c.kind == Kind::Summary)
        .map(|c| sorted(&c.derived_from))
        .collect();
    written.sort();
    let mut want = accepted.clone();
    want.sort();
    assert_eq!(written, want, "exactly the accepted summaries");
    assert!(
        done.created.iter().all(|c| c.kind != Kind::Schema),
        "no schema was accepted"
    );
    let mut changed_states: Vec<i64> = done
        .changed
        .iter()
        .filter(|c| c.field == "state")
        .map(|c| c.memory_id)
        .collect();
    changed_states.sort();
    let mut want_states = states.clone();
    want_states.sort();
    assert_eq!(
        changed_states, want_states,
        "exactly the accepted state changes"
    );
    assert!(
        done.changed.iter().all(|c| c.field != "importance"),
        "decay was rejected"
    );
    for c in &state_changes {
        let now = f.engine.get(c.memory_id).unwrap().memory.state;
        let expect = if states.contains(&c.memory_id) {
            &c.new
        } else {
            &c.old
        };
        assert_eq!(
            now.as_str(),
            expect.as_str().unwrap(),
            "memory {}",
            c.memory_id
        );
    }
    // One cycle, undone like any other.
    f.engine
        .sleep_undo(done.id.unwrap(), &Job::default())
        .unwrap();
    assert_eq!(dump(&f.engine), before);
}

#[test]
fn a_review_of_proposals_the_store_no_longer_makes_writes_nothing_of_them_and_says_so() {
    let f = fixture();
    let review = somna_engine::Review {
        now_ms: options().config.now_ms.unwrap(),
        summaries: vec![vec![999_991, 999_992]],
        schemas: vec!["A schema nobody proposed".into()],
        states: vec![999_993],
        decay: false,
    };
    let done = sleep_reviewed(&f.engine, review);
    assert!(
        done.created.is_empty() && done.changed.is_empty(),
        "{done:?}"
    );
    assert!(
        done.notes.iter().any(|n| n.contains("no longer proposed")),
        "{:?}",
        done.notes
    );
}

/// A sleep cycle with the test options that writes only what `review` accepts.
fn sleep_reviewed(engine: &Somna, review: somna_engine::Review) -> somna_engine::SleepReport {
    engine
        .sleep(
            &SleepOptions {
                review: Some(review),
                ..options()
            },
            &Job::default(),
        )
        .unwrap()
}
