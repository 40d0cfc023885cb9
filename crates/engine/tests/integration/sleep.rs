//! Sleep cycles: consolidation into summaries and schemas, forgetting, the persisted
//! report, dry runs that write nothing, exact undo, and cancellation in every phase.

use crate::common::{msg_at, open_hash, ts, Fixture};
use somna_engine::memory::Details;
use somna_engine::sleep::PHASES;
use somna_engine::{
    AddOptions, Job, Kind, ListQuery, MemoryFilter, ProgressEvent, SearchQuery, SleepConfig,
    SleepOptions, Somna, State,
};
use std::sync::Arc;

const NOW: i64 = 1_735_689_600_000; // 2025-01-01

/// Six sessions of two friends, each about one of three hobbies, with short filler turns.
pub(crate) fn conversation(engine: &Somna) {
    conversation_in(engine, "ann-bob", |session| {
        ts(2023, 3 + session as u32, 10, 18, 0)
    })
}

/// The same conversation under `name`, session `n` starting at `day(n)`.
pub(crate) fn conversation_in(engine: &Somna, name: &str, day: impl Fn(usize) -> i64) {
    let topics = [
        (
            "pottery",
            "I glazed a pottery bowl in my pottery class and the kiln cracked it.",
        ),
        (
            "hiking",
            "We went hiking in the mountains and the hiking trail was steep.",
        ),
        (
            "violin",
            "My violin teacher says my violin vibrato improved a lot.",
        ),
    ];
    let mut messages = Vec::new();
    for session in 0..6 {
        let (topic, line) = topics[session % 3];
        let day = day(session);
        let s = format!("session_{session}");
        let turns = [
            ("Ann", line.to_string()),
            ("Bob", format!("How long have you been doing {topic} now?")),
            (
                "Ann",
                format!("About a year of {topic}; the {topic} group meets every Sunday."),
            ),
            ("Bob", "Thanks!".to_string()),
            (
                "Ann",
                format!("Next month the {topic} club has a big showcase in Lisbon."),
            ),
            (
                "Bob",
                format!("I would love to join the {topic} showcase with my sister."),
            ),
        ];
        for (i, (who, text)) in turns.into_iter().enumerate() {
            messages.push(msg_at(who, &text, &s, day + i as i64 * 60_000));
        }
    }
    let opts = AddOptions {
        extract_facts: false,
        ..Default::default()
    };
    engine.add(name, &messages, &opts).unwrap();
}

pub(crate) fn options() -> SleepOptions {
    SleepOptions {
        dry_run: false,
        trigger: "test".into(),
        config: SleepConfig {
            now_ms: Some(NOW),
            batch_size: 6,
            ..Default::default()
        },
        // The fixture's sessions are months old at NOW: a cycle archives most of them,
        // which the loss guard (tested in `curation`) would refuse.
        force: true,
        review: None,
    }
}

pub(crate) fn fixture() -> Fixture {
    let f = Fixture::hash();
    conversation(&f.engine);
    f
}

/// [`fixture`] in a SQLite file whatever the backend under test: for tests of the file
/// itself (its bytes, the lock file beside it). On Postgres, a dry run's reads and the
/// cycle lock are covered by `postgres.rs`.
fn sqlite_fixture() -> Fixture {
    let f = Fixture::sqlite_hash();
    conversation(&f.engine);
    f
}

pub(crate) fn ids_of(engine: &Somna, kind: Kind, states: Vec<State>) -> Vec<i64> {
    engine
        .list(&ListQuery {
            filter: MemoryFilter {
                kinds: vec![kind],
                states,
                ..Default::default()
            },
            limit: 10_000,
            ..Default::default()
        })
        .unwrap()
        .memories
        .iter()
        .map(|m| m.id)
        .collect()
}

pub(crate) fn all_states() -> Vec<State> {
    State::ALL.to_vec()
}

/// Every row of the tables a cycle touches, as text (embeddings included). An undo leaves
/// one trace, checked by `undo_restores_every_touched_row_exactly`: a `hard_delete` history
/// entry (actor `undo:<id>`) with the snapshot of each memory it removed, so time travel
/// can still show them; those entries are left out here.
pub(crate) fn dump(engine: &Somna) -> Vec<String> {
    engine
        .with_store(|s| {
            let mut out = Vec::new();
            for sql in [
                "SELECT * FROM memories ORDER BY id",
                "SELECT * FROM links ORDER BY src, dst, kind",
                "SELECT * FROM history WHERE actor NOT LIKE 'undo:%' ORDER BY id",
                "SELECT * FROM messages ORDER BY id",
                "SELECT * FROM co_access ORDER BY a, b",
                "SELECT * FROM memory_access ORDER BY memory_id",
            ] {
                let mut stmt = s.conn().prepare(sql)?;
                let n = stmt.column_count();
                let rows = stmt.query_map([], |r| {
                    let cols: Vec<String> = (0..n).map(|i| r.show(i)).collect();
                    Ok(cols.join("|"))
                })?;
                for row in rows {
                    out.push(row?);
                }
            }
            Ok(out)
        })
        .unwrap()
}

