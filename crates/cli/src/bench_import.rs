//! `somna bench --only import`: an import as a user runs it (`somna import`, the app's
//! import): embedding, the ingest policies, facts, similar and causal links, summaries, the
//! vector index and cluster upkeep, into a fresh store, with each stage's time from the
//! ledger. With `--import-at`, the same for 1,000 more turns once the store holds each of
//! those many turns (the store is filled up to each size first, untimed), to show how the
//! stages grow with the store.

use crate::bench_cmd::conversations_from;
use serde::Serialize;
use somna_engine::embed::BertEmbedder;
use somna_engine::ingest::{ConversationBatch, STAGE_COMMIT, STAGE_PLAN, STAGE_SUMMARIES};
use somna_engine::ledger::LedgerGroup;
use somna_engine::{bench, AddOptions, Config, Job, Somna};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Turns per synthetic conversation (as the ingest benchmark's).
const PER_CONVERSATION: usize = 500;
/// Turns timed at each `--import-at` size.
const MORE: usize = 1_000;

/// The ledger operations reported, in pipeline order: operation, column, what it covers.
const STAGES: [(&str, &str, &str); 6] = [
    (STAGE_PLAN, "plan", "validation, policies, stored ids"),
    ("embed", "embed", "the model, summaries' texts included"),
    (STAGE_COMMIT, "commit", "memories, facts, links, index"),
    (STAGE_SUMMARIES, "summaries", "conversation summaries"),
    ("cluster.upkeep", "clusters", "clusters after the import"),
    (
        "index.save",
        "save",
        "the vector index written to disk, when due",
    ),
];

#[derive(Debug, Serialize)]
pub struct ImportBench {
    pub fresh: ImportRun,
    pub scaling: Vec<ImportRun>,
}

/// One timed import.
#[derive(Debug, Serialize)]
pub struct ImportRun {
    /// Turns in the store before it.
    pub stored: usize,
    pub turns: usize,
    pub seconds: f64,
    pub turns_per_sec: f64,
    /// Ledger milliseconds per stage (`STAGES`' operations).
    pub stages: Vec<(String, f64)>,
}

/// Imports and keeps the store clustered, as `somna import` does.
fn import(engine: &Somna, batches: &[ConversationBatch]) -> anyhow::Result<()> {
    let job = Job::default();
    engine.import(batches, &AddOptions::default(), &job)?;
    engine.keep_clustered(&job)?;
    Ok(())
}

/// Ledger milliseconds so far of each of `STAGES`' operations.
fn stage_totals(engine: &Somna) -> anyhow::Result<Vec<f64>> {
    let ledger = engine.ledger_summary(0, LedgerGroup::Op)?;
    Ok(STAGES
        .iter()
        .map(|(op, _, _)| {
            ledger
                .iter()
                .filter(|row| row.op.as_deref() == Some(op))
                .map(|row| row.total_ms)
                .sum()
        })
        .collect())
}

fn timed(
    engine: &Somna,
    sentences: &[String],
    first: usize,
    stored: usize,
) -> anyhow::Result<ImportRun> {
    // The difference of the totals: entries of an earlier import can share its last
    // millisecond with this one's start.
    let before = stage_totals(engine)?;
    let t = Instant::now();
    import(
        engine,
        &conversations_from(sentences, PER_CONVERSATION, first),
    )?;
    let seconds = t.elapsed().as_secs_f64();
    let after = stage_totals(engine)?;
    let stages = STAGES
        .iter()
        .zip(after.iter().zip(&before))
        .map(|((op, _, _), (a, b))| (op.to_string(), a - b))
        .collect();
    Ok(ImportRun {
        stored,
        turns: sentences.len(),
        seconds,
        turns_per_sec: sentences.len() as f64 / seconds,
        stages,
    })
}

pub fn run(
    tmp: &Path,
    model_dir: &Path,
    embedder: Arc<BertEmbedder>,
    count: usize,
    at: &[usize],
    seed: u64,
) -> anyhow::Result<ImportBench> {
    let open = |name: &str| {
        Somna::open_with(
            &Config::new(tmp.join(name), model_dir),
            embedder.clone(),
            &Job::default(),
        )
    };
    let fresh = timed(
        &open("import.db")?,
        &bench::synthetic_sentences(count, seed + 7),
        0,
        0,
    )?;
    eprintln!(
        "import: {} turns in {:.1} s into a fresh store",
        fresh.turns, fresh.seconds
    );
    let mut sizes = at.to_vec();
    sizes.sort_unstable();
    let mut scaling = Vec::new();
    if let Some(&largest) = sizes.last() {
        let engine = open("import-scale.db")?;
        let sentences = bench::synthetic_sentences(largest + MORE, seed + 8);
        let mut filled = 0;
        for size in sizes {
            if size > filled {
                eprintln!("import: filling the store to {size} turns");
                let t = Instant::now();
                import(
                    &engine,
                    &conversations_from(&sentences[filled..size], PER_CONVERSATION, filled),
                )?;
                eprintln!(
                    "import: {} turns in {:.1} s",
                    size - filled,
                    t.elapsed().as_secs_f64()
                );
            }
            let more = &sentences[size..size + MORE];
            let r = timed(&engine, more, size, size)?;
            eprintln!(
                "import: {MORE} more turns at {size} stored in {:.1} s",
                r.seconds
            );
            scaling.push(r);
            filled = size + MORE;
        }
    }
    Ok(ImportBench { fresh, scaling })
}

pub fn print(b: &ImportBench) {
    let row = |r: &ImportRun| {
        let stages: Vec<String> = r
            .stages
            .iter()
            .map(|(_, ms)| format!("{:>9.1}", ms / 1000.0))
            .collect();
        format!(
            "{:>8} {:>7} {:>8.1} {:>8.1}   {}",
            r.stored,
            r.turns,
            r.seconds,
            r.turns_per_sec,
            stages.join(" ")
        )
    };
    out!("\nimport (somna import's path: embedding, facts, links, summaries, index, clusters)");
    out!(
        "  stored   turns  seconds  turns/s   {}",
        STAGES
            .iter()
            .map(|(_, column, _)| format!("{column:>9}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    out!("  {}", row(&b.fresh));
    for r in &b.scaling {
        out!("  {}", row(r));
    }
    out!("  (stage columns: seconds in the ledger; embed includes the summaries' texts, so summaries and embed overlap)");
    for (op, column, what) in STAGES {
        out!("    {column} ({op}): {what}");
    }
}
