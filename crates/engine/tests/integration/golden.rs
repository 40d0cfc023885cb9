//! The golden-query regression suite (saved queries, runs, regressions, runs around sleep
//! cycles) and the cost and latency ledger.

use crate::common::{err_code, open_hash, sample_conversation, Fixture};
use somna_engine::eval::golden::GoldenOptions;
use somna_engine::ledger::{Cost, LedgerGroup, FLUSH_AT, LONG_OP_MS};
use somna_engine::{AddOptions, Job, SearchQuery, SleepConfig, SleepOptions, Somna};

fn with_conversation() -> Fixture {
    let f = Fixture::hash();
    f.engine
        .add("c", &sample_conversation(), &AddOptions::default())
        .unwrap();
    f
}

/// The top hit of a query (so the tests do not depend on the hashing embedder's ranking).
fn top(engine: &Somna, q: &str) -> i64 {
    engine.search_readonly(&SearchQuery::new(q)).unwrap().hits[0]
        .memory
        .id
}

fn ledger_rows(engine: &Somna) -> i64 {
    engine
        .with_store(|s| {
            s.conn()
                .query_row("SELECT COUNT(*) FROM ledger", [], |r| r.get(0))
        })
        .unwrap()
}

#[test]
fn golden_queries_are_validated_listed_and_removed() {
    let f = with_conversation();
    let opts = GoldenOptions::default();
    assert_eq!(
        err_code(f.engine.golden_add("dog", &[], 10, &opts)),
        "invalid_input"
    );
    assert_eq!(
        err_code(f.engine.golden_add(" ", &[1], 10, &opts)),
        "invalid_input"
    );
    assert_eq!(
        err_code(f.engine.golden_add("dog", &[1], 0, &opts)),
        "invalid_input"
    );
    assert_eq!(
        err_code(f.engine.golden_add("dog", &[99_999], 10, &opts)),
        "not_found"
    );
    assert!(
        f.engine.golden_list().unwrap().is_empty(),
        "refused adds wrote nothing"
    );
    let g = f.engine.golden_add("puppy", &[3, 1, 3], 5, &opts).unwrap();
    assert_eq!((g.expected.as_slice(), g.k), (&[1, 3][..], 5));
    assert_eq!(f.engine.golden_list().unwrap(), vec![g.clone()]);
    f.engine.golden_remove(g.id).unwrap();
    assert!(f.engine.golden_list().unwrap().is_empty());
    assert_eq!(err_code(f.engine.golden_remove(g.id)), "invalid_input");
}

#[test]
fn a_run_scores_each_query_and_flags_regressions_against_the_previous_run() {
    let f = with_conversation();
    let q = "golden retriever puppy Max";
    let hit = top(&f.engine, q);
    let g = f
        .engine
        .golden_add(q, &[hit], 3, &GoldenOptions::default())
        .unwrap();
    let first = f
        .engine
        .golden_run("manual", None, &Job::default())
        .unwrap();
    let o = &first.outcomes[0];
    assert_eq!((o.query_id, o.recall, o.ndcg), (g.id, 1.0, 1.0));
    assert_eq!(
        (o.previous_recall, o.regressed, first.regressions),
        (None, false, 0)
    );
    assert_eq!(o.ranked[0], hit);

    // The same store again: no regression.
    let second = f
        .engine
        .golden_run("manual", None, &Job::default())
        .unwrap();
    assert_eq!(second.outcomes[0].previous_recall, Some(1.0));
    assert_eq!(second.regressions, 0);

    // Deleting the expected memory is a regression of R@k and NDCG@k.
    f.engine.delete(hit, false, "test").unwrap();
    let third = f
        .engine
        .golden_run("manual", None, &Job::default())
        .unwrap();
    let o = &third.outcomes[0];
    assert_eq!((o.recall, o.ndcg), (0.0, 0.0));
    assert!(o.regressed && third.regressions == 1);
    assert!(third.id > second.id);

    // A cancelled run stores nothing.
    let job = Job::default();
    job.cancel.cancel();
    assert!(f.engine.golden_run("manual", None, &job).is_err());
    let fourth = f
        .engine
        .golden_run("manual", None, &Job::default())
        .unwrap();
    assert_eq!(fourth.outcomes[0].previous_recall, Some(0.0));
    assert!(!fourth.outcomes[0].regressed);
}

