//! `somna bench`: embedding throughput, ingest throughput, search latency at store sizes,
//! and ANN recall/latency against exact search — each with its Python peer measured in the
//! same run when `--peer-python` is given.

use crate::output::{print_json, Bar};
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use somna_engine::bench::{self, AnnResult, EmbedResult};
use somna_engine::embed::{BertEmbedder, Embedder, EncoderKind, ModelDir};
use somna_engine::index::{index_dir, IndexParams};
use somna_engine::ingest::ConversationBatch;
use somna_engine::{AddOptions, Config, Job, Message, Route, SearchQuery, Somna};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct BenchArgs {
    /// Sections to run: embed, ingest, import (end to end, by stage), search, lexical (the
    /// lexical stage alone, in memory and by FTS5), ann, sleep, asof (time travel), whatif (the
    /// what-if simulator), concurrent (writers and searchers at once); and pca, tsne, umap,
    /// kmeans, stability, liquid (see bench_cluster.rs).
    #[arg(long, value_delimiter = ',', default_value = "embed,ingest,search,ann")]
    only: Vec<String>,
    /// Sentences for the embedding benchmark.
    #[arg(long, default_value_t = 1000)]
    embed_sentences: usize,
    /// Messages for the ingest benchmark.
    #[arg(long, default_value_t = 1000)]
    ingest_messages: usize,
    /// Turns of the import benchmark (into a fresh store).
    #[arg(long, default_value_t = 5000)]
    import_turns: usize,
    /// Store sizes (turns) at which the import benchmark times 1,000 more turns.
    #[arg(long, value_delimiter = ',')]
    import_at: Vec<usize>,
    /// Imports of 1,000 turns timed at each `--import-at` size, one after another (the
    /// median is reported).
    #[arg(long, default_value_t = 3)]
    import_rounds: usize,
    /// Turns per conversation of the import benchmark's synthetic store (a large value puts
    /// the whole store in one conversation, as an agent writing to one would).
    #[arg(long, default_value_t = 500)]
    import_conversation_turns: usize,
    /// Store sizes (memories) for search latency.
    #[arg(long, value_delimiter = ',', default_value = "10000")]
    search_sizes: Vec<usize>,
    /// Store sizes (memories, text only) for the lexical stage alone (at least 20,000).
    #[arg(long, value_delimiter = ',', default_value = "100000")]
    lexical_sizes: Vec<usize>,
    /// Queries per search measurement.
    #[arg(long, default_value_t = 200)]
    queries: usize,
    /// Result counts (k) for search latency; each is measured on every route, and once
    /// more recorded (access counts and co-access pairs written, as the app and servers do)
    /// on a copy of the store.
    #[arg(long, value_delimiter = ',', default_value = "10")]
    search_k: Vec<usize>,
    /// Vector counts for the ANN benchmark.
    #[arg(long, value_delimiter = ',', default_value = "100000")]
    ann_sizes: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_value = "32,64,128,256")]
    efs: Vec<usize>,
    #[arg(long, default_value_t = 1000)]
    ann_queries: usize,
    /// HNSW M (neighbours per node).
    #[arg(long, default_value_t = IndexParams::default().m)]
    m: usize,
    #[arg(long, default_value_t = IndexParams::default().ef_construction)]
    ef_construction: usize,
    /// Keep generated stores here and reuse them (the 100K store takes minutes to embed).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// A Python with sentence-transformers and hnswlib: runs the peers in the same run.
    #[arg(long)]
    peer_python: Option<PathBuf>,
    /// A full sentence-transformers model directory for the embedding peer.
    #[arg(long)]
    peer_model_dir: Option<PathBuf>,
    /// Where the peer scripts are.
    #[arg(long, default_value = "scripts")]
    scripts: PathBuf,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Episodes for the sleep-cycle benchmark.
    #[arg(long, default_value_t = 5000)]
    sleep_episodes: usize,
    /// A LoCoMo file whose turns (repeated) make the sleep store; default: synthetic.
    #[arg(long)]
    sleep_data: Option<PathBuf>,
    /// Memories and history rows of the time-travel benchmark's store.
    #[arg(long, default_value_t = 100_000)]
    asof_memories: usize,
    #[arg(long, default_value_t = 1_000_000)]
    asof_history: usize,
    /// Runs per time-travel measurement (the median is reported).
    #[arg(long, default_value_t = 3)]
    asof_runs: usize,
    /// Memories and golden queries of the what-if benchmark's store.
    #[arg(long, default_value_t = 100_000)]
    whatif_memories: usize,
    #[arg(long, default_value_t = 50)]
    whatif_golden: usize,
    /// Simulations timed: the first (every query embedded) and the median of the others.
    #[arg(long, default_value_t = 4)]
    whatif_runs: usize,
    /// A Postgres server URL (a database with pgvector): ingest, search and concurrent run
    /// on Postgres stores there too (schemas `somna_bench_*`), beside SQLite's in the same
    /// run. The search store is a copy of the SQLite one.
    #[arg(long)]
    postgres: Option<String>,
    /// Search on Postgres alone at these store sizes (with `--postgres`): the store is
    /// built straight into the server (schema `somna_bench_scale_<size>_<seed>`, kept for
    /// the next run) as the what-if benchmark builds its own (vectors from the hashing
    /// embedder), pgvector's index built once at the end. SQLite is left out: its graph
    /// takes hours to build at a million memories.
    #[arg(long, value_delimiter = ',')]
    postgres_scale: Vec<usize>,
    /// Writers and searchers of the concurrent section, and how long it runs.
    #[arg(long, default_value_t = 8)]
    concurrent_writers: usize,
    #[arg(long, default_value_t = 8)]
    concurrent_searchers: usize,
    #[arg(long, default_value_t = 60.0)]
    concurrent_seconds: f64,
    #[command(flatten)]
    cluster: crate::bench_cluster::ClusterBenchArgs,
}

