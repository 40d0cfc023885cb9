//! The change stream: every committed write of the engine is announced once, typed, after
//! its commit; other processes' writes arrive on the same stream, marked external, when the
//! engine catches up with them (by a call or its own watcher thread).

use crate::common::{config, msg, open_hash, tempdir, Fixture};
use somna_engine::sleep::auto::AutoSleepSettings;
use somna_engine::{
    AddOptions, Change, ChangeEvent, Job, MemoryUpdate, Origin, SearchQuery, Somna,
};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;

fn drain(rx: &Receiver<ChangeEvent>) -> Vec<ChangeEvent> {
    rx.try_iter().collect()
}

fn local(events: &[ChangeEvent]) -> Vec<&Change> {
    events
        .iter()
        .inspect(|e| assert_eq!(e.origin, Origin::Local, "{e:?}"))
        .map(|e| &e.change)
        .collect()
}

#[test]
fn each_write_announces_what_it_changed_after_it_commits() {
    let f = Fixture::hash();
    let rx = f.engine.subscribe();
    let added = f
        .engine
        .add(
            "c",
            &[
                msg("Ada", "the lighthouse keeper repaints the tower"),
                msg("Bo", "the lighthouse keeper repaints the tower again"),
            ],
            &AddOptions::default(),
        )
        .unwrap();
    let events = drain(&rx);
    let changes = local(&events);
    let mut ids = added.episodes.clone();
    ids.sort_unstable();
    assert!(
        changes.contains(&&Change::MemoriesAdded { ids: ids.clone() }),
        "{changes:?}"
    );
    assert!(changes.contains(&&Change::Messages {
        conversations: vec!["c".into()]
    }));
    if added.links_created > 0 {
        assert!(changes.contains(&&Change::Links { ids: ids.clone() }));
    }
    // One transaction, one change per kind.
    let kinds: Vec<String> = changes
        .iter()
        .map(|c| serde_json::to_value(c).unwrap()["kind"].to_string())
        .collect();
    let mut distinct = kinds.clone();
    distinct.dedup();
    assert_eq!(kinds, distinct);

    let id = ids[0];
    let upd = MemoryUpdate {
        importance: Some(0.9),
        ..Default::default()
    };
    f.engine.update(id, &upd, "user").unwrap();
    assert_eq!(
        local(&drain(&rx)),
        vec![&Change::MemoriesUpdated { ids: vec![id] }]
    );

    f.engine.search(&SearchQuery::new("lighthouse")).unwrap();
    assert!(matches!(
        local(&drain(&rx))[..],
        [Change::MemoriesAccessed { .. }]
    ));
    // A read-only search writes nothing, so it announces nothing.
    f.engine
        .search_readonly(&SearchQuery::new("lighthouse"))
        .unwrap();
    assert!(drain(&rx).is_empty());

    f.engine.delete(id, false, "user").unwrap();
    assert_eq!(
        local(&drain(&rx)),
        vec![&Change::MemoriesRemoved { ids: vec![id] }]
    );
    f.engine.restore(id, "user").unwrap();
    assert_eq!(
        local(&drain(&rx)),
        vec![&Change::MemoriesUpdated { ids: vec![id] }]
    );
}

#[test]
fn a_refused_write_announces_nothing() {
    let f = Fixture::hash();
    let rx = f.engine.subscribe();
    // Refused before its transaction: an empty text.
    assert!(f
        .engine
        .add("c", &[msg("Ada", "   ")], &AddOptions::default())
        .is_err());
    f.engine
        .add("c", &[msg("Ada", "a first note")], &AddOptions::default())
        .unwrap();
    // Refused inside its transaction, after a first memory was written: an export whose
    // second memory's id is taken. (The export writes the buffered ledger first, a change
    // of its own.)
    let mut doc = f.engine.export().unwrap();
    drain(&rx);
    let mut fresh = doc.memories[0].clone();
    fresh.memory.id = 999;
    doc.memories.insert(0, fresh);
    doc.links.clear();
    doc.messages.clear();
    doc.history.clear();
    doc.co_access.clear();
    assert!(f.engine.import_export(&doc, &Job::default()).is_err());
    assert_eq!(crate::common::err_code(f.engine.get(999)), "not_found");
    assert!(drain(&rx).is_empty());
    // A dropped receiver does not disturb the others.
    let other = f.engine.subscribe();
    drop(other);
    f.engine
        .add("c", &[msg("Ada", "a kept note")], &AddOptions::default())
        .unwrap();
    assert!(!drain(&rx).is_empty());
}

