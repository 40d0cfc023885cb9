//! `somna bench --only whatif`: the what-if simulator on a large store. A store of
//! `--whatif-memories` memories (nine episodes of every ten, each tenth a summary that holds
//! the nine; occurred over the last two years; one in five a short "Thanks!"-like reply) is
//! built once in `--cache-dir`, with `--whatif-golden` golden queries (each expecting the
//! top three hits of its search). Then the simulation of one change of every kind of knob
//! (decay model and half-life, lifecycle and forgetting thresholds, fusion weights), with a
//! search, is timed end to end: the snapshot, both lifecycle predictions, both rankings of
//! every golden query and of the search, each query embedded by all-MiniLM-L6-v2.
//!
//! The stored vectors come from the hashing embedder (embedding 100K texts with the real
//! model takes most of an hour on this machine); what the simulator costs does not depend on
//! what the vectors mean, and the queries are embedded by the real model as in the app.

use crate::bench_cmd::median;
use serde::Serialize;
use somna_engine::embed::{BertEmbedder, Embedder, HashEmbedder, ModelDir};
use somna_engine::memory::{Details, Kind, LinkKind, Memory, Source, State, W5H1};
use somna_engine::retrieve::Weights;
use somna_engine::store::Link;
use somna_engine::store::{now_ms, Store};
use somna_engine::whatif::{WhatIfRequest, WhatIfTimings};
use somna_engine::{bench, Config, DecayModel, Job, SearchQuery, SettingsPatch, Somna};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// What the what-if benchmark measured.
#[derive(Debug, Serialize)]
pub struct WhatIfBench {
    pub memories: usize,
    pub golden_queries: usize,
    /// Simulations after the first (each query already embedded).
    pub runs: usize,
    /// The process's first simulation (the search's query embedded, the golden queries'
    /// vectors read from the store) and its stages (ms).
    pub first_ms: f64,
    pub first: WhatIfTimings,
    /// Medians of the `runs` simulations after the first (ms).
    pub total_ms: f64,
    pub snapshot_ms: f64,
    pub lifecycle_ms: f64,
    pub embed_ms: f64,
    pub golden_ms: f64,
    pub search_ms: f64,
    /// What the simulation found (the last run).
    pub next_cycle_before: usize,
    pub next_cycle_after: usize,
    pub transitions_before: usize,
    pub transitions_after: usize,
    pub differing: usize,
    pub mean_recall_before: f64,
    pub mean_recall_after: f64,
}

const DAY: i64 = 86_400_000;

/// Builds (or reuses) the store and measures.
pub fn run(
    cache: &Path,
    model_dir: &Path,
    memories: usize,
    golden: usize,
    runs: usize,
    seed: u64,
) -> anyhow::Result<WhatIfBench> {
    let path = cache.join(format!("whatif-{memories}-{seed}.db"));
    let embedder: Arc<dyn Embedder> =
        Arc::new(BertEmbedder::load(&ModelDir(model_dir.to_path_buf()))?);
    if !path.exists() {
        eprintln!("whatif: building a store of {memories} memories");
        build(&path, embedder.model_id(), memories, seed, &Job::default())?;
    }
    let config = Config::new(&path, model_dir);
    let mut engine = Somna::open_with(&config, embedder.clone(), &Job::default())?;
    let have = engine.golden_list()?.len();
    if have < golden {
        for q in &bench::synthetic_queries(golden, seed + 7)[have..] {
            let mut sq = SearchQuery::new(q);
            sq.k = 10;
            let hits = engine.search_readonly(&sq)?.hits;
            let expected: Vec<i64> = hits.iter().take(3).map(|h| h.memory.id).collect();
            if !expected.is_empty() {
                engine.golden_add(q, &expected, 10, &Default::default())?;
            }
        }
    }
    if have < golden {
        // Opened again, so the first simulation is a process's first, as the app's first is
        // (the engine keeps the vectors of texts its searches embedded lately; the golden
        // queries' vectors are read from the store, where `golden_add` saved them).
        drop(engine);
        engine = Somna::open_with(&config, embedder, &Job::default())?;
    }
    let golden_queries = engine.golden_list()?.len();
    let req = WhatIfRequest {
        patch: SettingsPatch {
            decay: Some(DecayModel::PowerLaw),
            half_life_days: Some(14.0),
            archive_after_days: Some(60.0),
            forget_importance: Some(0.5),
            forget_max_words: Some(6),
            weights: Some(Weights {
                semantic: 0.55,
                lexical: 0.2,
                ..Weights::default()
            }),
            ..Default::default()
        },
        query: Some("who fixed the deploy script last week".into()),
        ..Default::default()
    };
    // The first run reads the golden queries' saved vectors and embeds the search's query;
    // the others find it embedded, as when a person moves one setting after another.
    let t = Instant::now();
    let first = engine.what_if(&req)?;
    let first_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut reports = Vec::new();
    let mut totals = Vec::new();
    for _ in 1..runs.max(2) {
        let t = Instant::now();
        let r = engine.what_if(&req)?;
        totals.push(t.elapsed().as_secs_f64() * 1000.0);
        reports.push(r);
    }
    let med = |f: &dyn Fn(&somna_engine::whatif::WhatIfReport) -> f64| {
        let mut v: Vec<f64> = reports.iter().map(f).collect();
        median(&mut v)
    };
    let last = reports.last().expect("at least one run");
    let l = &last.lifecycle;
    Ok(WhatIfBench {
        memories: l.simulated,
        golden_queries,
        runs: reports.len(),
        first_ms,
        first: first.timings,
        total_ms: median(&mut totals),
        snapshot_ms: med(&|r| r.timings.snapshot_ms),
        lifecycle_ms: med(&|r| r.timings.lifecycle_ms),
        embed_ms: med(&|r| r.timings.embed_ms),
        golden_ms: med(&|r| r.timings.golden_ms),
        search_ms: med(&|r| r.timings.search_ms),
        next_cycle_before: l.next_cycle_before,
        next_cycle_after: l.next_cycle_after,
        transitions_before: l.transitions_before,
        transitions_after: l.transitions_after,
        differing: l.differing,
        mean_recall_before: last.golden.mean_recall_before,
        mean_recall_after: last.golden.mean_recall_after,
    })
}