#[derive(Serialize, Default)]
struct Report {
    machine: String,
    /// Somna's encoder, candle-transformers' BertModel, and the sentence-transformers peer.
    embed: Option<(EmbedResult, EmbedResult, Option<serde_json::Value>)>,
    ingest: Vec<IngestResult>,
    import: Option<crate::bench_import::ImportBench>,
    search: Vec<SearchResult>,
    lexical: Vec<crate::bench_lexical::LexicalResult>,
    concurrent: Vec<crate::bench_postgres::ConcurrentResult>,
    ann: Vec<(AnnResult, Option<serde_json::Value>)>,
    sleep: Option<crate::sleep_cmd::SleepBench>,
    asof: Option<crate::bench_asof::AsOfBench>,
    whatif: Option<crate::bench_whatif::WhatIfBench>,
    cluster: Option<crate::bench_cluster::ClusterReport>,
}

#[derive(Serialize)]
struct IngestResult {
    backend: String,
    messages: usize,
    seconds: f64,
    messages_per_sec: f64,
}

#[derive(Serialize)]
struct SearchResult {
    backend: String,
    memories: u64,
    k: usize,
    route: String,
    /// Whether each search also wrote its access bookkeeping (`Somna::search`).
    recorded: bool,
    queries: usize,
    p50_ms: f64,
    p99_ms: f64,
    /// Excluding the query embedding.
    p50_ms_no_embed: f64,
    p99_ms_no_embed: f64,
    /// p50 and p99 of each phase the engine times (embed, vector, lexical, score, pack).
    phases: Vec<PhaseLatency>,
}

#[derive(Serialize)]
struct PhaseLatency {
    phase: &'static str,
    p50_ms: f64,
    p99_ms: f64,
}

fn machine() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{} cores, load average {} ({} build)",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    )
}

/// What every step of a benchmark run shares.
struct Env<'a> {
    args: &'a BenchArgs,
    model_dir: &'a Path,
    /// Removed at the end of the run.
    tmp: &'a Path,
    /// Stores kept between runs (`--cache-dir`, else `tmp`).
    cache: &'a Path,
    /// Loaded when a step needs the model.
    embedder: Option<Arc<BertEmbedder>>,
    /// `--postgres`: the server the Postgres rows are measured on.
    postgres: Option<&'a crate::bench_postgres::Server>,
    json: bool,
}

impl Env<'_> {
    fn embedder(&self) -> Arc<BertEmbedder> {
        self.embedder.clone().expect("loaded")
    }
}

/// Runs the benchmarks `--only` names, each as a step, and prints the report.
/// The peer scripts `somna bench` may run, all in `--scripts`.
const PEER_SCRIPTS: [&str; 4] = [
    "peer_embed_bench.py",
    "peer_hnsw_bench.py",
    "peer_cluster_bench.py",
    "peer_umap_bench.py",
];