/// Episodes that no live summary derives from, and episodes more than one does.
fn consolidation_counts(engine: &Somna) -> (usize, usize) {
    engine
        .with_store(|s| {
            let q = |sql: &str| -> somna_engine::Result<usize> {
                Ok(s.conn().query_row(sql, [], |r| r.get::<i64>(0))? as usize)
            };
            let per_episode =
                "SELECT e.id, (SELECT COUNT(*) FROM links l JOIN memories m ON m.id = l.src
                 WHERE l.dst = e.id AND l.kind = 'derived_from' AND m.kind = 'summary') AS n
                 FROM memories e WHERE e.kind = 'episode'";
            Ok((
                q(&format!("SELECT COUNT(*) FROM ({per_episode}) WHERE n = 0"))?,
                q(&format!("SELECT COUNT(*) FROM ({per_episode}) WHERE n > 1"))?,
            ))
        })
        .unwrap()
}

#[test]
fn a_cycle_consolidates_episodes_forms_schemas_and_forgets_filler() {
    let f = fixture();
    let episodes = ids_of(&f.engine, Kind::Episode, all_states());
    assert_eq!(episodes.len(), 36);
    let r = f.engine.sleep(&options(), &Job::default()).unwrap();
    assert_eq!(r.status, "completed");
    assert_eq!(
        r.phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        PHASES
    );
    assert!(r.phases.iter().all(|p| p.committed));
    assert_eq!(r.phase("replay").unwrap().counts["selected"], 36);

    // One summary per session, each derived from its six turns.
    let summaries = ids_of(&f.engine, Kind::Summary, vec![]);
    assert_eq!(summaries.len(), 6);
    assert_eq!(consolidation_counts(&f.engine), (0, 0));
    let detail = f.engine.get(summaries[0]).unwrap();
    assert_eq!(detail.provenance.len(), 6);
    assert!(detail.memory.text.contains("Ann and Bob talked about"));
    match &detail.memory.details {
        Details::Summary {
            key_concepts,
            source_episode_ids,
            confidence,
            ..
        } => {
            assert_eq!(source_episode_ids.len(), 6);
            assert!(key_concepts.iter().any(|k| k.contains("pottery")));
            assert!(*confidence > 0.0);
        }
        other => panic!("not a summary: {other:?}"),
    }

    // Schemas: each hobby recurs in two sessions, but three summaries are needed.
    let schemas: Vec<_> = r
        .created
        .iter()
        .filter(|p| p.kind == Kind::Schema)
        .collect();
    assert!(
        schemas.is_empty(),
        "support 3 needs three sessions per topic"
    );

    // The filler turns ("Thanks!") are old, unused and consolidated: forgotten, not deleted.
    assert_eq!(r.forgotten.len(), 6);
    for id in &r.forgotten {
        let m = f.engine.get(*id).unwrap().memory;
        assert_eq!(m.state, State::Forgotten);
        assert_eq!(m.text, "Thanks!");
        assert!(m.deleted_at.is_none());
    }
    // Everything else is archived by age (2023 turns, a 2025 "now").
    let archived = ids_of(&f.engine, Kind::Episode, vec![State::Archived]);
    assert_eq!(archived.len(), 30);

    // Summaries are embedded and indexed: a search restricted to summaries finds one,
    // and it leads back to its source turns.
    let mut q = SearchQuery::new("pottery class kiln bowl");
    q.filter.kinds = vec![Kind::Summary];
    let hits = f.engine.search_readonly(&q).unwrap().hits;
    assert!(!hits.is_empty());
    let top = f.engine.get(hits[0].memory.id).unwrap();
    assert!(top.provenance.iter().any(|m| m.text.contains("kiln")));

    // The report is persisted as returned.
    let stored = f.engine.sleep_report(r.id.unwrap()).unwrap();
    assert_eq!(stored.created, r.created);
    assert_eq!(stored.changed, r.changed);
    assert_eq!(stored.forgotten, r.forgotten);
    assert_eq!(stored.phases, r.phases);
    assert_eq!(f.engine.sleep_history(10).unwrap().len(), 1);

    // A second cycle finds nothing left to consolidate and changes nothing it already did.
    let again = f.engine.sleep(&options(), &Job::default()).unwrap();
    assert_eq!(again.phase("replay").unwrap().counts["candidates"], 0);
    assert!(again.created.is_empty());
    assert!(again.forgotten.is_empty());
}

