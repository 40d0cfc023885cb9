//! `somna bench --only asof`: the cost of time travel on a large store. A store of
//! `--asof-memories` memories with `--asof-history` history rows (each memory added, then
//! edits spread evenly over a year) is built once (kept in `--cache-dir`), then the store as
//! of instants 1 %, 50 % and 99 % of the way back is read (the delta reconstruction), a
//! first page listed as of each, and every memory's visibility over time computed (what the
//! app's time scrubber loads once).

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
    /// reverted, and the medians of `runs` reads (ms).
    pub instants: Vec<AsOfInstant>,
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

/// Builds (or reuses) the store and measures.
pub fn run(
    cache: &Path,
    memories: usize,
    history: usize,
    runs: usize,
) -> anyhow::Result<AsOfBench> {
    let path = cache.join(format!("asof-{memories}-{history}.db"));
    if !path.exists() {
        eprintln!("asof: building a store of {memories} memories and {history} history rows");
        build(&path, memories, history)?;
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
                    read.list_memories(&ListQuery {
                        limit: n,
                        ..q.clone()
                    })
                },
                |_| true,
            )?;
            std::hint::black_box(page);
            list.push(ms(t));
        }
        instants.push(AsOfInstant {
            back,
            changes_after: read.history_since(at)?.len(),
            memories_changed: last.then.len(),
            reconstruct_ms: median(rebuild),
            list_page_ms: median(list),
        });
    }
    let t = Instant::now();
    let steps = state_steps(
        read.all_memories()?,
        &read.history_since(i64::MIN)?,
        &read.operations_since(i64::MIN)?,
    );
    let visibility_ms = ms(t);
    std::hint::black_box(steps);
    Ok(AsOfBench {
        memories,
        history_rows: history,
        instants,
        visibility_ms,
        runs,
    })
}

/// `memories` memories added at the start, then `history - memories` edits of importance
/// (every tenth also of the text) spread evenly over a year, round-robin over the memories.
fn build(path: &Path, memories: usize, history: usize) -> anyhow::Result<()> {
    let mut store = Store::open(path)?;
    let edits = history.saturating_sub(memories);
    store.transaction(|tx| {
        for i in 0..memories {
            let text = format!("memory {i} about topic {}", i % 97);
            let id =
                tx.insert_memory(&NewMemory::new(Kind::Episode, text.clone()), 1.0, START_MS)?;
            let new = serde_json::json!({ "text": text });
            tx.record_history(id, "add", None, Some(&new), "import", None, START_MS)?;
        }
        for e in 0..edits {
            let id = (e % memories.max(1)) as i64 + 1;
            let at = START_MS + 1 + (e as i64 * YEAR_MS) / edits.max(1) as i64;
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub fn print(b: &AsOfBench) {
    out!(
        "\ntime travel ({} memories, {} history rows; medians of {} runs)",
        b.memories,
        b.history_rows,
        b.runs
    );
    out!("  back   changes after   memories changed   reconstruct ms   first page ms");
    for i in &b.instants {
        out!(
            "  {:>4.0}%  {:>13}   {:>16}   {:>14.1}   {:>13.1}",
            i.back * 100.0,
            i.changes_after,
            i.memories_changed,
            i.reconstruct_ms,
            i.list_page_ms
        );
    }
    out!(
        "  every memory's visibility steps: {:.0} ms",
        b.visibility_ms
    );
}