/// With `--peer-python`, refuses at once when the peer scripts are not where `--scripts`
/// says (its default, `scripts`, is relative to the directory the bench runs in), rather
/// than after Somna's half of a section that can take many minutes.
fn check_peer_scripts(args: &BenchArgs) -> anyhow::Result<()> {
    if args.peer_python.is_none() {
        return Ok(());
    }
    let missing: Vec<&str> = PEER_SCRIPTS
        .into_iter()
        .filter(|s| !args.scripts.join(s).is_file())
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "--peer-python is given but the peer scripts ({}) are not in {}: run the bench from \
             the repository's root or give --scripts <the repository's scripts/>",
            missing.join(", "),
            args.scripts.display()
        );
    }
    Ok(())
}

pub fn run(args: BenchArgs, model_dir: &Path, json: bool) -> anyhow::Result<()> {
    let mut report = Report {
        machine: machine(),
        ..Default::default()
    };
    let tmp = tempfile::tempdir()?;
    let cache = args
        .cache_dir
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&cache)?;
    let has = |s: &str| args.only.iter().any(|o| o == s);
    check_peer_scripts(&args)?;
    eprintln!("machine: {}", report.machine);
    let needs_model = has("embed")
        || has("ingest")
        || has("import")
        || has("search")
        || has("sleep")
        || has("concurrent");
    let postgres = args
        .postgres
        .as_deref()
        .map(crate::bench_postgres::Server::new);
    let env = Env {
        args: &args,
        model_dir,
        tmp: tmp.path(),
        cache: &cache,
        postgres: postgres.as_ref(),
        embedder: if needs_model {
            Some(Arc::new(BertEmbedder::load(&ModelDir(
                model_dir.to_path_buf(),
            ))?))
        } else {
            None
        },
        json,
    };
    if has("embed") {
        report.embed = Some(embed_step(&env)?);
    }
    if has("ingest") {
        report
            .ingest
            .push(ingest_step(&env, &tmp.path().join("ingest.db"), "sqlite")?);
        if let Some(pg) = &postgres {
            let db = pg.store(&format!("somna_bench_ingest_{}", args.seed), true)?;
            report.ingest.push(ingest_step(&env, &db, "postgres")?);
        }
    }
    if has("import") {
        report.import = Some(crate::bench_import::run(
            tmp.path(),
            model_dir,
            env.embedder(),
            &crate::bench_import::ImportParams {
                turns: args.import_turns,
                at: args.import_at.clone(),
                rounds: args.import_rounds,
                per_conversation: args.import_conversation_turns,
                seed: args.seed,
            },
        )?);
    }
    if has("search") {
        for &size in &args.search_sizes {
            report.search.extend(search_step(&env, size)?);
        }
        for &size in &args.postgres_scale {
            report.search.extend(postgres_scale_step(&env, size)?);
        }
    }
    if has("sleep") {
        let b = crate::sleep_cmd::bench_sleep(
            env.embedder(),
            model_dir,
            &cache,
            tmp.path(),
            args.sleep_episodes,
            args.sleep_data.as_deref(),
            |n| conversations(&bench::synthetic_sentences(n, args.seed + 5), 500),
        )?;
        eprintln!("sleep: {:.1} s over {} episodes", b.seconds, b.episodes);
        report.sleep = Some(b);
    }
    if has("lexical") {
        report.lexical =
            crate::bench_lexical::run(&cache, &args.lexical_sizes, args.queries, args.seed)?;
    }
    if has("asof") {
        report.asof = Some(crate::bench_asof::run(
            &cache,
            args.asof_memories,
            args.asof_history,
            args.asof_runs,
        )?);
    }
    if has("whatif") {
        let b = crate::bench_whatif::run(
            &cache,
            model_dir,
            args.whatif_memories,
            args.whatif_golden,
            args.whatif_runs.max(1),
            args.seed,
        )?;
        eprintln!("whatif: {:.0} ms over {} memories", b.total_ms, b.memories);
        report.whatif = Some(b);
    }
    if has("concurrent") {
        let sqlite = tmp.path().join("concurrent.db");
        let mut stores = vec![("sqlite", sqlite)];
        if let Some(pg) = &postgres {
            let schema = format!("somna_bench_concurrent_{}", args.seed);
            stores.push(("postgres", pg.store(&schema, true)?));
        }
        for (backend, db) in stores {
            eprintln!(
                "concurrent on {backend}: {} writers + {} searchers for {} s",
                args.concurrent_writers, args.concurrent_searchers, args.concurrent_seconds
            );
            let r = crate::bench_postgres::concurrent(
                backend,
                &db,
                model_dir,
                env.embedder(),
                (args.concurrent_writers, args.concurrent_searchers),
                args.concurrent_seconds,
                args.seed,
            )?;
            eprintln!(
                "  {} acknowledged, {} stored, {} errors",
                r.acknowledged, r.stored, r.write_errors
            );
            report.concurrent.push(r);
        }
    }
    if has("ann") {
        for &n in &args.ann_sizes {
            report.ann.push(ann_step(&env, n)?);
        }
    }
    report.cluster = crate::bench_cluster::run(
        &args.cluster,
        &has,
        crate::bench_cluster::Env {
            peer_python: args.peer_python.as_deref(),
            scripts: &args.scripts,
            seed: args.seed,
            model_dir,
            tmp: tmp.path(),
            json,
        },
    )?;
    if json {
        print_json(&report)?;
    } else {
        print_report(&report);
        if let Some(c) = &report.cluster {
            crate::bench_cluster::print(c);
        }
    }
    Ok(())
}

