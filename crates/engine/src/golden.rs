//! The retrieval regression suite's data and scoring: saved ("golden") queries, the
//! outcome of a run (R@k and NDCG@k of its top k against the expected ids, compared with the
//! previous run) and the runs stored around a sleep cycle. Running the queries is the
//! façade's (`Somna::golden_run`), which searches; sleep reports carry the runs.

use crate::memory::Memory;
use crate::metrics::{ndcg_at_k, recall_at_k};
use crate::retrieve::SearchQuery;
use crate::retrieve::{Route, ScoreMode};
use crate::store::{GoldenQuery, GoldenResultRow, GoldenRunRow, MemoryFilter, Tx};
use crate::Result;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Search options a golden query keeps (everything else takes the defaults).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoldenOptions {
    pub filter: MemoryFilter,
    pub mode: Option<ScoreMode>,
    pub route: Option<Route>,
}

/// One query's outcome in a run, with the previous run's for comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GoldenOutcome {
    pub query_id: i64,
    pub query: String,
    pub k: usize,
    pub expected: Vec<i64>,
    pub ranked: Vec<i64>,
    pub recall: f64,
    pub ndcg: f64,
    pub previous_recall: Option<f64>,
    pub previous_ndcg: Option<f64>,
    /// Lower R@k or NDCG@k than in the previous run.
    pub regressed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GoldenRun {
    pub id: i64,
    pub run_at: i64,
    /// manual, before_sleep or after_sleep.
    pub stage: String,
    pub cycle_id: Option<i64>,
    pub outcomes: Vec<GoldenOutcome>,
    pub mean_recall: f64,
    pub mean_ndcg: f64,
    pub regressions: usize,
}

/// A saved query with the memories it expects, as they are now (an expected memory that was
/// hard-deleted is missing from `memories`; a soft-deleted one has `deleted_at`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GoldenEntry {
    pub golden: GoldenQuery,
    pub memories: Vec<Memory>,
}

const EPS: f64 = 1e-9;

/// The search options a saved query keeps.
pub fn options_of(q: &GoldenQuery) -> GoldenOptions {
    serde_json::from_value(q.options.clone()).unwrap_or_default()
}

/// The search a saved query runs: its text, k and kept options (the weights are the
/// caller's).
pub fn search_query_of(q: &GoldenQuery) -> SearchQuery {
    let opts = options_of(q);
    let mut sq = SearchQuery::new(&q.query);
    sq.k = q.k;
    sq.filter = opts.filter;
    sq.route = opts.route;
    if let Some(m) = opts.mode {
        sq.mode = m;
    }
    sq
}

/// One query's result: the ids it ranked in its top k, scored against the expected ones.
pub fn score(g: &GoldenQuery, ranked: Vec<i64>) -> GoldenResultRow {
    let as_str: Vec<String> = ranked.iter().map(i64::to_string).collect();
    let want: HashSet<String> = g.expected.iter().map(i64::to_string).collect();
    GoldenResultRow {
        query_id: g.id,
        recall: recall_at_k(&as_str, &want, g.k),
        ndcg: ndcg_at_k(&as_str, &want, g.k),
        ranked,
    }
}

/// The stored runs of a cycle with their outcomes.
pub fn runs_for_cycle(read: &Tx<'_>, cycle_id: i64) -> Result<Vec<GoldenRun>> {
    let queries = read.golden_queries()?;
    read.golden_runs_for_cycle(cycle_id)?
        .iter()
        .map(|run| assemble(read, run, &queries, read.golden_results(run.id)?))
        .collect()
}

/// The latest `limit` stored runs with their outcomes, newest first.
pub fn recent_runs(read: &Tx<'_>, limit: usize) -> Result<Vec<GoldenRun>> {
    let queries = read.golden_queries()?;
    read.golden_runs(limit)?
        .iter()
        .map(|run| assemble(read, run, &queries, read.golden_results(run.id)?))
        .collect()
}

/// A stored run with its outcomes, each compared with the query's previous result.
pub fn assemble(
    read: &Tx<'_>,
    run: &GoldenRunRow,
    queries: &[GoldenQuery],
    rows: Vec<GoldenResultRow>,
) -> Result<GoldenRun> {
    let mut outcomes = Vec::with_capacity(rows.len());
    for r in rows {
        let Some(g) = queries.iter().find(|q| q.id == r.query_id) else {
            continue;
        };
        let prev = read.previous_golden_result(r.query_id, run.id)?;
        let regressed = prev
            .as_ref()
            .is_some_and(|p| r.recall + EPS < p.recall || r.ndcg + EPS < p.ndcg);
        outcomes.push(GoldenOutcome {
            query_id: g.id,
            query: g.query.clone(),
            k: g.k,
            expected: g.expected.clone(),
            ranked: r.ranked,
            recall: r.recall,
            ndcg: r.ndcg,
            previous_recall: prev.as_ref().map(|p| p.recall),
            previous_ndcg: prev.as_ref().map(|p| p.ndcg),
            regressed,
        });
    }
    let n = outcomes.len().max(1) as f64;
    Ok(GoldenRun {
        id: run.id,
        run_at: run.run_at,
        stage: run.stage.clone(),
        cycle_id: run.cycle_id,
        mean_recall: outcomes.iter().map(|o| o.recall).sum::<f64>() / n,
        mean_ndcg: outcomes.iter().map(|o| o.ndcg).sum::<f64>() / n,
        regressions: outcomes.iter().filter(|o| o.regressed).count(),
        outcomes,
    })
}