#[test]
fn schemas_group_summaries_that_share_a_concept_across_sessions() {
    let f = fixture();
    let mut opts = options();
    opts.config.schema_min_support = 2;
    let r = f.engine.sleep(&opts, &Job::default()).unwrap();
    let schemas: Vec<_> = r
        .created
        .iter()
        .filter(|p| p.kind == Kind::Schema)
        .collect();
    assert_eq!(schemas.len(), 3, "{schemas:#?}");
    for s in schemas {
        let Details::Schema {
            name,
            core_concepts,
            related_memory_ids,
            examples,
            ..
        } = &s.details
        else {
            panic!("not a schema")
        };
        assert_eq!(related_memory_ids.len(), 2);
        assert_eq!(s.derived_from, *related_memory_ids);
        assert!(["Pottery", "Hiking", "Violin"]
            .iter()
            .any(|t| name.starts_with(t)));
        assert!(!core_concepts.is_empty() && !examples.is_empty());
        let m = f.engine.get(s.id.unwrap()).unwrap().memory;
        assert_eq!(m.kind, Kind::Schema);
        assert!(m.text.starts_with(name.as_str()));
    }
}

fn file_bytes(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn a_dry_run_writes_nothing_and_proposes_what_a_real_run_does() {
    let f = sqlite_fixture();
    let cfg = f.cfg.clone();
    let dir = f.dir;
    drop(f.engine);
    let wal = cfg.db_path.with_extension("db-wal");
    let before = file_bytes(&cfg.db_path);

    let engine = open_hash(&cfg);
    let mut opts = options();
    opts.dry_run = true;
    opts.config.schema_min_support = 2;
    let dry = engine.sleep(&opts, &Job::default()).unwrap();
    assert_eq!(dry.id, None);
    assert_eq!(dry.status, "dry_run");
    assert!(dry.phases.iter().all(|p| !p.committed));
    assert_eq!(dry.created.len(), 6 + 3);
    assert!(dry.created.iter().all(|p| p.id.is_none()));
    // Schemas over proposed summaries point at them by position.
    let schema = dry.created.iter().find(|p| p.kind == Kind::Schema).unwrap();
    assert_eq!(schema.derived_from_proposed.len(), 2);
    assert!(schema
        .derived_from_proposed
        .iter()
        .all(|&i| dry.created[i].kind == Kind::Summary));
    assert!(engine.sleep_history(10).unwrap().is_empty());
    drop(engine);
    assert_eq!(
        file_bytes(&cfg.db_path),
        before,
        "the database file changed"
    );
    assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0);

    // The real run creates exactly what the dry run proposed.
    let engine = open_hash(&cfg);
    opts.dry_run = false;
    let real = engine.sleep(&opts, &Job::default()).unwrap();
    let texts = |r: &somna_engine::SleepReport| -> Vec<String> {
        r.created.iter().map(|p| p.text.clone()).collect()
    };
    assert_eq!(texts(&real), texts(&dry));
    assert_eq!(real.forgotten, dry.forgotten);
    assert_eq!(real.changed.len(), dry.changed.len());
    drop(engine);
    drop(dir);
}

#[test]
fn undo_restores_every_touched_row_exactly() {
    let f = fixture();
    // Give some memories a history of their own first: an access, an edit.
    let mut q = SearchQuery::new("violin teacher");
    q.k = 3;
    f.engine.search(&q).unwrap();
    let before = dump(&f.engine);
    let indexed_before = f.engine.stats().unwrap().indexed;

    let mut opts = options();
    opts.config.schema_min_support = 2;
    let r = f.engine.sleep(&opts, &Job::default()).unwrap();
    assert!(!r.created.is_empty() && !r.forgotten.is_empty());
    assert_ne!(dump(&f.engine), before);

    let undone = f.engine.sleep_undo(r.id.unwrap(), &Job::default()).unwrap();
    assert_eq!(undone.status, "undone");
    // The undo's report counts what it removed and reverted (it said "0 removed").
    let ids = |rep: &somna_engine::SleepReport| -> Vec<Option<i64>> {
        rep.created.iter().map(|m| m.id).collect()
    };
    assert_eq!(ids(&undone), ids(&r));
    assert_eq!(
        (undone.changed.len(), undone.forgotten.len()),
        (r.changed.len(), r.forgotten.len())
    );
    assert!(undone.notes.iter().any(|n| n.starts_with("undone at")));
    assert_eq!(dump(&f.engine), before);
    // The trace: a snapshot of each memory the undo removed, as it was.
    for m in &r.created {
        let id = m.id.unwrap();
        let trace = f.engine.history(id).unwrap();
        assert_eq!(trace.len(), 1, "memory {id}: {trace:?}");
        assert_eq!(
            (trace[0].event.as_str(), trace[0].actor.clone()),
            ("hard_delete", format!("undo:{}", r.id.unwrap()))
        );
        assert_eq!(
            trace[0].old_value.as_ref().unwrap()["text"],
            m.text.as_str()
        );
    }
    assert_eq!(f.engine.stats().unwrap().indexed, indexed_before);
    let mut q = SearchQuery::new("pottery class kiln bowl");
    q.filter.kinds = vec![Kind::Summary, Kind::Schema];
    assert!(f.engine.search_readonly(&q).unwrap().hits.is_empty());
    // Undone twice is refused; the report stays in the history as undone.
    assert_eq!(
        f.engine
            .sleep_undo(r.id.unwrap(), &Job::default())
            .unwrap_err()
            .code(),
        "invalid_input"
    );
    assert_eq!(f.engine.sleep_history(5).unwrap()[0].status, "undone");

    // After the undo a new cycle does the same work again.
    let again = f.engine.sleep(&opts, &Job::default()).unwrap();
    assert_eq!(again.created.len(), r.created.len());
    assert_eq!(consolidation_counts(&f.engine), (0, 0));
}

