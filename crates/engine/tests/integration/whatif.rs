//! The what-if simulator: its predictions equal what real forget phases then do with the
//! same settings on a copy of the store; it writes nothing; applied settings are logged and
//! undone.

use crate::common::{backend, config, open_hash, tempdir, Backend, Fixture};
use crate::sleep::{conversation_in, ids_of};
use somna_engine::embed::CountingEmbedder;
use somna_engine::store::now_ms;
use somna_engine::whatif::WhatIfRequest;
use somna_engine::{
    Config, DecayModel, Error, Job, Kind, SettingsPatch, SleepConfig, SleepOptions, Somna, State,
};
use std::collections::BTreeMap;

const DAY: i64 = 86_400_000;

/// The patch tried in these tests: every lifecycle knob moved.
fn patch() -> SettingsPatch {
    SettingsPatch {
        decay: Some(DecayModel::PowerLaw),
        half_life_days: Some(10.0),
        warm_after_days: Some(5.0),
        cold_after_days: Some(20.0),
        archive_after_days: Some(60.0),
        forget_importance: Some(0.5),
        forget_max_words: Some(8),
        ..Default::default()
    }
}

/// A store with a past: the six-session conversation spread over the last 200 days, a
/// cycle now (it consolidates every session, decays importance and ages the turns) and a
/// pinned turn. Importance decays with time in the store, so the simulations below are
/// of the coming months.
fn store_with_a_past() -> Fixture {
    store_with_a_past_in(Fixture::hash())
}

fn store_with_a_past_in(f: Fixture) -> Fixture {
    let today = now_ms();
    conversation_in(&f.engine, "ann-bob", |session| {
        today - [200, 150, 100, 60, 30, 10][session] * DAY
    });
    let first = SleepOptions {
        trigger: "test".into(),
        config: SleepConfig {
            batch_size: 6,
            ..Default::default()
        },
        force: true,
        ..Default::default()
    };
    f.engine.sleep(&first, &Job::default()).unwrap();
    let episodes = ids_of(
        &f.engine,
        Kind::Episode,
        vec![State::Active, State::Warm, State::Cold],
    );
    assert!(episodes.len() > 10, "{episodes:?}");
    f.engine
        .curate(
            &somna_engine::curate::CurateAction::Pin {
                ids: vec![episodes[0]],
            },
            false,
            "test",
            &somna_engine::compress::Extractive::default(),
        )
        .unwrap();
    f
}

/// Copies a closed store (its file, or a Postgres store by a lossless export into a new
/// one) and opens the copy.
fn copy_of(cfg: &Config) -> (Somna, tempfile::TempDir) {
    let dir = tempdir();
    if backend() == Backend::Postgres {
        let doc = open_hash(cfg).export().unwrap();
        let copy = open_hash(&config(&dir));
        copy.import_export(&doc, &Job::default()).unwrap();
        return (copy, dir);
    }
    let copy = Config::new(dir.path().join("somna.db"), cfg.model_dir.clone());
    std::fs::copy(&cfg.db_path, &copy.db_path).unwrap();
    (open_hash(&copy), dir)
}

/// Every memory's state, by id.
fn states(engine: &Somna) -> BTreeMap<i64, State> {
    engine
        .list(&somna_engine::ListQuery {
            filter: somna_engine::MemoryFilter {
                states: State::ALL.to_vec(),
                ..Default::default()
            },
            limit: 10_000,
            ..Default::default()
        })
        .unwrap()
        .memories
        .iter()
        .map(|m| (m.id, m.state))
        .collect()
}

fn cycle_at(engine: &Somna, config: &SleepConfig, at: i64) -> somna_engine::SleepReport {
    let opts = SleepOptions {
        trigger: "test".into(),
        config: SleepConfig {
            now_ms: Some(at),
            ..config.clone()
        },
        force: true,
        ..Default::default()
    };
    engine.sleep(&opts, &Job::default()).unwrap()
}

