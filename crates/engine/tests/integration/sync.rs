//! Two engines (two "processes") on one store file: one writes, the other catches up with
//! `sync_external_changes`, and a persisted index saved by a process that missed the other's
//! writes is caught up (not trusted blindly) on the next open.

use crate::common::{backend, config, msg, open_hash, tempdir, Backend};
use somna_engine::{AddOptions, MemoryUpdate, SearchQuery};

fn search_ids(engine: &somna_engine::Somna, q: &str) -> Vec<i64> {
    engine
        .search_readonly(&SearchQuery::new(q))
        .unwrap()
        .hits
        .iter()
        .map(|h| h.memory.id)
        .collect()
}

#[test]
fn a_reader_sees_another_engines_adds_updates_and_deletes() {
    let dir = tempdir();
    let cfg = config(&dir);
    let app = open_hash(&cfg);
    let agent = open_hash(&cfg);
    let opts = AddOptions::default();

    // Nothing happened yet: an empty report.
    assert!(app.sync_external_changes().unwrap().is_empty());

    let added = agent
        .add(
            "c1",
            &[msg("Ada", "the lighthouse keeper repaints the tower")],
            &opts,
        )
        .unwrap();
    let id = added.episodes[0];
    // Before catching up, the reader's index does not hold the new vector.
    let indexed = app.stats().unwrap().indexed;

    let changes = app.sync_external_changes().unwrap();
    let added_ids: Vec<i64> = changes.added.iter().map(|m| m.id).collect();
    assert!(added_ids.contains(&id), "{changes:?}");
    if backend() == Backend::Sqlite {
        // (On Postgres the store's own index took it in as it was written.)
        assert!(changes.indexed >= 1);
    }
    assert_eq!(app.stats().unwrap().indexed, indexed + changes.indexed);
    assert!(search_ids(&app, "lighthouse tower").contains(&id));
    // Caught up: a second poll reports nothing.
    assert!(app.sync_external_changes().unwrap().is_empty());

    // The reader's own writes are not echoed back.
    app.add("c2", &[msg("Bo", "own write of the app")], &opts)
        .unwrap();
    assert!(app.sync_external_changes().unwrap().is_empty());

    let upd = MemoryUpdate {
        text: Some("the lighthouse keeper paints the boat".into()),
        ..Default::default()
    };
    agent.update(id, &upd, "agent").unwrap();
    let changes = app.sync_external_changes().unwrap();
    assert_eq!(changes.updated.len(), 1, "{changes:?}");
    assert_eq!(
        changes.updated[0].text,
        "the lighthouse keeper paints the boat"
    );

    agent.delete(id, false, "agent").unwrap();
    let changes = app.sync_external_changes().unwrap();
    assert_eq!(changes.removed, vec![id]);
    assert!(!search_ids(&app, "lighthouse boat").contains(&id));
    assert_eq!(app.stats().unwrap().indexed, agent.stats().unwrap().indexed);
}

#[test]
fn an_index_saved_by_a_process_that_missed_writes_is_caught_up_on_open() {
    let dir = tempdir();
    let cfg = config(&dir);
    let stale = open_hash(&cfg);
    let writer = open_hash(&cfg);
    let opts = AddOptions::default();
    // The stale process writes first, so its index has unsaved changes to write last.
    stale
        .add("c", &[msg("Bo", "the first note, from the app")], &opts)
        .unwrap();
    for i in 0..20 {
        let r = writer
            .add(
                "c",
                &[msg(
                    "Ada",
                    &format!("note number {i} about the harbour crane"),
                )],
                &opts,
            )
            .unwrap();
        assert_eq!(r.episodes.len(), 1);
    }
    drop(writer); // saves its index, which holds every vector
    drop(stale); // overwrites it with one that holds only its own vector

    let reopened = open_hash(&cfg);
    // The stale index was loaded (not rebuilt) and caught up from the change log.
    assert_eq!(reopened.open_report().index_rebuilt, None);
    let stats = reopened.stats().unwrap();
    assert_eq!(stats.memories, 21);
    assert_eq!(stats.indexed as u64, stats.memories, "{stats:?}");
    assert!(!search_ids(&reopened, "harbour crane").is_empty());
}