/// Rows of memories, links and history about memories with ids in `lo..=hi`, per table,
/// each row as its columns' text.
fn rows_in(engine: &Somna, lo: i64, hi: i64) -> [Vec<Vec<String>>; 3] {
    engine
        .with_store(|s| {
            let mut out: [Vec<Vec<String>>; 3] = Default::default();
            for (t, sql) in [
                "SELECT m.*, a.* FROM memories m LEFT JOIN memory_access a ON a.memory_id = m.id
                 WHERE m.id BETWEEN ?1 AND ?2 ORDER BY m.id",
                "SELECT * FROM links WHERE src BETWEEN ?1 AND ?2 OR dst BETWEEN ?1 AND ?2
                 ORDER BY src, dst, kind",
                "SELECT * FROM history WHERE memory_id BETWEEN ?1 AND ?2 AND actor NOT LIKE 'undo:%' ORDER BY id",
            ]
            .into_iter()
            .enumerate()
            {
                let mut stmt = s.conn().prepare(sql)?;
                let n = stmt.column_count();
                let rows = stmt.query_map([lo, hi], |r| {
                    Ok((0..n)
                        .map(|i| r.show(i))
                        .collect::<Vec<String>>())
                })?;
                for row in rows {
                    out[t].push(row?);
                }
            }
            Ok(out)
        })
        .unwrap()
}

fn max_id(engine: &Somna) -> i64 {
    engine
        .with_store(|s| {
            s.conn()
                .query_row("SELECT MAX(id) FROM memories", [], |r| r.get(0))
        })
        .unwrap()
}

#[test]
fn an_earlier_cycle_that_later_cycles_did_not_touch_is_undone_exactly() {
    let f = Fixture::hash();
    let mut opts = options();
    opts.config.schema_min_support = 2;
    // Three cycles, each over its own conversation of the week before: they touch
    // disjoint memories (everything stays active, so no later cycle changes a lifecycle).
    let week = |session: usize| NOW - 6 * 86_400_000 + session as i64 * 86_400_000;
    conversation_in(&f.engine, "a", week);
    let a_end = max_id(&f.engine);
    let before_a = rows_in(&f.engine, 0, a_end);
    let c1 = f.engine.sleep(&opts, &Job::default()).unwrap();
    assert!(!c1.created.is_empty() && !c1.changed.is_empty());
    conversation_in(&f.engine, "b", week);
    let c2 = f.engine.sleep(&opts, &Job::default()).unwrap();
    conversation_in(&f.engine, "c", week);
    let c3 = f.engine.sleep(&opts, &Job::default()).unwrap();
    assert!(!c2.created.is_empty() && !c3.created.is_empty());
    let later_before = rows_in(&f.engine, a_end + 1, i64::MAX);
    let indexed_before = f.engine.stats().unwrap().indexed;

    let id1 = c1.id.unwrap();
    assert!(f.engine.sleep_undo_blockers(id1).unwrap().is_empty());
    let undone = f.engine.sleep_undo(id1, &Job::default()).unwrap();
    assert_eq!(undone.status, "undone");
    // Conversation a is back exactly as it was before cycle 1…
    assert_eq!(rows_in(&f.engine, 0, a_end), before_a);
    // …and what cycles 2 and 3 made, apart from cycle 1's own memories, is untouched.
    // Cycle 1's own memories (created before conversation b) go, with their links and
    // history: memories by id, links by either end, history by memory id.
    let c1_ids: std::collections::HashSet<String> = c1
        .created
        .iter()
        .map(|p| format!("Integer({})", p.id.unwrap()))
        .collect();
    let [m, l, h] = later_before;
    let later_kept = [
        m.into_iter()
            .filter(|r| !c1_ids.contains(&r[0]))
            .collect::<Vec<_>>(),
        l.into_iter()
            .filter(|r| !c1_ids.contains(&r[0]) && !c1_ids.contains(&r[1]))
            .collect(),
        h.into_iter().filter(|r| !c1_ids.contains(&r[1])).collect(),
    ];
    let later_now = rows_in(&f.engine, a_end + 1, i64::MAX);
    assert_eq!(later_now, later_kept);
    assert_eq!(
        f.engine.stats().unwrap().indexed,
        indexed_before - c1.created.len()
    );
    let statuses: Vec<String> = f
        .engine
        .sleep_history(5)
        .unwrap()
        .into_iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, ["completed", "completed", "undone"]);
}

