//! The Postgres + pgvector backend in `somna bench` (`--postgres <server URL>`): the stores
//! it measures live in schemas of their own (`somna_bench_*`) of that database, side by side
//! with the SQLite stores of the same run; and the `concurrent` section: writers and
//! searchers, each with an engine (a connection) of its own, on one store for a while,
//! then every acknowledged write looked for.

use anyhow::Context;
use serde::Serialize;
use somna_engine::embed::BertEmbedder;
use somna_engine::{AddOptions, Config, Job, Message, SearchQuery, Somna};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A Postgres server (a database with pgvector) the bench may make schemas in.
pub struct Server {
    url: String,
}

impl Server {
    pub fn new(url: &str) -> Self {
        Self {
            url: url.to_string(),
        }
    }

    /// The store in schema `schema` of the database, made empty first when `fresh`.
    pub fn store(&self, schema: &str, fresh: bool) -> anyhow::Result<PathBuf> {
        let url = somna_engine::store::schema_store_url(&self.url, schema, fresh)
            .context("making a schema on the --postgres server")?;
        Ok(PathBuf::from(url))
    }
}

/// The same store, memory for memory, in `to` (emptied first) as in `from`.
pub fn copy_store(from: &Somna, to: &Somna, job: &Job) -> anyhow::Result<()> {
    to.import_export(&from.export()?, job)?;
    Ok(())
}

#[derive(Serialize)]
pub struct ConcurrentResult {
    pub backend: String,
    pub seconds: f64,
    pub writers: usize,
    pub searchers: usize,
    /// Adds the engine acknowledged (returned the new memory's id).
    pub acknowledged: usize,
    /// Acknowledged memories found in the store afterwards, read by a new engine.
    pub stored: usize,
    /// Memories in the store beyond the acknowledged ones (a write done twice).
    pub extra: usize,
    pub write_errors: usize,
    pub writes_per_sec: f64,
    pub searches: usize,
    pub search_errors: usize,
    pub search_p50_ms: f64,
    pub search_p99_ms: f64,
    /// The first error of each kind, if any.
    pub first_errors: Vec<String>,
}

/// `writers` threads add one message at a time and `searchers` threads search, for
/// `seconds`, each on an engine of its own over the store at `db`; then a fresh engine
/// counts what is stored.
pub fn concurrent(
    backend: &str,
    db: &Path,
    model_dir: &Path,
    embedder: Arc<BertEmbedder>,
    (writers, searchers): (usize, usize),
    seconds: f64,
    seed: u64,
) -> anyhow::Result<ConcurrentResult> {
    let cfg = Config::new(db, model_dir);
    let open = || Somna::open_with(&cfg, embedder.clone(), &Job::default());
    // Engines are opened before the clock starts.
    let engines: Vec<Somna> = (0..writers + searchers)
        .map(|_| open())
        .collect::<Result<_, _>>()?;
    let sentences = somna_engine::bench::synthetic_sentences(2000, seed + 7);
    let queries = somna_engine::bench::synthetic_queries(200, seed + 8);
    let stop = AtomicBool::new(false);
    let acknowledged = Mutex::new(Vec::<i64>::new());
    let latencies = Mutex::new(Vec::<f64>::new());
    let errors = Mutex::new((0usize, 0usize, Vec::<String>::new()));
    let no_facts = AddOptions {
        extract_facts: false,
        ..Default::default()
    };
    let started = Instant::now();
    std::thread::scope(|s| {
        for (i, engine) in engines.iter().enumerate() {
            let writer = i < writers;
            let (stop, acknowledged, latencies, errors) =
                (&stop, &acknowledged, &latencies, &errors);
            let (sentences, queries, no_facts) = (&sentences, &queries, &no_facts);
            s.spawn(move || {
                let mut n = i;
                while !stop.load(Ordering::Relaxed) {
                    n += writers + searchers;
                    let outcome = if writer {
                        let text = &sentences[n % sentences.len()];
                        let message = Message {
                            role: "user".into(),
                            speaker: Some(format!("writer{i}")),
                            text: format!("{text} ({n})"),
                            session: None,
                            occurred_at: None,
                            external_id: None,
                            metadata: serde_json::json!({}),
                        };
                        engine
                            .add(&format!("load-{i}"), &[message], no_facts)
                            .map(|r| lock(acknowledged).extend(r.episodes))
                    } else {
                        let t = Instant::now();
                        engine
                            .search_readonly(&SearchQuery::new(&queries[n % queries.len()]))
                            .map(|_| lock(latencies).push(t.elapsed().as_secs_f64() * 1e3))
                    };
                    if let Err(e) = outcome {
                        let mut errs = lock(errors);
                        if writer {
                            errs.0 += 1;
                        } else {
                            errs.1 += 1;
                        }
                        if errs.2.len() < 4 {
                            errs.2.push(e.to_string());
                        }
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = started.elapsed().as_secs_f64();
    drop(engines);
    let acknowledged = acknowledged.into_inner().unwrap_or_else(|p| p.into_inner());
    let check = open()?;
    let stored = acknowledged
        .iter()
        .filter(|&&id| check.get(id).is_ok())
        .count();
    let total = check.stats()?.memories as usize;
    let mut lat = latencies.into_inner().unwrap_or_else(|p| p.into_inner());
    let (write_errors, search_errors, first_errors) =
        errors.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(ConcurrentResult {
        backend: backend.into(),
        seconds: elapsed,
        writers,
        searchers,
        acknowledged: acknowledged.len(),
        stored,
        extra: total.saturating_sub(acknowledged.len()),
        write_errors,
        writes_per_sec: acknowledged.len() as f64 / elapsed,
        searches: lat.len(),
        search_errors,
        search_p50_ms: somna_engine::bench::percentile(&mut lat.clone(), 0.5),
        search_p99_ms: somna_engine::bench::percentile(&mut lat, 0.99),
        first_errors,
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn print(rows: &[ConcurrentResult]) {
    if rows.is_empty() {
        return;
    }
    out!(
        "\nconcurrent writers and searchers     s  writers  searchers  acknowledged  stored  extra  write err  writes/s  searches  search err  p50 ms  p99 ms"
    );
    for r in rows {
        out!(
            "  {:<32} {:>4.0} {:>8} {:>10} {:>13} {:>7} {:>6} {:>10} {:>9.1} {:>9} {:>11} {:>7.1} {:>7.1}",
            r.backend,
            r.seconds,
            r.writers,
            r.searchers,
            r.acknowledged,
            r.stored,
            r.extra,
            r.write_errors,
            r.writes_per_sec,
            r.searches,
            r.search_errors,
            r.search_p50_ms,
            r.search_p99_ms
        );
        for e in &r.first_errors {
            out!("    error: {e}");
        }
    }
}