#[test]
fn predicted_state_changes_equal_what_real_forget_phases_then_do_on_a_copy() {
    let f = store_with_a_past();
    let now = now_ms() + 20 * DAY;
    let horizon = 120.0;
    let req = WhatIfRequest {
        patch: patch(),
        horizon_days: Some(horizon),
        limit: Some(100_000),
        now_ms: Some(now),
        ..Default::default()
    };
    let report = f.engine.what_if(&req).unwrap();
    let proposed = report.after.sleep.clone();
    assert_eq!(proposed.decay, DecayModel::PowerLaw);
    let l = &report.lifecycle;
    assert!(l.next_cycle_after > 0 && l.differing > 0, "{l:?}");
    let before = states(&f.engine);
    let (cfg, dir) = (f.cfg.clone(), f.dir);
    drop(f.engine);

    // The next cycle: exactly the predicted state changes.
    let (copy, _copy_dir) = copy_of(&cfg);
    let real = cycle_at(&copy, &proposed, now);
    let mut done: Vec<(i64, String, String)> = real
        .changed
        .iter()
        .filter(|c| c.field == "state")
        .map(|c| {
            let s = |v: &serde_json::Value| v.as_str().unwrap().to_string();
            (c.memory_id, s(&c.old), s(&c.new))
        })
        .collect();
    done.sort();
    let predicted: Vec<(i64, String, String)> = l
        .next_cycle
        .iter()
        .map(|c| (c.memory_id, c.from.as_str().into(), c.to.as_str().into()))
        .collect();
    assert_eq!(predicted, done);
    assert_eq!(l.next_cycle_after, done.len());

    // Later: a cycle at the horizon leaves every memory in its predicted state, and one a
    // minute before a predicted transition has not made it yet.
    let end = now + (horizon * DAY as f64) as i64;
    let mut expected = before.clone();
    let mut by_time: Vec<_> = l
        .transitions
        .iter()
        .filter_map(|t| t.after_at.map(|at| (at, t)))
        .collect();
    by_time.sort_by_key(|(at, t)| (*at, t.memory_id));
    for (_, t) in &by_time {
        expected.insert(t.memory_id, t.to);
    }
    // A lifecycle step (by age alone: a cycle a minute earlier decays importance too little
    // to be recorded, which would shift a forgetting).
    let later = by_time
        .iter()
        .find(|(at, t)| *at > now + DAY && t.to != State::Forgotten)
        .map(|(at, t)| (*at, t.memory_id, t.to))
        .expect("a transition after the next cycle");
    cycle_at(&copy, &proposed, end);
    let after_horizon = states(&copy);
    for (id, state) in &expected {
        assert_eq!(after_horizon.get(id), Some(state), "memory {id}");
    }
    drop(copy);

    let (copy, _copy_dir) = copy_of(&cfg);
    cycle_at(&copy, &proposed, now);
    cycle_at(&copy, &proposed, later.0 - 60_000);
    assert_ne!(states(&copy)[&later.1], later.2, "too early");
    cycle_at(&copy, &proposed, later.0);
    assert_eq!(states(&copy)[&later.1], later.2, "on time");
    drop(dir);
}