type EmbedResults = (EmbedResult, EmbedResult, Option<serde_json::Value>);

/// Embedding throughput: ours, candle-transformers' BERT and the Python peer.
fn embed_step(env: &Env<'_>) -> anyhow::Result<EmbedResults> {
    let args = env.args;
    let sentences = bench::synthetic_sentences(args.embed_sentences, args.seed);
    let ours = bench::bench_embed(&*env.embedder(), &sentences)?;
    eprintln!(
        "embed: {:.1} sentences/s, single query p50 {:.1} ms",
        ours.sentences_per_sec, ours.single_query_ms_p50
    );
    let candle_bert = BertEmbedder::load_with(
        &ModelDir(env.model_dir.to_path_buf()),
        EncoderKind::CandleTransformers,
    )?;
    let reference = bench::bench_embed(&candle_bert, &sentences)?;
    drop(candle_bert);
    let peer = match (&args.peer_python, &args.peer_model_dir) {
        (Some(py), Some(md)) => {
            let input = env.tmp.join("sentences.json");
            std::fs::write(&input, serde_json::to_vec(&sentences)?)?;
            Some(run_peer(
                py,
                &args.scripts.join("peer_embed_bench.py"),
                &[
                    "--model-dir".as_ref(),
                    md.as_os_str(),
                    "--input".as_ref(),
                    input.as_os_str(),
                    // The same cores as Somna's batch: torch splits each product over them.
                    "--threads".as_ref(),
                    ours.threads.to_string().as_ref(),
                ],
            )?)
        }
        _ => None,
    };
    Ok((ours, reference, peer))
}

/// Import throughput into a fresh store.
fn ingest_step(env: &Env<'_>, db: &Path, backend: &str) -> anyhow::Result<IngestResult> {
    let args = env.args;
    let engine = Somna::open_with(
        &Config::new(db, env.model_dir),
        env.embedder(),
        &Job::default(),
    )?;
    let batches = conversations(
        &bench::synthetic_sentences(args.ingest_messages, args.seed + 1),
        500,
    );
    let t = Instant::now();
    let r = engine.import(&batches, &AddOptions::default(), &Job::default())?;
    let seconds = t.elapsed().as_secs_f64();
    let result = IngestResult {
        backend: backend.into(),
        messages: r.messages_stored,
        seconds,
        messages_per_sec: r.messages_stored as f64 / seconds,
    };
    eprintln!(
        "ingest on {backend}: {:.1} messages/s",
        result.messages_per_sec
    );
    Ok(result)
}