/// Nine episodes (one in five a short reply) and one summary holding them, per ten
/// memories, occurred over the last two years, in 1,000 conversations, in the empty store
/// at `path` (a SQLite file or a Postgres URL; on Postgres, pgvector's index is built once
/// at the end).
pub fn build(
    path: &Path,
    model_id: &str,
    memories: usize,
    seed: u64,
    job: &Job,
) -> anyhow::Result<()> {
    let sentences = bench::synthetic_sentences(memories, seed);
    let hash = HashEmbedder::new(384);
    let now = now_ms();
    let mut store = Store::open(path)?;
    store.set_meta("embedding_model", model_id)?;
    let deferred = store.transaction(|tx| tx.defer_vector_index())?;
    for (chunk_no, chunk) in sentences.chunks(10_000).enumerate() {
        job.cancel.check()?;
        job.report("store", (chunk_no * 10_000) as u64, memories as u64);
        let vectors = hash.embed(&chunk.iter().map(String::as_str).collect::<Vec<_>>())?;
        let mut memories = Vec::with_capacity(chunk.len());
        let mut links = Vec::new();
        let mut episodes = Vec::new();
        for (j, text) in chunk.iter().enumerate() {
            let i = chunk_no * 10_000 + j;
            let id = i as i64 + 1;
            let at = now - (i as i64 * 7919 % (730 * DAY / 60_000)) * 60_000;
            let summary = i % 10 == 9;
            let short = !summary && i % 5 == 0;
            let text = if short {
                "Thanks, see you then!"
            } else {
                text.as_str()
            };
            if summary {
                links.extend(episodes.drain(..).map(|e| Link {
                    src: id,
                    dst: e,
                    kind: LinkKind::DerivedFrom,
                    score: 1.0,
                    created_at: at,
                }));
            } else {
                episodes.push(id);
            }
            memories.push(Memory {
                id,
                kind: if summary {
                    Kind::Summary
                } else {
                    Kind::Episode
                },
                text: text.to_string(),
                w5h1: W5H1 {
                    who: Some(text.split(' ').next().unwrap_or("Ann").to_string()),
                    ..Default::default()
                },
                conversation: Some(format!("conv-{}", i / 100)),
                session: Some(format!("s-{}", i / 10)),
                occurred_at: Some(at),
                created_at: at,
                updated_at: at,
                importance: 0.1 + (i * 37 % 80) as f64 / 100.0,
                novelty: 0.5,
                access_count: 0,
                last_accessed: None,
                state: State::Active,
                tags: Vec::new(),
                source: Source::UserInput,
                l_score: 1.0,
                metadata: serde_json::json!({}),
                details: Details::None,
                deleted_at: None,
                tokens: Some(text.split_whitespace().count() as i64 + 2),
                pinned: false,
                valid_from: None,
                valid_to: None,
                superseded_by: None,
            });
        }
        store.transaction(|tx| {
            for (rows, vectors) in memories.chunks(500).zip(vectors.chunks(500)) {
                let batch: Vec<_> = rows
                    .iter()
                    .zip(vectors)
                    .map(|(m, v)| (m, Some(v.as_slice())))
                    .collect();
                tx.restore_memories(&batch)?;
            }
            tx.upsert_links(&links)
        })?;
    }
    if deferred {
        job.report("index", 0, 1);
        store.transaction(|tx| tx.restore_vector_index())?;
    }
    store.refresh_statistics()?;
    Ok(())
}

pub fn print(b: &WhatIfBench) {
    out!(
        "\nwhat-if ({} memories simulated, {} golden queries and one search ranked both ways)",
        b.memories,
        b.golden_queries,
    );
    let f = &b.first;
    out!(
        "  first run of the process: {:.0} ms: snapshot {:.0}, lifecycle {:.0}, embedding {:.0} (beside both), golden queries and search {:.0} (of it the search {:.0})",
        b.first_ms,
        f.snapshot_ms,
        f.lifecycle_ms,
        f.embed_ms,
        f.golden_ms,
        f.search_ms
    );
    out!(
        "  runs after it (median of {}): {:.0} ms: snapshot {:.0}, lifecycle {:.0}, embedding {:.0}, golden queries and search {:.0} (of it the search {:.0})",
        b.runs,
        b.total_ms,
        b.snapshot_ms,
        b.lifecycle_ms,
        b.embed_ms,
        b.golden_ms,
        b.search_ms
    );
    out!(
        "  next cycle {} → {} state changes; {} → {} transitions within 180 days, {} moved; golden mean R@10 {:.3} → {:.3}",
        b.next_cycle_before,
        b.next_cycle_after,
        b.transitions_before,
        b.transitions_after,
        b.differing,
        b.mean_recall_before,
        b.mean_recall_after
    );
}
