//! `somna bench --only import`: an import as a user runs it (`somna import`, the app's
//! import): embedding, the ingest policies, facts, similar and causal links, summaries, the
//! vector index and cluster upkeep, into a fresh store, with each stage's time from the
//! ledger. With `--import-at`, the same for 1,000 more turns once the store holds each of
//! those many turns (the store is filled up to each size first, untimed), `--import-rounds`
//! times in a row, to show how the stages grow with the store (the median of the rounds).

use crate::bench_cmd::{conversations_from, median};
use serde::Serialize;
use somna_engine::embed::BertEmbedder;
use somna_engine::ingest::{
    ConversationBatch, STAGE_COMMIT, STAGE_INDEX, STAGE_PLAN, STAGE_SUMMARIES,
};
use somna_engine::ledger::LedgerGroup;
use somna_engine::{bench, AddOptions, Config, Job, Somna};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Turns timed at each `--import-at` size.
const MORE: usize = 1_000;

/// What to import and where to time it.
pub struct ImportParams {
    /// Turns of the import into a fresh store.
    pub turns: usize,
    /// Store sizes (turns) at which `MORE` turns are timed.
    pub at: Vec<usize>,
    /// Imports timed at each of those sizes, one after another.
    pub rounds: usize,
    /// Turns per synthetic conversation.
    pub per_conversation: usize,
    pub seed: u64,
}

/// The ledger operations reported, in pipeline order: operation, column, what it covers.
const STAGES: [(&str, &str, &str); 7] = [
    (STAGE_PLAN, "plan", "validation, policies, stored ids"),
    ("embed", "embed", "the model, summaries' texts included"),
    (
        STAGE_COMMIT,
        "commit",
        "one transaction: memories, facts, links",
    ),
    (
        STAGE_INDEX,
        "index",
        "the new points inserted in the vector index",
    ),
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
    /// Turns per synthetic conversation.
    pub per_conversation: usize,
    pub fresh: ImportRun,
    pub scaling: Vec<ImportRun>,
}

/// One timed import, or the median of several at one size.
#[derive(Debug, Serialize)]
pub struct ImportRun {
    /// Turns in the store before it (before the first round).
    pub stored: usize,
    pub turns: usize,
    pub seconds: f64,
    pub turns_per_sec: f64,
    /// Ledger milliseconds per stage (`STAGES`' operations).
    pub stages: Vec<(String, f64)>,
    /// Each round's seconds, when this is the median of several.
    pub rounds: Vec<f64>,
}

impl ImportRun {
    /// The median round of `runs` (timed one after another at about the same size): its
    /// seconds and each stage's median, and every round's seconds.
    fn median(runs: Vec<ImportRun>) -> ImportRun {
        let rounds: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
        let seconds = median(&mut rounds.clone());
        let stages = STAGES
            .iter()
            .enumerate()
            .map(|(i, (op, _, _))| {
                (
                    op.to_string(),
                    median(&mut runs.iter().map(|r| r.stages[i].1).collect::<Vec<_>>()),
                )
            })
            .collect();
        ImportRun {
            stored: runs[0].stored,
            turns: runs[0].turns,
            seconds,
            turns_per_sec: runs[0].turns as f64 / seconds,
            stages,
            rounds,
        }
    }
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
    (first, per): (usize, usize),
    stored: usize,
) -> anyhow::Result<ImportRun> {
    // The difference of the totals: entries of an earlier import can share its last
    // millisecond with this one's start.
    let before = stage_totals(engine)?;
    let t = Instant::now();
    import(engine, &conversations_from(sentences, per, first))?;
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
        rounds: Vec::new(),
    })
}

