//! `somna bench --only lexical`: the lexical stage of a search alone, on stores of
//! `--lexical-sizes` synthetic memories (text only, no vectors: a million are written in
//! about a minute, where a store with vectors takes hours to embed and index). Each store is
//! built once (kept in `--cache-dir`); its full-text index is read into memory (timed, with
//! the process's resident memory before and after), then every synthetic query is ranked
//! both ways, alternately: in memory, as a large store's searches rank, and by FTS5's
//! `bm25()`, as they did before (and still do while the index is stale). The two must give
//! the same scores; the report says for how many queries they did. Then, on a copy of the
//! store, rounds of writes (new memories and edits of old ones, one transaction a round):
//! how long after each commit the index in memory is current again (it catches up from the
//! log of changes; a full reading takes `read_s`), and whether a few queries then still
//! rank as FTS5 does.

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
    /// Write rounds, and the memories each wrote (added and edited).
    pub write_rounds: usize,
    pub written_per_round: usize,
    /// From a round's commit until the index in memory was that version.
    pub current_again_p50_ms: f64,
    pub current_again_max_ms: f64,
    /// Rounds caught up from the log, not read in full.
    pub caught_up_rounds: usize,
    /// Queries after the writes whose in-memory ranking had FTS5's scores.
    pub queries_after_writes: usize,
    pub agreeing_after_writes: usize,
}

/// Whether two rankings have the same scores, to 1e-9 (FTS5 breaks ties in its own order,
/// so the documents of equal scores may differ).
fn agree(ours: &[(i64, f64)], theirs: &[(i64, f64)]) -> bool {
    ours.len() == theirs.len()
        && ours
            .iter()
            .zip(theirs)
            .all(|(a, b)| (a.1 - b.1).abs() <= 1e-9 * b.1.abs().max(1.0))
}

/// Write rounds on the copy, memories added and edited a round, queries checked a round.
const WRITE_ROUNDS: usize = 20;
const ADDED_PER_ROUND: usize = 30;
const EDITED_PER_ROUND: usize = 10;
const QUERIES_PER_ROUND: usize = 5;

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
        agreeing += usize::from(agree(&ours, &theirs));
    }
    let writes = after_writes(cache, &db, size, seed, &queries)?;
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
        write_rounds: WRITE_ROUNDS,
        written_per_round: ADDED_PER_ROUND + EDITED_PER_ROUND,
        current_again_p50_ms: bench::percentile(&mut writes.current_ms.clone(), 0.5),
        current_again_max_ms: writes.current_ms.iter().copied().fold(0.0, f64::max),
        caught_up_rounds: writes.caught_up,
        queries_after_writes: writes.queries,
        agreeing_after_writes: writes.agreeing,
    };
    eprintln!(
        "lexical @ {size}: in memory p50 {:.2} ms, p99 {:.2} ms; FTS5 p50 {:.2} ms, p99 {:.2} ms; {}/{} agree; current again after a write p50 {:.1} ms, max {:.1} ms ({}/{} rounds caught up), {}/{} agree after",
        result.memory_p50_ms, result.memory_p99_ms, result.fts5_p50_ms, result.fts5_p99_ms, agreeing, result.queries,
        result.current_again_p50_ms, result.current_again_max_ms, writes.caught_up, WRITE_ROUNDS, writes.agreeing, writes.queries
    );
    Ok(result)
}

/// What the write rounds found.
struct Writes {
    current_ms: Vec<f64>,
    caught_up: usize,
    queries: usize,
    agreeing: usize,
}

/// The write rounds, on a copy of the store at `db` (the cached store stays as built).
fn after_writes(
    cache: &Path,
    db: &Path,
    size: usize,
    seed: u64,
    queries: &[String],
) -> anyhow::Result<Writes> {
    let copy = cache.join(format!("lexical-{size}-{seed}-writes.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
    }
    std::fs::copy(db, &copy)?;
    let mut store = Store::open(&copy)?;
    if !store.wait_lexical(Duration::from_secs(3600))? {
        anyhow::bail!("the copy's index was not read into memory");
    }
    let texts = bench::synthetic_sentences(
        WRITE_ROUNDS * (ADDED_PER_ROUND + EDITED_PER_ROUND),
        seed + 5,
    );
    let mut texts = texts.iter();
    let filter = MemoryFilter::default();
    let mut out = Writes {
        current_ms: Vec::new(),
        caught_up: 0,
        queries: 0,
        agreeing: 0,
    };
    for round in 0..WRITE_ROUNDS {
        let reads_before = store.lexical_readings();
        store.transaction(|tx| {
            for _ in 0..ADDED_PER_ROUND {
                let text = texts.next().map_or("", String::as_str);
                tx.insert_memory(&NewMemory::new(Kind::Episode, text), 1.0, 0)?;
            }
            for e in 0..EDITED_PER_ROUND {
                // Spread over the store: memories the index read, not only new ones.
                let id = 1 + ((round * EDITED_PER_ROUND + e) * 7_919 % size) as i64;
                if let Some(mut m) = tx.get_memory(id)? {
                    m.text = texts.next().cloned().unwrap_or_default();
                    tx.write_memory_fields(&m, 0)?;
                }
            }
            Ok(())
        })?;
        let t = Instant::now();
        if !store.wait_lexical(Duration::from_secs(3600))? {
            anyhow::bail!("the copy's index did not catch up with a write");
        }
        out.current_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        out.caught_up += usize::from(store.lexical_readings() == reads_before);
        for q in queries
            .iter()
            .cycle()
            .skip(round * QUERIES_PER_ROUND)
            .take(QUERIES_PER_ROUND)
        {
            let ours = store.read().lexical_search(q, &filter, POOL)?;
            let theirs = store.read().lexical_search_fts5(q, &filter, POOL)?;
            out.queries += 1;
            out.agreeing += usize::from(agree(&ours, &theirs));
        }
    }
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
    }
    Ok(out)
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
    let catch_up = |r: &LexicalResult| {
        format!(
            "  current again after a write of {} memories       {:>9}  p50 {:.1} ms, max {:.1} ms over {} rounds ({} caught up from the log, the rest read in full); {}/{} queries then agree",
            r.written_per_round,
            r.memories,
            r.current_again_p50_ms,
            r.current_again_max_ms,
            r.write_rounds,
            r.caught_up_rounds,
            r.agreeing_after_writes,
            r.queries_after_writes
        )
    };
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
    for r in results {
        out!("{}", catch_up(r));
    }
}