#[test]
fn a_simulation_writes_nothing() {
    // The file's bytes are the proof, so a SQLite file whatever the backend under test.
    let f = store_with_a_past_in(Fixture::sqlite_hash());
    let episodes = ids_of(&f.engine, Kind::Episode, State::ALL.to_vec());
    f.engine
        .golden_add("pottery kiln bowl", &episodes[..2], 5, &Default::default())
        .unwrap();
    f.engine
        .golden_add(
            "violin vibrato teacher",
            &episodes[12..14],
            5,
            &Default::default(),
        )
        .unwrap();
    let (cfg, dir) = (f.cfg.clone(), f.dir);
    drop(f.engine);
    let bytes = std::fs::read(&cfg.db_path).unwrap();

    let engine = open_hash(&cfg);
    let mut p = patch();
    p.weights = Some(somna_engine::retrieve::Weights {
        semantic: 0.7,
        lexical: 0.1,
        recency: 0.1,
        actor: 0.05,
        spatial: 0.0,
        usage: 0.05,
    });
    let report = engine
        .what_if(&WhatIfRequest {
            patch: p,
            query: Some("pottery class".into()),
            now_ms: Some(now_ms() + 20 * DAY),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(report.golden.queries.len(), 2);
    let search = report.search.as_ref().expect("the search both ways");
    assert!(!search.before.hits.is_empty() && !search.after.hits.is_empty());
    assert_eq!(search.after.weights.semantic, 0.7);
    // Memories the next cycle forgets under the proposed settings are not found.
    let forgotten: Vec<i64> = report
        .lifecycle
        .next_cycle
        .iter()
        .filter(|c| c.to == State::Forgotten)
        .map(|c| c.memory_id)
        .collect();
    assert!(!forgotten.is_empty());
    assert!(search
        .after
        .hits
        .iter()
        .all(|h| !forgotten.contains(&h.memory.id)));
    drop(engine);
    assert_eq!(
        std::fs::read(&cfg.db_path).unwrap(),
        bytes,
        "the store changed"
    );
    drop(dir);
}

#[test]
fn applied_settings_are_saved_logged_and_undone_in_order() {
    let f = Fixture::hash();
    let e = &f.engine;
    assert_eq!(e.settings().unwrap(), somna_engine::Settings::default());
    let first = e.apply_settings(&patch(), "test").unwrap();
    assert_eq!(e.settings().unwrap(), first.new);
    assert_eq!(first.new.sleep.archive_after_days, 60.0);
    let second = e
        .apply_settings(
            &SettingsPatch {
                half_life_days: Some(3.0),
                ..Default::default()
            },
            "test",
        )
        .unwrap();
    assert_eq!(second.old, first.new);
    // The same values again change nothing and are refused.
    let same = e.apply_settings(
        &SettingsPatch {
            half_life_days: Some(3.0),
            ..Default::default()
        },
        "test",
    );
    assert_eq!(same.unwrap_err().code(), "invalid_input");
    // A bad value is refused and the settings are unchanged.
    let bad = e.apply_settings(
        &SettingsPatch {
            decay_alpha: Some(-1.0),
            ..Default::default()
        },
        "test",
    );
    assert_eq!(bad.unwrap_err().code(), "invalid_input");
    assert_eq!(e.settings().unwrap(), second.new);

    let log = e.settings_history(10).unwrap();
    assert_eq!(
        log.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec![second.id, first.id]
    );
    assert!(e.timeline().unwrap().ticks.iter().any(|t| t
        .label
        .starts_with(&format!("settings change {}", first.id))));

    // The first cannot be undone under the second.
    match e.settings_undo(first.id, &Job::default()) {
        Err(Error::UndoBlocked { later, .. }) => assert_eq!(later, vec![second.id]),
        other => panic!("expected undo_blocked, got {other:?}"),
    }
    let undone = e.settings_undo(second.id, &Job::default()).unwrap();
    assert_eq!(undone.status, "undone");
    assert_eq!(e.settings().unwrap(), first.new);
    e.settings_undo(first.id, &Job::default()).unwrap();
    assert_eq!(e.settings().unwrap(), somna_engine::Settings::default());
    assert_eq!(
        e.settings_undo(first.id, &Job::default())
            .unwrap_err()
            .code(),
        "invalid_input"
    );
    // An id that is no application of settings (a sleep cycle's, or none) is not found.
    for id in [second.id + 1000, -1] {
        assert_eq!(
            e.settings_undo(id, &Job::default()).unwrap_err().code(),
            "settings_not_found"
        );
    }
    // The saved settings survive a reopen.
    e.apply_settings(&patch(), "test").unwrap();
    let (cfg, dir) = (f.cfg.clone(), f.dir);
    drop(f.engine);
    let engine = open_hash(&cfg);
    assert_eq!(engine.settings().unwrap().sleep.decay, DecayModel::PowerLaw);
    drop(engine);
    drop(dir);
}

#[test]
fn the_lifecycle_snapshot_reads_what_the_full_one_does_but_the_columns_it_leaves_out() {
    let f = store_with_a_past();
    // A deleted memory is read by neither.
    let gone = ids_of(
        &f.engine,
        Kind::Episode,
        vec![State::Active, State::Warm, State::Cold],
    )[0];
    f.engine.delete(gone, false, "test").unwrap();
    let (full, lean) = f
        .engine
        .with_store(|s| {
            let read = s.read();
            let mut lean = Vec::new();
            read.memories_for_lifecycle(i64::MIN..i64::MAX, &mut lean)?;
            Ok((read.all_memories()?, lean))
        })
        .unwrap();
    // The store's summaries carry details and its episodes a speaker, so the left-out
    // columns are not empty to begin with.
    assert!(full
        .iter()
        .any(|m| m.details != somna_engine::memory::Details::None));
    assert!(full.iter().any(|m| m.w5h1.who.is_some()));
    let expected: Vec<_> = full
        .into_iter()
        .filter(|m| m.deleted_at.is_none())
        .map(|mut m| {
            m.w5h1 = Default::default();
            m.tags.clear();
            m.metadata = serde_json::Value::Null;
            m.details = somna_engine::memory::Details::None;
            m
        })
        .collect();
    assert!(expected.len() > 10 && !expected.iter().any(|m| m.id == gone));
    assert_eq!(lean, expected);
}

#[test]
fn two_threads_on_two_connections_simulate_what_one_thread_does() {
    let f = store_with_a_past();
    let episodes = ids_of(&f.engine, Kind::Episode, State::ALL.to_vec());
    for (query, expected) in [
        ("pottery kiln bowl", &episodes[..2]),
        ("violin vibrato teacher", &episodes[12..14]),
        ("weekend plans", &episodes[4..5]),
        ("what did Ann say about her sister", &episodes[6..8]),
        ("lighthouse trip photos", &episodes[9..10]),
    ] {
        f.engine
            .golden_add(query, expected, 5, &Default::default())
            .unwrap();
    }
    let req = WhatIfRequest {
        patch: patch(),
        query: Some("pottery class".into()),
        now_ms: Some(now_ms() + 20 * DAY),
        limit: Some(100_000),
        ..Default::default()
    };
    // Twice each way: the second connection is kept from one simulation to the next.
    for _ in 0..2 {
        let two = f.engine.what_if(&req).unwrap();
        let one = f.engine.what_if_on_one_thread(&req).unwrap();
        assert!(two.lifecycle.simulated > 20, "{}", two.lifecycle.simulated);
        assert_eq!(two.lifecycle, one.lifecycle);
        assert_eq!(two.golden, one.golden);
        assert_eq!(two.golden.queries.len(), 5);
        // Scores within a millionth: recency is reckoned from the clock, which moves
        // between the two searches.
        let same = |a: &somna_engine::SearchResponse, b: &somna_engine::SearchResponse| {
            let ids = |r: &somna_engine::SearchResponse| -> Vec<i64> {
                r.hits.iter().map(|h| h.memory.id).collect()
            };
            assert_eq!(ids(a), ids(b));
            for (x, y) in a.hits.iter().zip(&b.hits) {
                assert!(
                    (x.score - y.score).abs() < 1e-6,
                    "{} vs {}",
                    x.score,
                    y.score
                );
            }
        };
        let (s2, s1) = (two.search.unwrap(), one.search.unwrap());
        assert!(!s2.after.hits.is_empty());
        same(&s2.before, &s1.before);
        same(&s2.after, &s1.after);
    }
}

/// Opens `cfg`'s store in a new engine (as a new process would) whose embedder counts.
fn open_counting(cfg: &Config) -> (Somna, std::sync::Arc<CountingEmbedder>) {
    let counting = std::sync::Arc::new(CountingEmbedder::new(384));
    let engine = Somna::open_with(cfg, counting.clone(), &Job::default()).unwrap();
    (engine, counting)
}

#[test]
fn a_golden_query_is_embedded_when_saved_and_a_new_process_simulates_without_embedding_it() {
    let Fixture { engine, cfg, dir } = store_with_a_past();
    let episodes = ids_of(&engine, Kind::Episode, State::ALL.to_vec());
    let golden: Vec<i64> = [
        ("pottery kiln bowl", &episodes[..2]),
        (
            "What did Ann say of her violin vibrato teacher?",
            &episodes[12..14],
        ),
        ("lighthouse trip photos", &episodes[9..10]),
    ]
    .into_iter()
    .map(|(query, expected)| {
        engine
            .golden_add(query, expected, 5, &Default::default())
            .unwrap()
            .id
    })
    .collect();
    drop(engine);
    let req = WhatIfRequest {
        patch: patch(),
        query: Some("pottery class".into()),
        ..Default::default()
    };
    let simulate = |cfg: &Config| {
        let (engine, counting) = open_counting(cfg);
        let before = counting.texts();
        let report = engine.what_if(&req).unwrap();
        assert_eq!(report.golden.queries.len(), 3);
        (engine, counting.texts() - before)
    };
    // A new process embeds only the search's query: the golden queries' vectors were saved
    // with them.
    let (engine, embedded) = simulate(&cfg);
    assert_eq!(embedded, 1, "only the search's query is embedded");
    drop(engine);

    // Vectors another model made are not used: the simulation embeds those queries (and
    // saves nothing: it writes nothing), and the next golden run saves this model's.
    let mut store = somna_engine::store::Store::open(&cfg.db_path).unwrap();
    store
        .transaction(|tx| {
            tx.set_golden_vector(
                golden[1],
                "another-model",
                "What did  say of her violin vibrato teacher?",
                &[0.5; 384],
            )
        })
        .unwrap();
    drop(store);
    let (engine, embedded) = simulate(&cfg);
    assert_eq!(
        embedded, 2,
        "the search's query and the query saved by another model"
    );
    drop(engine);
    let (engine, embedded) = simulate(&cfg);
    assert_eq!(embedded, 2, "a simulation saves no vector");
    let run = engine.golden_run("manual", None, &Job::default()).unwrap();
    assert_eq!(run.outcomes.len(), 3);
    drop(engine);
    let (engine, embedded) = simulate(&cfg);
    assert_eq!(embedded, 1, "the golden run saved the missing vector");
    drop(engine);
    // The saved vector is the one this model gives the text the search embeds: the
    // question without the name of the speaker it is about.
    let hash = somna_engine::embed::HashEmbedder::new(384);
    let model = somna_engine::embed::Embedder::model_id(&hash).to_string();
    let saved = somna_engine::store::Store::open(&cfg.db_path)
        .unwrap()
        .read()
        .golden_vectors(&model)
        .unwrap();
    let texts: Vec<&str> = saved.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "pottery kiln bowl",
            "What did  say of her violin vibrato teacher?",
            "lighthouse trip photos"
        ]
    );
    for (text, v) in &saved {
        assert_eq!(
            *v,
            somna_engine::embed::Embedder::embed_one(&hash, text).unwrap()
        );
    }
    // A vector saved of another text (as a store saved them before the search left the
    // names out: of the query as written) is not used, and the next run saves the right one.
    let mut store = somna_engine::store::Store::open(&cfg.db_path).unwrap();
    let written = "What did Ann say of her violin vibrato teacher?";
    let old = somna_engine::embed::Embedder::embed_one(&hash, written).unwrap();
    store
        .transaction(|tx| tx.set_golden_vector(golden[1], &model, written, &old))
        .unwrap();
    drop(store);
    let (engine, embedded) = simulate(&cfg);
    assert_eq!(
        embedded, 2,
        "the search's query and the query saved of another text"
    );
    engine.golden_run("manual", None, &Job::default()).unwrap();
    drop(engine);
    let (engine, embedded) = simulate(&cfg);
    assert_eq!(
        embedded, 1,
        "the golden run saved the vector of the embedded text"
    );
    drop(engine);
    drop(dir);
}