#[test]
fn an_earlier_cycle_that_a_later_one_touched_needs_that_one_undone_first_or_a_cascade() {
    let f = fixture();
    let before = dump(&f.engine);
    let first = f.engine.sleep(&options(), &Job::default()).unwrap();
    // A year later: the second cycle decays what the first one created.
    let mut later = options();
    later.config.now_ms = Some(somna_engine::store::now_ms() + 400 * 86_400_000);
    let second = f.engine.sleep(&later, &Job::default()).unwrap();
    let (id1, id2) = (first.id.unwrap(), second.id.unwrap());
    assert!(second
        .changed
        .iter()
        .any(|c| first.created.iter().any(|p| p.id == Some(c.memory_id))));
    let err = f.engine.sleep_undo(id1, &Job::default()).unwrap_err();
    match &err {
        somna_engine::Error::UndoBlocked { cycle, later } => {
            assert_eq!((*cycle, later.as_slice()), (id1, &[id2][..]))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.code(), "undo_blocked");
    assert_ne!(dump(&f.engine), before, "a refused undo writes nothing");
    let undone = f
        .engine
        .sleep_undo_cascade(id1, true, &Job::default())
        .unwrap();
    assert_eq!(
        undone.iter().map(|r| r.id.unwrap()).collect::<Vec<_>>(),
        vec![id2, id1],
        "newest first"
    );
    assert_eq!(dump(&f.engine), before);
    assert!(ids_of(&f.engine, Kind::Summary, all_states()).is_empty());
}

/// A job that cancels itself as soon as `phase` reports progress.
fn cancel_in(phase: &'static str) -> Job {
    let cancel = somna_engine::CancelToken::new();
    let token = cancel.clone();
    Job {
        progress: Arc::new(move |e: ProgressEvent| {
            if e.stage == phase {
                token.cancel();
            }
        }),
        cancel,
    }
}

#[test]
fn a_cycle_stopped_in_any_phase_leaves_a_consistent_store_and_the_next_one_finishes() {
    for (n, phase) in PHASES.iter().enumerate() {
        let f = fixture();
        let episodes = ids_of(&f.engine, Kind::Episode, all_states());
        let mut opts = options();
        opts.config.schema_min_support = 2;
        let err = f.engine.sleep(&opts, &cancel_in(phase)).unwrap_err();
        assert_eq!(err.code(), "cancelled", "phase {phase}");

        let cycle = &f.engine.sleep_history(1).unwrap()[0];
        assert_eq!(cycle.status, "cancelled");
        let committed: Vec<&str> = cycle
            .phases
            .iter()
            .filter(|p| p.committed)
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(committed, PHASES[..n], "phase {phase}");
        // Nothing of the stopped phase was written.
        let summaries = ids_of(&f.engine, Kind::Summary, all_states());
        let schemas = ids_of(&f.engine, Kind::Schema, all_states());
        assert_eq!(summaries.is_empty(), n < 2, "phase {phase}");
        assert_eq!(schemas.is_empty(), n < 3, "phase {phase}");
        assert!(ids_of(&f.engine, Kind::Episode, vec![State::Forgotten]).is_empty());
        assert_eq!(cycle.created.len(), summaries.len() + schemas.len());

        // A killed process leaves its cycle "running"; emulate that, then reopen.
        f.engine
            .with_store(|s| {
                s.conn()
                    .execute("UPDATE sleep_cycles SET status = 'running'", [])?;
                Ok(())
            })
            .unwrap();
        let cfg = f.cfg.clone();
        let dir = f.dir;
        drop(f.engine);
        let engine = open_hash(&cfg);
        let next = engine.sleep(&opts, &Job::default()).unwrap();
        assert_eq!(next.status, "completed", "phase {phase}");
        assert!(next.notes.iter().any(|n| n.contains("interrupted")));
        assert_eq!(engine.sleep_history(2).unwrap()[1].status, "interrupted");
        // No episode lost; each consolidated exactly once; the forgotten ones kept.
        assert_eq!(ids_of(&engine, Kind::Episode, all_states()), episodes);
        assert_eq!(consolidation_counts(&engine), (0, 0), "phase {phase}");
        assert_eq!(ids_of(&engine, Kind::Summary, vec![]).len(), 6);
        assert_eq!(ids_of(&engine, Kind::Schema, vec![]).len(), 3);
        assert_eq!(
            ids_of(&engine, Kind::Episode, vec![State::Forgotten]).len(),
            6
        );
        drop(engine);
        drop(dir);
    }
}

#[test]
fn undo_is_refused_for_the_whole_time_a_cycle_runs() {
    let f = fixture();
    let first = f.engine.sleep(&options(), &Job::default()).unwrap();
    conversation_in(&f.engine, "cara-dan", |session| {
        ts(2023, 3 + session as u32, 12, 18, 0)
    });
    // A job that holds the next cycle between its replay and compression phases (no store
    // lock is held there) until the test lets it go.
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let entered_tx = std::sync::Mutex::new(Some(entered_tx));
    let released = std::sync::Mutex::new(released);
    let job = Job {
        progress: Arc::new(move |e: ProgressEvent| {
            if e.stage == "compress" {
                if let Some(tx) = entered_tx.lock().unwrap().take() {
                    tx.send(()).unwrap();
                    let _ = released.lock().unwrap().recv();
                }
            }
        }),
        cancel: somna_engine::CancelToken::new(),
    };
    std::thread::scope(|s| {
        // Dropped on a failed assertion too, so the cycle never waits forever.
        let release = release;
        let cycle = s.spawn(|| f.engine.sleep(&options(), &job));
        entered.recv().unwrap();
        let id = first.id.unwrap();
        let err = f.engine.sleep_undo(id, &Job::default()).unwrap_err();
        assert_eq!(err.code(), "cycle_running");
        let err = f
            .engine
            .sleep_undo_cascade(id, true, &Job::default())
            .unwrap_err();
        assert_eq!(err.code(), "cycle_running");
        let err = f.engine.sleep(&options(), &Job::default()).unwrap_err();
        assert_eq!(err.code(), "cycle_running");
        release.send(()).unwrap();
        assert_eq!(cycle.join().unwrap().unwrap().status, "completed");
    });
    // Once the cycle has ended, undo works again.
    let undone = f
        .engine
        .sleep_undo_cascade(first.id.unwrap(), true, &Job::default())
        .unwrap();
    assert_eq!(undone.last().unwrap().id, first.id);
    assert!(undone.iter().all(|r| r.status == "undone"));
}

/// A job that holds its cycle between the replay and compression phases until `released`
/// sends (or hangs up), telling `entered` once it is held.
fn held_at_compress(
    entered: std::sync::mpsc::Sender<()>,
    released: std::sync::mpsc::Receiver<()>,
) -> Job {
    let entered = std::sync::Mutex::new(Some(entered));
    let released = std::sync::Mutex::new(released);
    Job {
        progress: Arc::new(move |e: ProgressEvent| {
            if e.stage == "compress" {
                if let Some(tx) = entered.lock().unwrap().take() {
                    tx.send(()).unwrap();
                    let _ = released.lock().unwrap().recv();
                }
            }
        }),
        cancel: somna_engine::CancelToken::new(),
    }
}

#[test]
fn another_processes_running_cycle_refuses_undo_and_a_dead_ones_row_does_not() {
    let f = sqlite_fixture();
    let first = f.engine.sleep(&options(), &Job::default()).unwrap();
    let id = first.id.unwrap();
    let lock_path = somna_engine::paths::sleep_lock(&f.cfg.db_path);
    let other_process = || {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .unwrap()
    };

    // A running cycle holds the store's lock file, so another process sharing the store
    // cannot take it (an OS file lock conflicts between two open files even in one process,
    // as it does between two processes).
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let job = held_at_compress(entered_tx, released);
    std::thread::scope(|s| {
        let release = release;
        let cycle = s.spawn(|| f.engine.sleep(&options(), &job));
        entered.recv().unwrap();
        assert!(matches!(
            other_process().try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        release.send(()).unwrap();
        assert_eq!(cycle.join().unwrap().unwrap().status, "completed");
    });

    // Another process's cycle (its lock, its `running` row): undo and a new cycle here are
    // refused as long as it runs.
    let held = other_process();
    held.try_lock().unwrap();
    let second = f.engine.sleep_history(1).unwrap()[0].id.unwrap();
    somna_engine::store::Store::open(&f.cfg.db_path)
        .unwrap()
        .conn()
        .execute(
            "UPDATE sleep_cycles SET status = 'running' WHERE id = ?1",
            [second],
        )
        .unwrap();
    let err = f.engine.sleep_undo(id, &Job::default()).unwrap_err();
    assert_eq!(err.code(), "cycle_running");
    let err = f
        .engine
        .sleep_undo_cascade(id, true, &Job::default())
        .unwrap_err();
    assert_eq!(err.code(), "cycle_running");
    assert_eq!(
        f.engine
            .sleep(&options(), &Job::default())
            .unwrap_err()
            .code(),
        "cycle_running"
    );

    // That process died: the OS dropped its lock, and the `running` row it left behind
    // does not refuse undo.
    drop(held);
    let undone = f
        .engine
        .sleep_undo_cascade(id, true, &Job::default())
        .unwrap();
    assert_eq!(undone.last().unwrap().id, Some(id));
    assert!(undone.iter().all(|r| r.status == "undone"));
}

#[test]
fn a_bad_config_is_refused_before_anything_is_written() {
    let f = fixture();
    let mut opts = options();
    opts.config.batch_size = 1;
    assert_eq!(
        f.engine.sleep(&opts, &Job::default()).unwrap_err().code(),
        "invalid_input"
    );
    assert!(f.engine.sleep_history(1).unwrap().is_empty());
    let parsed: Result<SleepConfig, _> = serde_json::from_str(r#"{"batch_sise": 4}"#);
    assert!(parsed.is_err(), "unknown fields are refused");
    let parsed: SleepConfig = serde_json::from_str(r#"{"batch_size": 4}"#).unwrap();
    assert_eq!(parsed.batch_size, 4);
    assert_eq!(parsed.min_batch, SleepConfig::default().min_batch);
}

/// The OpenAI-compatible backend against a small local chat-completions server.
mod chat_backend {
    use super::*;
    use somna_engine::sleep::chat::{ChatCompressor, ChatConfig};
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::Mutex;
    use std::time::Duration;

    /// What the server answers: status, body, delay before answering.
    type Reply = (u16, String, Duration);

    /// Serves every request with `reply(request body, request number)`; returns the base
    /// URL and the bodies received.
    fn server(
        reply: impl Fn(&serde_json::Value, usize) -> Reply + Send + Sync + 'static,
    ) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let reply = Arc::new(reply);
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                let (reply, log) = (reply.clone(), log.clone());
                // One thread per connection: a slow answer delays only its own request.
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut len = 0;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        if line == "\r\n" || line.is_empty() {
                            break;
                        }
                        if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    let (status, text, delay) = reply(&body, n);
                    log.lock().unwrap().push(body);
                    std::thread::sleep(delay);
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                        text.len()
                    );
                });
            }
        });
        (url, seen)
    }

    fn content(text: &str) -> String {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": text}}]})
            .to_string()
    }

    fn is_schema_request(body: &serde_json::Value) -> bool {
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("recurring pattern")
    }

    fn episodes_in(body: &serde_json::Value) -> usize {
        body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .lines()
            .count()
    }

    /// A well-behaved model.
    fn good(body: &serde_json::Value) -> Reply {
        let text = if is_schema_request(body) {
            serde_json::json!({"name": "A hobby", "description": "Ann keeps returning to it.",
                "core_concepts": ["hobby"], "examples": ["Ann: I love it."], "confidence": 0.8})
        } else {
            let prompt = body["messages"][1]["content"].as_str().unwrap();
            let topic = ["pottery", "hiking", "violin"]
                .into_iter()
                .find(|t| prompt.contains(t))
                .unwrap_or("chat");
            serde_json::json!({"summary": format!("Ann and Bob discussed {} turns.", episodes_in(body)),
                "key_concepts": [topic, "showcase"], "themes": ["leisure"], "relationships": [],
                "confidence": 0.9})
        };
        (
            200,
            content(&format!("```json\n{text}\n```")),
            Duration::ZERO,
        )
    }

    fn run(url: String, timeout_secs: u64) -> somna_engine::SleepReport {
        let f = fixture();
        let chat = ChatCompressor::new(ChatConfig {
            base_url: url,
            model: "test-model".into(),
            api_key: Some("sk-test".into()),
            timeout_secs,
        });
        let mut opts = options();
        opts.config.schema_min_support = 2;
        f.engine.sleep_with(&opts, &chat, &Job::default()).unwrap()
    }

    fn backends(r: &somna_engine::SleepReport) -> Vec<&str> {
        r.created.iter().map(|p| p.backend.as_str()).collect()
    }

    #[test]
    fn a_good_endpoint_writes_the_summaries_and_schemas() {
        let (url, seen) = server(|b, _| good(b));
        let r = run(url, 10);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        assert!(backends(&r).iter().all(|b| *b == "chat:test-model"));
        let summary = r.created.iter().find(|p| p.kind == Kind::Summary).unwrap();
        assert_eq!(summary.text, "Ann and Bob discussed 6 turns.");
        let schema = r.created.iter().find(|p| p.kind == Kind::Schema).unwrap();
        assert!(schema
            .text
            .starts_with("A hobby: Ann keeps returning to it."));
        let first = &seen.lock().unwrap()[0];
        assert_eq!(first["model"], "test-model");
        assert!(first["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Ann: I glazed a pottery bowl"));
    }

    #[test]
    fn malformed_json_falls_back_to_extractive_per_batch() {
        let (url, _) = server(|b, _| {
            if is_schema_request(b) {
                good(b)
            } else {
                (200, content("{\"summary\": \"cut off"), Duration::ZERO)
            }
        });
        let r = run(url, 10);
        let summaries: Vec<_> = r
            .created
            .iter()
            .filter(|p| p.kind == Kind::Summary)
            .collect();
        assert_eq!(summaries.len(), 6);
        for s in summaries {
            assert_eq!(s.backend, "extractive (fallback from chat:test-model)");
            assert!(s.text.contains("Ann and Bob talked about"));
        }
        assert_eq!(
            r.notes
                .iter()
                .filter(|n| n.contains("no JSON object"))
                .count(),
            6,
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn http_errors_fall_back_and_are_reported() {
        let (url, _) = server(|b, n| {
            if n == 0 {
                (500, "{\"error\": \"boom\"}".into(), Duration::ZERO)
            } else {
                good(b)
            }
        });
        let r = run(url, 10);
        assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
        assert!(r.notes[0].contains("HTTP 500"));
        assert_eq!(
            backends(&r)
                .iter()
                .filter(|b| b.contains("fallback"))
                .count(),
            1
        );
    }

    #[test]
    fn a_slow_endpoint_times_out_and_falls_back() {
        let (url, _) = server(|b, n| {
            let (s, t, _) = good(b);
            (s, t, Duration::from_millis(if n == 0 { 2500 } else { 0 }))
        });
        let r = run(url, 1);
        assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
        assert_eq!(
            backends(&r)
                .iter()
                .filter(|b| b.contains("fallback"))
                .count(),
            1
        );
        assert_eq!(r.created.len(), 6 + 3);
    }

    #[test]
    fn a_context_overflow_is_retried_with_the_newest_half() {
        let (url, seen) = server(|b, _| {
            if !is_schema_request(b) && episodes_in(b) > 3 {
                let e = serde_json::json!({"error": {"code": "context_length_exceeded",
                    "message": "This model's maximum context length is 512 tokens."}});
                (400, e.to_string(), Duration::ZERO)
            } else {
                good(b)
            }
        });
        let r = run(url, 10);
        let summaries: Vec<_> = r
            .created
            .iter()
            .filter(|p| p.kind == Kind::Summary)
            .collect();
        assert!(summaries
            .iter()
            .all(|s| s.backend == "chat:test-model" && s.text == "Ann and Bob discussed 3 turns."));
        assert_eq!(
            r.notes
                .iter()
                .filter(|n| n.contains("retried with the newest 3 of 6 episodes"))
                .count(),
            6
        );
        // The retry dropped the oldest turns: it starts at the session's fourth turn.
        let seen = seen.lock().unwrap();
        let retry = seen.iter().find(|b| episodes_in(b) == 3).unwrap();
        assert!(retry["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Bob: Thanks!"));
    }
}

#[test]
fn auto_sleep_runs_in_the_background_after_enough_new_episodes() {
    let f = Fixture::hash();
    let engine = Arc::new(f.engine);
    let auto = somna_engine::sleep::auto::AutoSleep::spawn(
        engine.clone(),
        30,
        std::time::Duration::from_millis(20),
        options(),
    );
    conversation(&engine); // 36 episodes: over the threshold
    let start = std::time::Instant::now();
    while auto.reports().is_empty() {
        assert!(start.elapsed().as_secs() < 30, "no cycle started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = auto.reports().remove(0).unwrap();
    assert_eq!(r.trigger, "auto");
    assert_eq!(r.status, "completed");
    // Below the threshold again: no further cycle.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(auto.reports().len(), 1);
    auto.stop();
    assert_eq!(ids_of(&engine, Kind::Summary, vec![]).len(), 6);
    drop(engine);
    drop(f.dir);
}

#[test]
fn the_auto_sleep_setting_survives_a_reopen_and_starts_auto_sleep_only_when_enabled() {
    use somna_engine::sleep::auto::{AutoSleep, AutoSleepSettings};
    let f = Fixture::hash();
    assert_eq!(
        f.engine.auto_sleep_settings().unwrap(),
        AutoSleepSettings::default()
    );
    assert!(!AutoSleepSettings::default().enabled);
    let bad = AutoSleepSettings {
        every: 0,
        ..Default::default()
    };
    assert_eq!(
        crate::common::err_code(f.engine.set_auto_sleep_settings(&bad)),
        "invalid_input"
    );
    let on = AutoSleepSettings {
        enabled: true,
        every: 30,
        poll_secs: 0.02,
    };
    f.engine.set_auto_sleep_settings(&on).unwrap();
    let Fixture { engine, cfg, dir } = f;
    drop(engine);
    let engine = Arc::new(open_hash(&cfg));
    assert_eq!(engine.auto_sleep_settings().unwrap(), on);
    let auto = AutoSleep::from_settings(engine.clone())
        .unwrap()
        .expect("enabled: started");
    conversation(&engine);
    let start = std::time::Instant::now();
    while auto.cycles() == 0 {
        assert!(start.elapsed().as_secs() < 30, "no cycle started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    auto.stop();
    engine
        .set_auto_sleep_settings(&AutoSleepSettings {
            enabled: false,
            ..on
        })
        .unwrap();
    assert!(AutoSleep::from_settings(engine.clone()).unwrap().is_none());
    drop(engine);
    drop(dir);
}
