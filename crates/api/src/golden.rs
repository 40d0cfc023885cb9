//! Golden queries (saved queries with the memories they should find, run as a regression
//! check) and the cost and latency ledger.

use crate::limits::{GOLDEN_HISTORY, LEDGER_HOURS, SEARCH_K};
use crate::{Api, Filters};
use serde::{Deserialize, Serialize};
use somna_engine::golden::{GoldenEntry, GoldenOptions, GoldenRun};
use somna_engine::ledger::LedgerGroup;
use somna_engine::store::{now_ms, GoldenQuery, LedgerSummary};
use somna_engine::{Job, Result, Route, ScoreMode};

/// A golden query from a search: the query, its search options, and the memories a person
/// marked as the ones it must find in its top `k`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct GoldenAddArgs {
    pub query: String,
    /// Ids of the memories the query must find (at least one; each must exist).
    pub expected: Vec<i64>,
    /// How deep they must be found (1 to 200, default 10).
    pub k: Option<usize>,
    pub filters: Option<Filters>,
    pub mode: Option<ScoreMode>,
    pub route: Option<Route>,
}

/// Which stored golden runs to read.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct GoldenHistoryArgs {
    /// The latest runs to read (1 to 1000, default 50).
    pub limit: Option<usize>,
}

/// The ledger over the last `hours`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct LedgerArgs {
    /// How far back, in hours (1 to 2160, default 24).
    pub hours: Option<usize>,
}

/// The ledger over a window: totals by operation, and by hour and operation.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LedgerReport {
    /// Start of the window (Unix ms).
    pub since: i64,
    /// When the report was read (Unix ms).
    pub until: i64,
    /// One row per operation, largest total time first.
    pub by_op: Vec<LedgerSummary>,
    /// One row per hour and operation, oldest hour first.
    pub by_hour: Vec<LedgerSummary>,
}

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

    /// Saves a golden query from a search and the hits marked as expected.
    pub fn golden_add_from(&self, args: &GoldenAddArgs) -> Result<GoldenQuery> {
        let k = SEARCH_K.check(args.k)?;
        let options = GoldenOptions {
            filter: args.filters.clone().unwrap_or_default().to_filter()?,
            mode: args.mode,
            route: args.route,
        };
        self.golden_add(&args.query, &args.expected, k, &options)
    }

    pub fn golden_list(&self) -> Result<Vec<GoldenQuery>> {
        self.engine().golden_list()
    }

    /// Every golden query with the memories it expects.
    pub fn golden_entries(&self) -> Result<Vec<GoldenEntry>> {
        self.engine().golden_entries()
    }

    pub fn golden_remove(&self, id: i64) -> Result<()> {
        self.engine().golden_remove(id)
    }

    /// Runs every saved query by hand (recorded as the stage "manual").
    pub fn golden_run(&self, job: &Job) -> Result<GoldenRun> {
        self.engine().golden_run("manual", None, job)
    }

    /// The latest stored runs (by hand and around sleep cycles), newest first.
    pub fn golden_history(&self, args: &GoldenHistoryArgs) -> Result<Vec<GoldenRun>> {
        self.engine()
            .golden_history(GOLDEN_HISTORY.check(args.limit)?)
    }

    /// The ledger since `since` (Unix ms), grouped by `by`.
    pub fn ledger_summary(&self, since: i64, by: LedgerGroup) -> Result<Vec<LedgerSummary>> {
        self.engine().ledger_summary(since, by)
    }

    /// The ledger over the last `hours`, by operation and by hour.
    pub fn ledger_report(&self, args: &LedgerArgs) -> Result<LedgerReport> {
        let hours = LEDGER_HOURS.check(args.hours)? as i64;
        let until = now_ms();
        let since = until - hours * 3_600_000;
        Ok(LedgerReport {
            since,
            until,
            by_op: self.ledger_summary(since, LedgerGroup::Op)?,
            by_hour: self.ledger_summary(since, LedgerGroup::Hour)?,
        })
    }
}