#[test]
fn sleep_cycles_run_the_suite_before_and_after_and_keep_it_with_their_report() {
    let f = with_conversation();
    let opts = SleepOptions {
        config: SleepConfig {
            min_batch: 2,
            batch_size: 6,
            ..Default::default()
        },
        // Old sessions: the cycle archives most of the store (see the loss guard).
        force: true,
        ..Default::default()
    };
    // Without golden queries a cycle runs nothing.
    let quiet = f.engine.sleep(&opts, &Job::default()).unwrap();
    assert!(quiet.golden.is_empty());
    f.engine
        .sleep_undo(quiet.id.unwrap(), &Job::default())
        .unwrap();

    let q = "hiking trip to the Dolomites";
    let hit = top(&f.engine, q);
    f.engine
        .golden_add(q, &[hit], 10, &GoldenOptions::default())
        .unwrap();
    let rep = f.engine.sleep(&opts, &Job::default()).unwrap();
    let id = rep.id.unwrap();
    let stages: Vec<(&str, Option<i64>)> = rep
        .golden
        .iter()
        .map(|r| (r.stage.as_str(), r.cycle_id))
        .collect();
    assert_eq!(
        stages,
        vec![("before_sleep", Some(id)), ("after_sleep", Some(id))]
    );
    assert_eq!(rep.golden[0].outcomes[0].recall, 1.0);
    // The after run is compared with the before run.
    assert_eq!(rep.golden[1].outcomes[0].previous_recall, Some(1.0));
    // Stored with the cycle: the persisted report carries the same runs.
    assert_eq!(f.engine.sleep_report(id).unwrap().golden, rep.golden);
    assert_eq!(f.engine.golden_runs_for_cycle(id).unwrap(), rep.golden);
    // A dry run runs nothing.
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
    assert!(dry.golden.is_empty());
}

#[test]
fn the_history_lists_runs_by_hand_and_around_cycles_newest_first_with_the_expected_memories() {
    let f = with_conversation();
    let q = "hiking trip to the Dolomites";
    let hit = top(&f.engine, q);
    let g = f
        .engine
        .golden_add(q, &[hit], 10, &GoldenOptions::default())
        .unwrap();
    // Each query comes with the memories it expects, as they are now.
    let entries = f.engine.golden_entries().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].golden, g);
    assert_eq!(
        entries[0].memories.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![hit]
    );
    assert!(f.engine.golden_history(10).unwrap().is_empty());

    let manual = f
        .engine
        .golden_run("manual", None, &Job::default())
        .unwrap();
    let opts = SleepOptions {
        config: SleepConfig {
            min_batch: 2,
            batch_size: 6,
            ..Default::default()
        },
        force: true,
        ..Default::default()
    };
    let rep = f.engine.sleep(&opts, &Job::default()).unwrap();
    let history = f.engine.golden_history(10).unwrap();
    let seen: Vec<(i64, &str, Option<i64>)> = history
        .iter()
        .map(|r| (r.id, r.stage.as_str(), r.cycle_id))
        .collect();
    assert_eq!(
        seen,
        vec![
            (rep.golden[1].id, "after_sleep", rep.id),
            (rep.golden[0].id, "before_sleep", rep.id),
            (manual.id, "manual", None),
        ]
    );
    // The same runs, with the same outcomes, as the cycle's report and the manual run.
    assert_eq!(history[0], rep.golden[1]);
    assert_eq!(history[2], manual);
    // The before run is compared with the manual run before it.
    assert_eq!(history[1].outcomes[0].previous_recall, Some(1.0));
    assert_eq!(
        f.engine.golden_history(1).unwrap(),
        vec![history[0].clone()]
    );

    // A memory deleted for good drops out of the expected list; the query keeps its id.
    f.engine.delete(hit, true, "test").unwrap();
    let entries = f.engine.golden_entries().unwrap();
    assert!(entries[0].memories.is_empty());
    assert_eq!(entries[0].golden.expected, vec![hit]);
}

