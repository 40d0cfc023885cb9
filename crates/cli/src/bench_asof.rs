//! `somna bench --only asof`: the cost of time travel on a large store. Two stores of
//! `--asof-memories` memories with `--asof-history` history rows each are built once (kept
//! in `--cache-dir`): in the first every memory is added at the start and edits are spread
//! evenly over a year after it; in the second (*grown*) the memories are added evenly over
//! the year and each edit falls on a memory that exists by then, as in a store that grew
//! by imports. On each, the store as of instants 1 %, 50 % and 99 % of the way back is read
//! (the delta reconstruction) and a first page listed as of each; on the first, every
//! memory's visibility over time is computed too (what the app's time scrubber loads once).

use crate::bench_cmd::median;
use serde::Serialize;
use somna_engine::memory::{Kind, NewMemory};
use somna_engine::store::{ListQuery, Store};
use somna_engine::timetravel::{state_steps, AsOf};
use std::path::Path;
use std::time::Instant;

/// What the time-travel benchmark measured.
#[derive(Debug, Serialize)]
pub struct AsOfBench {
    pub memories: usize,
    pub history_rows: usize,
    /// One row per instant: how far back (share of the history after it), the changes
    /// reverted, and the medians of `runs` reads (ms). Every memory added at the start.
    pub instants: Vec<AsOfInstant>,
    /// The same on the store that grew over the year.
    pub grown: Vec<AsOfInstant>,
    /// Every memory's visibility steps over the whole history (ms, one run).
    pub visibility_ms: f64,
    pub runs: usize,
}

#[derive(Debug, Serialize)]
pub struct AsOfInstant {
    pub back: f64,
    pub changes_after: usize,
    pub memories_changed: usize,
    pub reconstruct_ms: f64,
    pub list_page_ms: f64,
}

const YEAR_MS: i64 = 365 * 86_400_000;
const START_MS: i64 = 1_700_000_000_000;

/// How the benchmark's store came to be.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// Every memory added at the start, edited over the year.
    AtStart,
    /// Memories added evenly over the year, each edit on one that exists by then.
    Grown,
}

/// Builds (or reuses) the stores and measures.
pub fn run(
    cache: &Path,
    memories: usize,
    history: usize,
    runs: usize,
) -> anyhow::Result<AsOfBench> {
    let (instants, store) = measure(cache, Shape::AtStart, memories, history, runs)?;
    let read = store.read();
    let t = Instant::now();
    let steps = state_steps(
        read.all_memories()?,
        &read.history_since(i64::MIN)?,
        &read.operations_since(i64::MIN)?,
    );
    let visibility_ms = ms(t);
    std::hint::black_box(steps);
    let (grown, _) = measure(cache, Shape::Grown, memories, history, runs)?;
    Ok(AsOfBench {
        memories,
        history_rows: history,
        instants,
        grown,
        visibility_ms,
        runs,
    })
}

/// Builds (or reuses) the store of `shape` and reads it as of three instants.
fn measure(
    cache: &Path,
    shape: Shape,
    memories: usize,
    history: usize,
    runs: usize,
) -> anyhow::Result<(Vec<AsOfInstant>, Store)> {
    let name = match shape {
        Shape::AtStart => format!("asof-{memories}-{history}.db"),
        Shape::Grown => format!("asof-grown-{memories}-{history}.db"),
    };
    let path = cache.join(name);
    if !path.exists() {
        eprintln!(
            "asof: building a store of {memories} memories and {history} history rows ({shape:?})"
        );
        build(&path, shape, memories, history)?;
    }
    let store = Store::open(&path)?;
    let read = store.read();
    let mut instants = Vec::new();
    for back in [0.01, 0.5, 0.99] {
        let at = START_MS + ((1.0 - back) * YEAR_MS as f64) as i64;
        let mut rebuild = Vec::new();
        let mut list = Vec::new();
        let mut last = AsOf::default();
        for _ in 0..runs {
            let t = Instant::now();
            last = AsOf::read(&read, at)?;
            rebuild.push(ms(t));
            let t = Instant::now();
            let q = ListQuery {
                limit: 50,
                ..Default::default()
            };
            let page = last.list(
                &q,
                |n| {
                    let q = ListQuery {
                        limit: n,
                        ..q.clone()
                    };
                    read.list_memories_created_by(&q, Some(at))
                },
                |_| true,
            )?;
            std::hint::black_box(page);
            list.push(ms(t));
        }
        instants.push(AsOfInstant {
            back,
            changes_after: read.history_since(at)?.len(),
            memories_changed: last.changed_count(),
            reconstruct_ms: median(&mut rebuild),
            list_page_ms: median(&mut list),
        });
    }
    Ok((instants, store))
}

/// `memories` memories and `history - memories` edits of importance (every tenth also of
/// the text) spread evenly over a year, round-robin over the memories that exist by then:
/// all of them from the start ([`Shape::AtStart`]), or those added so far when the
/// memories are added evenly over the year too ([`Shape::Grown`]).
fn build(path: &Path, shape: Shape, memories: usize, history: usize) -> anyhow::Result<()> {
    let mut store = Store::open(path)?;
    let edits = history.saturating_sub(memories);
    let n = memories.max(1) as i64;
    let born = |i: i64| match shape {
        Shape::AtStart => START_MS,
        Shape::Grown => START_MS + i * YEAR_MS / n,
    };
    store.transaction(|tx| {
        for i in 0..memories as i64 {
            let text = format!("memory {i} about topic {}", i % 97);
            let id =
                tx.insert_memory(&NewMemory::new(Kind::Episode, text.clone()), 1.0, born(i))?;
            let new = serde_json::json!({ "text": text });
            tx.record_history(id, "add", None, Some(&new), "import", None, born(i))?;
        }
        for e in 0..edits {
            let at = START_MS + 1 + (e as i64 * YEAR_MS) / edits.max(1) as i64;
            let existing = match shape {
                Shape::AtStart => n,
                Shape::Grown => ((at - START_MS) * n / YEAR_MS + 1).min(n),
            };
            let id = (e as i64 % existing) + 1;
            let mut old = serde_json::json!({ "importance": 0.5, "updated_at": at - 1 });
            let mut new = serde_json::json!({ "importance": 0.4, "updated_at": at });
            if e % 10 == 0 {
                old["text"] = format!("memory {id} before edit {e}").into();
                new["text"] = format!("memory {id} after edit {e}").into();
            }
            tx.record_history(id, "update", Some(&old), Some(&new), "user", None, at)?;
        }
        Ok(())
    })?;
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

pub fn print(b: &AsOfBench) {
    out!(
        "\ntime travel ({} memories, {} history rows; medians of {} runs)",
        b.memories,
        b.history_rows,
        b.runs
    );
    for (title, rows) in [
        ("every memory added at the start", &b.instants),
        ("memories added over the year", &b.grown),
    ] {
        out!("  {title}");
        out!("  back   changes after   memories changed   reconstruct ms   first page ms");
        for i in rows {
            out!(
                "  {:>4.0}%  {:>13}   {:>16}   {:>14.1}   {:>13.1}",
                i.back * 100.0,
                i.changes_after,
                i.memories_changed,
                i.reconstruct_ms,
                i.list_page_ms
            );
        }
    }
    out!(
        "  every memory's visibility steps: {:.0} ms",
        b.visibility_ms
    );
}
