//! `somna bench --only lexical`: the lexical stage of a search alone, on stores of
//! `--lexical-sizes` synthetic memories (text only, no vectors: a million are written in
//! about a minute, where a store with vectors takes hours to embed and index). Each store is
//! built once (kept in `--cache-dir`); its full-text index is read into memory (timed, with
//! the process's resident memory before and after), then every synthetic query is ranked
//! both ways, alternately: in memory, as a large store's searches rank, and by FTS5's
//! `bm25()`, as they did before (and still do while the index is stale). The two must give
//! the same scores; the report says for how many queries they did.

use serde::Serialize;
use somna_engine::bench;
use somna_engine::memory::{Kind, NewMemory};
use somna_engine::store::{MemoryFilter, Store};
use std::path::Path;
use std::time::{Duration, Instant};

/// The lexical stage at one store size.
#[derive(Debug, Serialize)]
pub struct LexicalResult {
    pub memories: usize,
    /// Reading the index into memory, and the resident memory it added (MB).
    pub read_s: f64,
    pub resident_mb: f64,
    pub queries: usize,
    /// Queries whose in-memory ranking had FTS5's scores, to 1e-9.
    pub agreeing: usize,
    pub memory_p50_ms: f64,
    pub memory_p99_ms: f64,
    pub fts5_p50_ms: f64,
    pub fts5_p99_ms: f64,
}

/// The smallest store whose searches rank in memory (the engine's `LEXICON_FROM_ROWS`).
const LEXICON_FROM: usize = 20_000;

/// How many lexical matches each query asks for: a search's candidate pool at k = 10.
const POOL: usize = 150;

/// Builds (or reuses) each store and measures.
pub fn run(
    cache: &Path,
    sizes: &[usize],
    queries: usize,
    seed: u64,
) -> anyhow::Result<Vec<LexicalResult>> {
    if let Some(small) = sizes.iter().find(|&&s| s < LEXICON_FROM) {
        anyhow::bail!(
            "--lexical-sizes {small}: a store of fewer than {LEXICON_FROM} memories ranks with FTS5 alone"
        );
    }
    sizes
        .iter()
        .map(|&size| measure(cache, size, queries, seed))
        .collect()
}

fn measure(cache: &Path, size: usize, queries: usize, seed: u64) -> anyhow::Result<LexicalResult> {
    let db = cache.join(format!("lexical-{size}-{seed}.db"));
    build(&db, size, seed)?;
    let store = Store::open(&db)?;
    let before = resident_mb();
    let started = Instant::now();
    if !store.wait_lexical(Duration::from_secs(3600))? {
        anyhow::bail!("the {size}-memory store's index was not read into memory");
    }
    let read_s = started.elapsed().as_secs_f64();
    let resident_mb = resident_mb() - before;
    eprintln!("lexical: {size} memories, index read into memory in {read_s:.2} s (+{resident_mb:.0} MB resident)");
    let filter = MemoryFilter::default();
    let (mut memory, mut fts5, mut agreeing) = (Vec::new(), Vec::new(), 0);
    let queries = bench::synthetic_queries(queries, seed + 3);
    for q in &queries {
        let t = Instant::now();
        let ours = store.read().lexical_search(q, &filter, POOL)?;
        memory.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let theirs = store.read().lexical_search_fts5(q, &filter, POOL)?;
        fts5.push(t.elapsed().as_secs_f64() * 1000.0);
        let same = ours.len() == theirs.len()
            && ours
                .iter()
                .zip(&theirs)
                .all(|(a, b)| (a.1 - b.1).abs() <= 1e-9 * b.1.abs().max(1.0));
        agreeing += usize::from(same);
    }
    let result = LexicalResult {
        memories: size,
        read_s,
        resident_mb,
        queries: queries.len(),
        agreeing,
        memory_p50_ms: bench::percentile(&mut memory.clone(), 0.5),
        memory_p99_ms: bench::percentile(&mut memory, 0.99),
        fts5_p50_ms: bench::percentile(&mut fts5.clone(), 0.5),
        fts5_p99_ms: bench::percentile(&mut fts5, 0.99),
    };
    eprintln!(
        "lexical @ {size}: in memory p50 {:.2} ms, p99 {:.2} ms; FTS5 p50 {:.2} ms, p99 {:.2} ms; {}/{} agree",
        result.memory_p50_ms, result.memory_p99_ms, result.fts5_p50_ms, result.fts5_p99_ms, agreeing, result.queries
    );
    Ok(result)
}

/// Writes `size` synthetic memories into the store at `db`, unless it holds them already.
fn build(db: &Path, size: usize, seed: u64) -> anyhow::Result<()> {
    let mut store = Store::open(db)?;
    let have = store.read().count_memories(&MemoryFilter::default())? as usize;
    if have >= size {
        return Ok(());
    }
    eprintln!(
        "lexical: writing {} memories into {}",
        size - have,
        db.display()
    );
    let texts = bench::synthetic_sentences(size, seed + 2);
    let started = Instant::now();
    for chunk in texts[have..].chunks(20_000) {
        store.transaction(|tx| {
            for text in chunk {
                tx.insert_memory(&NewMemory::new(Kind::Episode, text.as_str()), 1.0, 0)?;
            }
            Ok(())
        })?;
    }
    eprintln!(
        "lexical: written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Closing the store copies its WAL into the file, so the measurement reads no WAL.
    drop(store);
    Ok(())
}

/// This process's resident memory (MB; 0 where there is no `/proc/self/status`).
fn resident_mb() -> f64 {
    bench::resident_kib().map_or(0.0, |(rss, _)| rss as f64 / 1024.0)
}

pub fn print(results: &[LexicalResult]) {
    if results.is_empty() {
        return;
    }
    out!("\nlexical stage alone (ms; {POOL} matches a query)   memories  read (s)  resident (MB)  queries  agree  memory p50  memory p99  FTS5 p50  FTS5 p99  FTS5/memory p50");
    for r in results {
        out!(
            "  in memory vs FTS5 bm25()                       {:>9} {:>9.2} {:>14.0} {:>8} {:>6} {:>11.2} {:>11.2} {:>9.2} {:>9.2} {:>15.1}×",
            r.memories,
            r.read_s,
            r.resident_mb,
            r.queries,
            r.agreeing,
            r.memory_p50_ms,
            r.memory_p99_ms,
            r.fts5_p50_ms,
            r.fts5_p99_ms,
            r.fts5_p50_ms / r.memory_p50_ms.max(1e-9)
        );
    }
}