pub fn run(
    tmp: &Path,
    model_dir: &Path,
    embedder: Arc<BertEmbedder>,
    params: &ImportParams,
) -> anyhow::Result<ImportBench> {
    let (rounds, per, seed) = (
        params.rounds.max(1),
        params.per_conversation.max(1),
        params.seed,
    );
    let open = |name: &str| {
        Somna::open_with(
            &Config::new(tmp.join(name), model_dir),
            embedder.clone(),
            &Job::default(),
        )
    };
    let fresh = timed(
        &open("import.db")?,
        &bench::synthetic_sentences(params.turns, seed + 7),
        (0, per),
        0,
    )?;
    eprintln!(
        "import: {} turns in {:.1} s into a fresh store",
        fresh.turns, fresh.seconds
    );
    let mut sizes = params.at.clone();
    sizes.sort_unstable();
    let mut scaling = Vec::new();
    if let Some(&largest) = sizes.last() {
        let engine = open("import-scale.db")?;
        // Sizes closer together than the rounds start where the rounds before them ended.
        let timed_turns = sizes.len() * rounds * MORE;
        let sentences = bench::synthetic_sentences(largest + timed_turns, seed + 8);
        let mut filled = 0;
        for size in sizes {
            if size > filled {
                eprintln!("import: filling the store to {size} turns");
                let t = Instant::now();
                import(
                    &engine,
                    &conversations_from(&sentences[filled..size], per, filled),
                )?;
                eprintln!(
                    "import: {} turns in {:.1} s",
                    size - filled,
                    t.elapsed().as_secs_f64()
                );
            }
            // New turns, never ones a round before this one imported (they would be skipped).
            let start = size.max(filled);
            let mut runs = Vec::new();
            for round in 0..rounds {
                let first = start + round * MORE;
                let r = timed(
                    &engine,
                    &sentences[first..first + MORE],
                    (first, per),
                    start,
                )?;
                eprintln!(
                    "import: {MORE} more turns at {first} stored in {:.1} s",
                    r.seconds
                );
                runs.push(r);
            }
            scaling.push(ImportRun::median(runs));
            filled = start + rounds * MORE;
        }
    }
    Ok(ImportBench {
        per_conversation: per,
        fresh,
        scaling,
    })
}

pub fn print(b: &ImportBench) {
    let row = |r: &ImportRun| {
        let stages: Vec<String> = r
            .stages
            .iter()
            .map(|(_, ms)| format!("{:>9.1}", ms / 1000.0))
            .collect();
        let rounds = if r.rounds.len() > 1 {
            let each: Vec<String> = r.rounds.iter().map(|s| format!("{s:.1}")).collect();
            format!(
                "   (median of {} rounds: {} s)",
                r.rounds.len(),
                each.join(", ")
            )
        } else {
            String::new()
        };
        format!(
            "{:>8} {:>7} {:>8.1} {:>8.1}   {}{rounds}",
            r.stored,
            r.turns,
            r.seconds,
            r.turns_per_sec,
            stages.join(" ")
        )
    };
    out!(
        "\nimport (somna import's path: embedding, facts, links, summaries, index, clusters; {} turns a conversation)",
        b.per_conversation
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seconds: f64, stage_ms: f64) -> ImportRun {
        ImportRun {
            stored: 10_000,
            turns: 1_000,
            seconds,
            turns_per_sec: 1_000.0 / seconds,
            stages: STAGES
                .iter()
                .enumerate()
                .map(|(i, (op, _, _))| (op.to_string(), stage_ms * (i + 1) as f64))
                .collect(),
            rounds: Vec::new(),
        }
    }

    #[test]
    fn rounds_at_one_size_are_reported_by_their_median_round_and_stage() {
        let m = ImportRun::median(vec![run(5.0, 30.0), run(3.0, 10.0), run(4.0, 20.0)]);
        assert_eq!(m.seconds, 4.0);
        assert_eq!(m.turns_per_sec, 250.0);
        assert_eq!(
            m.rounds,
            vec![5.0, 3.0, 4.0],
            "each round, in the order run"
        );
        for (i, (_, ms)) in m.stages.iter().enumerate() {
            assert_eq!(*ms, 20.0 * (i + 1) as f64, "stage {i}'s median");
        }
    }
}