#[test]
fn another_processes_writes_arrive_as_external_changes() {
    let dir = tempdir();
    let cfg = config(&dir);
    let app = open_hash(&cfg);
    let agent = open_hash(&cfg);
    let rx = app.subscribe();
    let id = agent
        .add(
            "c",
            &[msg("Ada", "written by the agent")],
            &AddOptions::default(),
        )
        .unwrap()
        .episodes[0];
    // Nothing arrives until the app catches up.
    assert!(drain(&rx).is_empty());
    app.sync_external_changes().unwrap();
    let events = drain(&rx);
    assert_eq!(
        events,
        vec![ChangeEvent {
            origin: Origin::External,
            change: Change::MemoriesAdded { ids: vec![id] },
        }]
    );
    agent.delete(id, false, "agent").unwrap();
    app.sync_external_changes().unwrap();
    assert_eq!(
        drain(&rx)[0].change,
        Change::MemoriesRemoved { ids: vec![id] }
    );
}

#[test]
fn the_engines_watcher_catches_up_by_itself_and_stops_with_its_handle() {
    let dir = tempdir();
    let cfg = config(&dir);
    let app: Arc<Somna> = Arc::new(open_hash(&cfg));
    let agent = open_hash(&cfg);
    let rx = app.subscribe();
    let watch = app.watch_external(Duration::from_millis(20));
    let id = agent
        .add(
            "c",
            &[msg("Ada", "seen without a poll")],
            &AddOptions::default(),
        )
        .unwrap()
        .episodes[0];
    let event = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{e:?}; the watcher's last error: {:?}", watch.last_error()));
    assert_eq!(event.origin, Origin::External);
    assert_eq!(event.change, Change::MemoriesAdded { ids: vec![id] });
    assert_eq!(watch.last_error(), None);
    watch.stop();
    agent
        .add(
            "c",
            &[msg("Ada", "after the watcher stopped")],
            &AddOptions::default(),
        )
        .unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
}

#[test]
fn another_processes_clusters_cycles_settings_and_undo_arrive_as_external_changes() {
    let dir = tempdir();
    let cfg = config(&dir);
    let app = open_hash(&cfg);
    let agent = open_hash(&cfg);
    crate::sleep::conversation(&agent);
    let rx = app.subscribe();
    app.sync_external_changes().unwrap();
    drain(&rx);
    let external = |rx: &Receiver<ChangeEvent>| -> Vec<Change> {
        app.sync_external_changes().unwrap();
        drain(rx)
            .into_iter()
            .inspect(|e| assert_eq!(e.origin, Origin::External, "{e:?}"))
            .map(|e| e.change)
            .collect()
    };

    agent.cluster(Some(2), &Job::default()).unwrap();
    let mut clusters: Vec<i64> = agent.clusters().unwrap().iter().map(|c| c.id).collect();
    clusters.sort_unstable();
    assert_eq!(external(&rx), vec![Change::Clusters { ids: clusters }]);

    agent
        .set_auto_sleep_settings(&AutoSleepSettings {
            enabled: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        external(&rx),
        vec![Change::Settings {
            keys: vec!["auto_sleep".into()]
        }]
    );

    let cycle = agent
        .sleep(&crate::sleep::options(), &Job::default())
        .unwrap();
    let id = cycle.id.unwrap();
    let found = external(&rx);
    assert!(
        found.contains(&Change::SleepCycles { ids: vec![id] }),
        "{found:?}"
    );
    assert!(!cycle.created.is_empty());
    // Its summaries arrive as added (with their links).
    assert!(
        found
            .iter()
            .any(|c| matches!(c, Change::MemoriesAdded { .. })),
        "{found:?}"
    );

    // An undo writes no history; what it set back and removed arrives all the same.
    agent.sleep_undo(id, &Job::default()).unwrap();
    let found = external(&rx);
    assert!(
        found.contains(&Change::SleepCycles { ids: vec![id] }),
        "{found:?}"
    );
    let removed = found
        .iter()
        .find_map(|c| match c {
            Change::MemoriesRemoved { ids } => Some(ids.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let created: Vec<i64> = cycle.created.iter().filter_map(|m| m.id).collect();
    assert!(!created.is_empty());
    assert!(created.iter().all(|m| removed.contains(m)), "{found:?}");
    // Nothing more happened elsewhere: nothing more arrives.
    assert!(external(&rx).is_empty());
}
