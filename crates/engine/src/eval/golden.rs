//! The retrieval regression suite: saved ("golden") queries with the memories they should
//! find. A run searches each one (without access bookkeeping), scores R@k and NDCG@k of
//! its top k against the expected ids, stores the results, and flags every query that
//! scores lower than in the previous run. Sleep cycles run the suite before and after
//! themselves when golden queries exist, and their report carries both runs.

use super::metrics::{ndcg_at_k, recall_at_k};
use crate::events::Job;
use crate::retrieve::{Route, ScoreMode, SearchQuery};
use crate::store::{now_ms, GoldenQuery, GoldenResultRow, GoldenRunRow, MemoryFilter, Tx};
use crate::{Error, Result, Somna};
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

const EPS: f64 = 1e-9;

fn options_of(q: &GoldenQuery) -> GoldenOptions {
    serde_json::from_value(q.options.clone()).unwrap_or_default()
}

impl Somna {
    /// Saves a golden query. Every expected id must be a stored memory.
    pub fn golden_add(
        &self,
        query: &str,
        expected: &[i64],
        k: usize,
        options: &GoldenOptions,
    ) -> Result<GoldenQuery> {
        if query.trim().is_empty() {
            return Err(Error::InvalidInput("the query is empty".into()));
        }
        if expected.is_empty() {
            return Err(Error::InvalidInput(
                "a golden query needs at least one expected memory".into(),
            ));
        }
        if k == 0 || k > 1000 {
            return Err(Error::InvalidInput("k must be between 1 and 1000".into()));
        }
        let mut store = self.store();
        let mut ids = expected.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let options = serde_json::to_value(options)?;
        let id = store.transaction(|tx| {
            for id in &ids {
                tx.require_memory(*id)?;
            }
            tx.insert_golden(query.trim(), &ids, k, &options, now_ms())
        })?;
        store.read().get_golden(id)?.ok_or(Error::NotFound { id })
    }

    pub fn golden_list(&self) -> Result<Vec<GoldenQuery>> {
        self.store().read().golden_queries()
    }

    /// Removes a golden query and its past results.
    pub fn golden_remove(&self, id: i64) -> Result<()> {
        if self.store().transaction(|tx| tx.delete_golden(id))? {
            Ok(())
        } else {
            Err(Error::InvalidInput(format!(
                "there is no golden query {id}"
            )))
        }
    }

    /// Runs every golden query, stores the run and compares it with the previous one.
    /// Progress stage "golden"; cancellable between queries (nothing is stored then).
    pub fn golden_run(&self, stage: &str, cycle_id: Option<i64>, job: &Job) -> Result<GoldenRun> {
        let started = std::time::Instant::now();
        let queries = self.golden_list()?;
        let mut rows = Vec::with_capacity(queries.len());
        job.report("golden", 0, queries.len() as u64);
        for (i, g) in queries.iter().enumerate() {
            job.cancel.check()?;
            let opts = options_of(g);
            let mut sq = SearchQuery::new(&g.query);
            sq.k = g.k;
            sq.filter = opts.filter;
            sq.route = opts.route;
            if let Some(m) = opts.mode {
                sq.mode = m;
            }
            let ranked: Vec<i64> = self
                .search_readonly(&sq)?
                .hits
                .iter()
                .take(g.k)
                .map(|h| h.memory.id)
                .collect();
            let as_str: Vec<String> = ranked.iter().map(i64::to_string).collect();
            let want: HashSet<String> = g.expected.iter().map(i64::to_string).collect();
            rows.push(GoldenResultRow {
                query_id: g.id,
                recall: recall_at_k(&as_str, &want, g.k),
                ndcg: ndcg_at_k(&as_str, &want, g.k),
                ranked,
            });
            job.report("golden", i as u64 + 1, queries.len() as u64);
        }
        let run_at = now_ms();
        let mut store = self.store();
        let id = store.transaction(|tx| tx.insert_golden_run(run_at, stage, cycle_id, &rows))?;
        let read = store.read();
        let run = GoldenRunRow {
            id,
            run_at,
            stage: stage.to_string(),
            cycle_id,
        };
        let run = assemble(&read, &run, &queries, rows)?;
        drop(store);
        self.record("golden", started, crate::ledger::Cost::items(queries.len()));
        Ok(run)
    }

    /// The golden runs stored around a sleep cycle (before, after), oldest first.
    pub fn golden_runs_for_cycle(&self, cycle_id: i64) -> Result<Vec<GoldenRun>> {
        let store = self.store();
        let read = store.read();
        runs_for_cycle(&read, cycle_id)
    }

    /// Runs the suite around a sleep cycle when golden queries exist (the run is stored
    /// with the cycle's id); a failure becomes a note of the cycle instead of failing it.
    pub(crate) fn golden_around_sleep(&self, stage: &str, cycle_id: i64, notes: &mut Vec<String>) {
        // The store guard must be gone before the run locks the store again.
        let queries = self.store().read().golden_queries();
        let outcome = queries.and_then(|q| match q.is_empty() {
            true => Ok(()),
            false => self
                .golden_run(stage, Some(cycle_id), &Job::default())
                .map(|_| ()),
        });
        if let Err(e) = outcome {
            notes.push(format!("golden queries ({stage}) failed: {e}"));
        }
    }
}

/// The stored runs of a cycle with their outcomes.
pub(crate) fn runs_for_cycle(read: &Tx<'_>, cycle_id: i64) -> Result<Vec<GoldenRun>> {
    let queries = read.golden_queries()?;
    read.golden_runs_for_cycle(cycle_id)?
        .iter()
        .map(|run| assemble(read, run, &queries, read.golden_results(run.id)?))
        .collect()
}

fn assemble(
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