/// Search latency on a Postgres store of `size` memories built in the server (see
/// `--postgres-scale`), for the direct route and the router's choice.
fn postgres_scale_step(env: &Env<'_>, size: usize) -> anyhow::Result<Vec<SearchResult>> {
    let pg = env
        .postgres
        .context("--postgres-scale measures a Postgres store: give --postgres too")?;
    let schema = format!("somna_bench_scale_{size}_{}", env.args.seed);
    let open = |url: &Path| {
        Somna::open_with(
            &Config::new(url, env.model_dir),
            env.embedder(),
            &Job::default(),
        )
    };
    let mut url = pg.store(&schema, false)?;
    let built = open(&url)?.stats()?.memories;
    if built != size as u64 {
        eprintln!(
            "building a {size}-memory store in Postgres schema {schema} (kept for the next run)"
        );
        url = pg.store(&schema, true)?;
        let bar = Arc::new(Bar::new("store", env.json));
        let job = Job {
            progress: bar.clone(),
            cancel: Default::default(),
        };
        let started = Instant::now();
        crate::bench_whatif::build(&url, env.embedder().model_id(), size, env.args.seed, &job)?;
        bar.finish();
        eprintln!("built in {:.1} s", started.elapsed().as_secs_f64());
    }
    let started = Instant::now();
    let engine = open(&url)?;
    eprintln!(
        "an engine opened the {size}-memory Postgres store in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let memories = engine.stats()?.memories;
    let queries = bench::synthetic_queries(env.args.queries, env.args.seed + 3);
    let mut out = Vec::new();
    for &k in &env.args.search_k {
        for route in [Some(Route::Direct), None] {
            let mut result = search_route(&engine, &queries, route, k, false, memories)?;
            result.backend = "postgres".into();
            report_search(&result);
            out.push(result);
        }
    }
    Ok(out)
}

/// Search latency on a store of `size` memories (built once and cached), for the direct
/// route and the router's choice.
fn search_step(env: &Env<'_>, size: usize) -> anyhow::Result<Vec<SearchResult>> {
    let args = env.args;
    let db = env.cache.join(format!("search-{size}-{}.db", args.seed));
    let engine = Somna::open_with(
        &Config::new(&db, env.model_dir),
        env.embedder(),
        &Job::default(),
    )?;
    let have = engine.stats()?.memories;
    if have < size as u64 {
        eprintln!("building a {size}-memory store at {} (embedding with the real model; reused next time)", db.display());
        let bar = Arc::new(Bar::new("store", env.json));
        let job = Job {
            progress: bar.clone(),
            cancel: Default::default(),
        };
        let batches = conversations(&bench::synthetic_sentences(size, args.seed + 2), 1000);
        engine.import(&batches, &AddOptions::default(), &job)?;
        bar.finish();
    }
    let memories = engine.stats()?.memories;
    let queries = bench::synthetic_queries(args.queries, args.seed + 3);
    let mut out = Vec::new();
    warm_search(&engine)?;
    for &k in &args.search_k {
        for route in [Some(Route::Direct), None] {
            let result = search_route(&engine, &queries, route, k, false, memories)?;
            report_search(&result);
            out.push(result);
        }
    }
    if let Some(pg) = env.postgres {
        // The same store on Postgres (copied once, kept in its schema for the next run).
        let schema = format!("somna_bench_search_{size}_{}", args.seed);
        let mut url = pg.store(&schema, false)?;
        let open = |url: &Path| {
            Somna::open_with(
                &Config::new(url, env.model_dir),
                env.embedder(),
                &Job::default(),
            )
        };
        let mut on_pg = open(&url)?;
        if on_pg.stats()?.memories != memories {
            eprintln!("copying the {size}-memory store into Postgres schema {schema}");
            drop(on_pg);
            url = pg.store(&schema, true)?;
            on_pg = open(&url)?;
            let bar = Arc::new(Bar::new("copy", env.json));
            let job = Job {
                progress: bar.clone(),
                cancel: Default::default(),
            };
            let started = Instant::now();
            crate::bench_postgres::copy_store(&engine, &on_pg, &job)?;
            bar.finish();
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "copied in {secs:.1} s ({:.0} memories/s, pgvector's index built once at the end)",
                memories as f64 / secs
            );
        }
        // What each new process pays to open the store: no graph of its own, the vectors
        // read for what needs them all.
        drop(on_pg);
        let started = Instant::now();
        let on_pg = open(&url)?;
        eprintln!(
            "an engine opened the {size}-memory Postgres store in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        for &k in &args.search_k {
            for route in [Some(Route::Direct), None] {
                let mut result = search_route(&on_pg, &queries, route, k, false, memories)?;
                result.backend = "postgres".into();
                report_search(&result);
                out.push(result);
            }
        }
    }
    drop(engine);
    // Recorded searches write to the store: they run on a copy, so the cached store stays
    // as it was built. The saved index is copied with it: without it, opening the copy
    // rebuilt the whole graph first.
    let copy = env.tmp.join(format!("search-{size}-recorded.db"));
    copy_store(&db, &copy)?;
    let engine = Somna::open_with(
        &Config::new(&copy, env.model_dir),
        env.embedder(),
        &Job::default(),
    )?;
    warm_search(&engine)?;
    for &k in &args.search_k {
        let result = search_route(&engine, &queries, None, k, true, memories)?;
        report_search(&result);
        out.push(result);
    }
    Ok(out)
}

