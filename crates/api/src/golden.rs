//! Golden queries (saved queries with the memories they should find, run as a regression
//! check) and the cost and latency ledger.

use crate::Api;
use somna_engine::golden::{GoldenOptions, GoldenRun};
use somna_engine::ledger::LedgerGroup;
use somna_engine::store::{GoldenQuery, LedgerSummary};
use somna_engine::{Job, Result};

impl Api {
    /// Saves a golden query: `query` should find `expected` in its top `k`.
    pub fn golden_add(
        &self,
        query: &str,
        expected: &[i64],
        k: usize,
        options: &GoldenOptions,
    ) -> Result<GoldenQuery> {
        self.engine().golden_add(query, expected, k, options)
    }

    pub fn golden_list(&self) -> Result<Vec<GoldenQuery>> {
        self.engine().golden_list()
    }

    pub fn golden_remove(&self, id: i64) -> Result<()> {
        self.engine().golden_remove(id)
    }

    /// Runs every saved query by hand (recorded as the stage "manual").
    pub fn golden_run(&self, job: &Job) -> Result<GoldenRun> {
        self.engine().golden_run("manual", None, job)
    }

    /// The ledger since `since` (Unix ms), grouped by `by`.
    pub fn ledger_summary(&self, since: i64, by: LedgerGroup) -> Result<Vec<LedgerSummary>> {
        self.engine().ledger_summary(since, by)
    }
}