#[test]
fn the_ledger_records_operations_and_summarises_them() {
    let f = with_conversation();
    for q in ["puppy", "violin lessons", "Lisbon tram"] {
        f.engine.search(&SearchQuery::new(q)).unwrap();
    }
    let opts = SleepOptions {
        config: SleepConfig {
            min_batch: 2,
            batch_size: 6,
            ..Default::default()
        },
        // Old sessions: the cycle archives most of the store (see the loss guard).
        force: true,
        ..Default::default()
    };
    let rep = f.engine.sleep(&opts, &Job::default()).unwrap();
    let by_op = f.engine.ledger_summary(0, LedgerGroup::Op).unwrap();
    let op = |name: &str| by_op.iter().find(|r| r.op.as_deref() == Some(name));
    let add = op("add").expect("add recorded");
    assert_eq!(
        (add.count, add.items),
        (1, sample_conversation().len() as u64)
    );
    let search = op("search").expect("search recorded");
    assert_eq!(search.count, 3);
    assert!(search.total_ms > 0.0 && search.max_ms >= search.mean_ms);
    let embed = op("embed").expect("embedding batches recorded");
    assert!(embed.items >= sample_conversation().len() as u64);
    let compress = op("sleep:compress").expect("sleep phases recorded");
    let summaries = rep.phase("compress").unwrap().counts["summaries"];
    assert_eq!(
        (compress.count, compress.items, compress.llm_calls),
        (1, summaries, 0)
    );
    for phase in ["sleep:replay", "sleep:schemas", "sleep:forget"] {
        assert!(op(phase).is_some(), "{phase}");
    }
    // By day: every entry of this test falls into today's period.
    let by_day = f.engine.ledger_summary(0, LedgerGroup::Day).unwrap();
    assert!(by_day.iter().all(|r| r.period_start.is_some()));
    let total: u64 = by_day.iter().map(|r| r.count).sum();
    assert_eq!(total, by_op.iter().map(|r| r.count).sum::<u64>());
    // A `since` after everything selects nothing.
    let future = somna_engine::store::now_ms() + 60_000;
    assert!(f
        .engine
        .ledger_summary(future, LedgerGroup::Op)
        .unwrap()
        .is_empty());
}

#[test]
fn the_ledger_buffer_is_written_when_full_and_when_the_engine_closes() {
    let f = with_conversation();
    f.engine.flush_ledger().unwrap();
    let base = ledger_rows(&f.engine);
    // Below the threshold nothing is written yet…
    for _ in 0..10 {
        f.engine
            .search_readonly(&SearchQuery::new("puppy"))
            .unwrap();
    }
    assert_eq!(ledger_rows(&f.engine), base);
    // …at the threshold the buffer is written without being asked.
    for _ in 10..FLUSH_AT {
        f.engine
            .search_readonly(&SearchQuery::new("puppy"))
            .unwrap();
    }
    assert_eq!(ledger_rows(&f.engine), base + FLUSH_AT as i64);
    // Entries still buffered when the engine is dropped reach the store.
    f.engine
        .search_readonly(&SearchQuery::new("puppy"))
        .unwrap();
    let Fixture { engine, cfg, dir } = f;
    drop(engine);
    let again = open_hash(&cfg);
    assert_eq!(ledger_rows(&again), base + FLUSH_AT as i64 + 1);
    drop(again);
    drop(dir);
}

#[test]
fn a_long_operation_is_written_at_once_so_a_killed_process_keeps_it() {
    let f = with_conversation();
    f.engine.flush_ledger().unwrap();
    let base = ledger_rows(&f.engine);
    // A short one waits in the buffer…
    f.engine.record_ms("search", 12.0, Cost::items(10));
    // …a long one (an import, a sleep cycle) is written with what waited before it, and
    // another process on the store sees both while this engine is still open (as after a
    // kill: no drop, no read of the ledger by this engine).
    f.engine
        .record_ms("import", LONG_OP_MS + 500.0, Cost::items(1270));
    let other = open_hash(&f.cfg);
    let ops: Vec<String> = other
        .with_store(|s| {
            let mut stmt = s
                .conn()
                .prepare("SELECT op FROM ledger ORDER BY id DESC LIMIT 2")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<somna_engine::Result<Vec<String>>>()
        })
        .unwrap();
    assert_eq!(ops, ["import", "search"]);
    assert_eq!(ledger_rows(&other), base + 2);
}