/// Waits for what a long-running front end has ready before its searches (a large
/// store's full-text index read into memory: `Somna::warm_search`), saying how long it took.
fn warm_search(engine: &Somna) -> anyhow::Result<()> {
    let started = Instant::now();
    if engine.wait_search_warm(Duration::from_secs(1800))? {
        eprintln!(
            "lexical index read into memory in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// A copy of the store file `db` at `to`, with its saved vector index (without it, opening
/// the copy rebuilds the whole graph first). The store must be closed.
pub(crate) fn copy_store(db: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(db, to).with_context(|| format!("copying {}", db.display()))?;
    let (Some(from), Some(to)) = (index_dir(db), index_dir(to)) else {
        return Ok(());
    };
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", to.display()))?;
    // An index directory holds files only.
    for entry in std::fs::read_dir(&from).with_context(|| format!("reading {}", from.display()))? {
        let path = entry?.path();
        if path.is_file() {
            let name = path.file_name().unwrap_or_default();
            std::fs::copy(&path, to.join(name))
                .with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}

fn report_search(r: &SearchResult) {
    eprintln!(
        "search on {} {}{} k={} @ {}: p50 {:.2} ms, p99 {:.2} ms",
        r.backend,
        r.route,
        if r.recorded { ", recorded" } else { "" },
        r.k,
        r.memories,
        r.p50_ms,
        r.p99_ms
    );
}

/// Latency of `queries` on one route (the router's when `None`), in total and per phase.
fn search_route(
    engine: &Somna,
    queries: &[String],
    route: Option<Route>,
    k: usize,
    recorded: bool,
    memories: u64,
) -> anyhow::Result<SearchResult> {
    let mut total = Vec::new();
    let mut no_embed = Vec::new();
    let mut phases: [Vec<f64>; 5] = Default::default();
    for q in queries {
        // Every query is embedded, as a new one is (some of the synthetic queries repeat,
        // and the engine keeps the vectors of the texts its searches embedded lately).
        engine.forget_recent_vectors();
        let mut sq = SearchQuery::new(q);
        sq.route = route;
        sq.k = k;
        let t = Instant::now();
        let r = if recorded {
            engine.search(&sq)?
        } else {
            engine.search_readonly(&sq)?
        };
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        total.push(ms);
        no_embed.push(ms - r.timings.embed_ms);
        let t = &r.timings;
        for (v, x) in
            phases
                .iter_mut()
                .zip([t.embed_ms, t.vector_ms, t.lexical_ms, t.score_ms, t.pack_ms])
        {
            v.push(x);
        }
    }
    let phases = ["embed", "vector", "lexical", "score", "pack"]
        .into_iter()
        .zip(phases)
        .map(|(phase, mut v)| PhaseLatency {
            phase,
            p50_ms: bench::percentile(&mut v.clone(), 0.5),
            p99_ms: bench::percentile(&mut v, 0.99),
        })
        .collect();
    Ok(SearchResult {
        backend: "sqlite".into(),
        memories,
        k,
        recorded,
        route: route.map_or("auto (hybrid/pattern)".into(), |r| {
            format!("{r:?}").to_lowercase()
        }),
        queries: queries.len(),
        p50_ms: bench::percentile(&mut total.clone(), 0.5),
        p99_ms: bench::percentile(&mut total, 0.99),
        p50_ms_no_embed: bench::percentile(&mut no_embed.clone(), 0.5),
        p99_ms_no_embed: bench::percentile(&mut no_embed, 0.99),
        phases,
    })
}

type AnnResults = (AnnResult, Option<serde_json::Value>);

/// HNSW recall and latency on `n` clustered vectors, ours and hnswlib's (the peer).
fn ann_step(env: &Env<'_>, n: usize) -> anyhow::Result<AnnResults> {
    let args = env.args;
    let dim = 384;
    eprintln!(
        "ann: generating {n} clustered vectors and exact truth for {} queries",
        args.ann_queries
    );
    let data = bench::clustered_vectors(n, dim, (n / 100).max(10), 1.0, args.seed + 4);
    let queries = bench::clustered_vectors(
        args.ann_queries,
        dim,
        (n / 100).max(10),
        1.0,
        args.seed + 4 + 1_000_003,
    );
    let truth = bench::exact_top_k(&data, &queries, dim, 10);
    let params = IndexParams {
        m: args.m,
        ef_construction: args.ef_construction,
        ..IndexParams::default()
    };
    let bar = Arc::new(Bar::new("hnsw", env.json));
    let job = Job {
        progress: bar.clone(),
        cancel: Default::default(),
    };
    let ours = bench::bench_ann(&data, dim, &queries, &truth, params, &args.efs, &job)?;
    bar.finish();
    eprintln!(
        "ann {n}: build {:.1} s; {:?}",
        ours.build_seconds, ours.results
    );
    let peer = match &args.peer_python {
        Some(py) => Some(ann_peer(env, py, &data, &queries, &truth)?),
        None => None,
    };
    Ok((ours, peer))
}

/// The same ANN benchmark with hnswlib, through the peer script.
fn ann_peer(
    env: &Env<'_>,
    py: &Path,
    data: &[f32],
    queries: &[f32],
    truth: &[Vec<u32>],
) -> anyhow::Result<serde_json::Value> {
    let args = env.args;
    let (d, q, t) = (
        env.tmp.join("data.f32"),
        env.tmp.join("q.f32"),
        env.tmp.join("truth.u32"),
    );
    std::fs::write(&d, f32_bytes(data))?;
    std::fs::write(&q, f32_bytes(queries))?;
    std::fs::write(
        &t,
        truth
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    )?;
    let efs = args
        .efs
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let (m, efc) = (args.m.to_string(), args.ef_construction.to_string());
    run_peer(
        py,
        &args.scripts.join("peer_hnsw_bench.py"),
        &[
            "--data".as_ref(),
            d.as_os_str(),
            "--queries".as_ref(),
            q.as_os_str(),
            "--truth".as_ref(),
            t.as_os_str(),
            "--m".as_ref(),
            m.as_ref(),
            "--ef-construction".as_ref(),
            efc.as_ref(),
            "--ef".as_ref(),
            efs.as_ref(),
            "--threads".as_ref(),
            "2".as_ref(),
        ],
    )
}

fn conversations(sentences: &[String], per: usize) -> Vec<ConversationBatch> {
    conversations_from(sentences, per, 0)
}

/// Synthetic turns `first..first + sentences.len()` as conversations of `per` turns: turn
/// `t` is message `t % per` of conversation `bench-{t / per}`, a minute after turn `t - 1`.
/// The median of `v` (the upper of the middle two when their number is even); 0 for none.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Turns imported in several calls continue the same conversations.
pub(crate) fn conversations_from(
    sentences: &[String],
    per: usize,
    first: usize,
) -> Vec<ConversationBatch> {
    let mut out: Vec<(usize, Vec<Message>)> = Vec::new();
    for (t, s) in (first..).zip(sentences) {
        let (c, i) = (t / per, t % per);
        if out.last().is_none_or(|(last, _)| *last != c) {
            out.push((c, Vec::new()));
        }
        out.last_mut().expect("pushed").1.push(Message {
            role: "user".into(),
            speaker: Some(s.split_whitespace().next().unwrap_or("user").to_string()),
            text: s.clone(),
            session: Some(format!("session_{}", i / 50)),
            occurred_at: Some(1_700_000_000_000 + t as i64 * 60_000),
            external_id: Some(format!("m{i}")),
            metadata: serde_json::json!({}),
        });
    }
    out.into_iter()
        .map(|(c, messages)| ConversationBatch::turns(format!("bench-{c}"), messages))
        .collect()
}

pub(crate) fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn run_peer(
    python: &Path,
    script: &Path,
    args: &[&std::ffi::OsStr],
) -> anyhow::Result<serde_json::Value> {
    eprintln!("peer: {} {}", python.display(), script.display());
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "peer {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).with_context(|| format!("peer output {line:?}"))
}

fn print_report(r: &Report) {
    out!("machine: {}", r.machine);
    if let Some(b) = &r.sleep {
        crate::sleep_cmd::print_bench(b);
    }
    if let Some(b) = &r.whatif {
        crate::bench_whatif::print(b);
    }
    if let Some(b) = &r.asof {
        crate::bench_asof::print(b);
    }
    crate::bench_lexical::print(&r.lexical);
    if let Some((e, reference, peer)) = &r.embed {
        // Which products Somna's encoder ran (see README, "AMX tiles"): on AMX, a batch's
        // split into two bf16 each and a single query's in plain bf16; with AVX-512 BF16 and
        // no AMX, both in plain bf16.
        let (ours, query) = match (
            somna_engine::embed::products_on_amx(),
            somna_engine::embed::products_in_bf16(),
        ) {
            (true, _) => ("somna encoder (AMX)   ", ", in bf16"),
            (false, true) => ("somna encoder (bf16)  ", ", both in bf16 on AVX-512"),
            (false, false) => ("somna encoder (f32)   ", ""),
        };
        out!(
            "\nembedding (all-MiniLM-L6-v2, {} sentences; batches on {} thread(s) each side, single queries on one for Somna{query})",
            e.sentences,
            e.threads
        );
        for (name, x) in [(ours, e), ("candle-transformers   ", reference)] {
            out!(
                "  {name} {:>8.1} sentences/s   single query p50 {:>6.1} ms  p99 {:>6.1} ms",
                x.sentences_per_sec,
                x.single_query_ms_p50,
                x.single_query_ms_p99
            );
        }
        if let Some(p) = peer {
            let ps = p["sentences_per_sec"].as_f64().unwrap_or(0.0);
            out!(
                "  sentence-transformers  {:>8.1} sentences/s   single query p50 {:>6.1} ms  p99 {:>6.1} ms   ({} torch thread(s))",
                ps,
                p["single_query_ms_p50"].as_f64().unwrap_or(0.0),
                p["single_query_ms_p99"].as_f64().unwrap_or(0.0),
                p["threads"].as_u64().unwrap_or(0)
            );
            out!(
                "  ratio somna/peer       {:>8.2}× the throughput        single query p50 {:>5.2}× the peer's speed",
                e.sentences_per_sec / ps.max(1e-9),
                p["single_query_ms_p50"].as_f64().unwrap_or(0.0) / e.single_query_ms_p50.max(1e-9)
            );
        }
    }
    for i in &r.ingest {
        out!("\ningest on {}: {} messages in {:.1} s = {:.1} messages/s (embedding, extraction, links, one transaction per batch)", i.backend, i.messages, i.seconds, i.messages_per_sec);
    }
    if let Some(b) = &r.import {
        crate::bench_import::print(b);
    }
    crate::bench_postgres::print(&r.concurrent);
    if !r.search.is_empty() {
        out!("\nsearch latency (ms)                            k  memories  queries     p50     p99  p50 w/o embed  p99 w/o embed");
        for s in &r.search {
            out!(
                "  {:<43} {:>3} {:>9} {:>8} {:>7.2} {:>7.2} {:>14.2} {:>14.2}",
                format!(
                    "{}: {}{}",
                    s.backend,
                    s.route,
                    if s.recorded { ", recorded" } else { "" }
                ),
                s.k,
                s.memories,
                s.queries,
                s.p50_ms,
                s.p99_ms,
                s.p50_ms_no_embed,
                s.p99_ms_no_embed
            );
            let phases: Vec<String> = s
                .phases
                .iter()
                .map(|p| format!("{} {:.2}/{:.2}", p.phase, p.p50_ms, p.p99_ms))
                .collect();
            out!("    phases p50/p99: {}", phases.join(", "));
        }
    }
    for (a, peer) in &r.ann {
        out!(
            "\nANN, {} clustered 384-d vectors (32-d latent structure), M={} ef_construction={}: build somna {:.1} s{}",
            a.n,
            a.params.m,
            a.params.ef_construction,
            a.build_seconds,
            peer.as_ref().map_or(String::new(), |p| {
                let b = p["build_seconds"].as_f64().unwrap_or(0.0);
                format!(
                    ", hnswlib {:.1} s (ratio {:.2}×)",
                    b,
                    a.build_seconds / b.max(1e-9)
                )
            })
        );
        if let Some(m) = &a.memory {
            let peer_memory = peer.as_ref().and_then(|p| {
                let m = &p["memory"];
                Some((m["index_mib"].as_f64()?, m["peak_mib"].as_f64()?))
            });
            out!(
                "  memory (MiB above the process before the build): vectors {:.0}; somna index {:.0}, peak {:.0} ({:.2}× the vectors){}",
                m.raw_mib,
                m.index_mib,
                m.peak_mib,
                m.index_mib / m.raw_mib.max(1e-9),
                peer_memory.map_or(String::new(), |(index, peak)| format!(
                    "; hnswlib index {index:.0}, peak {peak:.0} ({:.2}×)",
                    index / m.raw_mib.max(1e-9)
                ))
            );
        }
        out!("  ef   somna R@10  p50 ms  p99 ms | hnswlib R@10  p50 ms  p99 ms");
        for e in &a.results {
            let p = peer.as_ref().and_then(|p| {
                p["results"]
                    .as_array()?
                    .iter()
                    .find(|x| x["ef"].as_u64() == Some(e.ef as u64))
                    .cloned()
            });
            let ptxt = p.map_or(String::new(), |p| {
                format!(
                    "| {:>12.4} {:>7.3} {:>7.3}",
                    p["recall_at_10"].as_f64().unwrap_or(0.0),
                    p["p50_ms"].as_f64().unwrap_or(0.0),
                    p["p99_ms"].as_f64().unwrap_or(0.0)
                )
            });
            out!(
                "  {:<4} {:>10.4} {:>7.3} {:>7.3} {}",
                e.ef,
                e.recall_at_10,
                e.p50_ms,
                e.p99_ms,
                ptxt
            );
        }
    }
}
