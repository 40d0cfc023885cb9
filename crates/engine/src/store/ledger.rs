//! Queries on `ledger`: one row per engine operation (wall time, items, LLM calls, tokens),
//! summarised by operation and period.

use super::sql::params;
use super::{Change, Tx};
use crate::Result;
use serde::{Deserialize, Serialize};

/// One operation as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub at: i64,
    pub op: String,
    pub millis: f64,
    pub items: u64,
    pub llm_calls: u64,
    pub tokens: u64,
}

/// One ledger row as an export holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedLedgerEntry {
    pub id: i64,
    pub at: i64,
    pub op: String,
    pub millis: f64,
    pub items: i64,
    pub llm_calls: i64,
    pub tokens: i64,
}

/// Totals of one group (an operation, a period, or both).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LedgerSummary {
    /// The operation, or `None` when grouping by period only.
    pub op: Option<String>,
    /// Start of the period (Unix ms), or `None` when grouping by operation only.
    pub period_start: Option<i64>,
    pub count: u64,
    pub total_ms: f64,
    pub mean_ms: f64,
    pub max_ms: f64,
    pub items: u64,
    pub llm_calls: u64,
    pub tokens: u64,
}

impl Tx<'_> {
    /// Every ledger row, by id.
    pub fn all_ledger(&self) -> Result<Vec<ExportedLedgerEntry>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, at, op, millis, items, llm_calls, tokens FROM ledger ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ExportedLedgerEntry {
                id: r.get(0)?,
                at: r.get(1)?,
                op: r.get(2)?,
                millis: r.get(3)?,
                items: r.get(4)?,
                llm_calls: r.get(5)?,
                tokens: r.get(6)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Writes exported ledger rows in order: with their ids into an empty ledger (the
    /// store as it was exported), otherwise after the rows already there (a ledger is a
    /// log; the operations this store recorded before the import stay first).
    pub fn restore_ledger(&self, rows: &[ExportedLedgerEntry]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.note(Change::Ledger)?;
        let empty: bool =
            self.conn()
                .query_row("SELECT NOT EXISTS (SELECT 1 FROM ledger)", [], |r| r.get(0))?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO ledger (id, at, op, millis, items, llm_calls, tokens)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for e in rows {
            let id = empty.then_some(e.id);
            stmt.execute(params![
                id,
                e.at,
                e.op,
                e.millis,
                e.items,
                e.llm_calls,
                e.tokens
            ])?;
        }
        Ok(())
    }

    pub fn insert_ledger(&self, entries: &[LedgerEntry]) -> Result<()> {
        self.note(Change::Ledger)?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO ledger (at, op, millis, items, llm_calls, tokens)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for e in entries {
            stmt.execute(params![
                e.at,
                e.op,
                e.millis,
                e.items as i64,
                e.llm_calls as i64,
                e.tokens as i64
            ])?;
        }
        Ok(())
    }

    /// Totals since `since` (Unix ms), grouped by operation when `by_op`, and by periods of
    /// `period_ms` when given; largest total time first within a period.
    pub fn ledger_summary(
        &self,
        since: i64,
        by_op: bool,
        period_ms: Option<i64>,
    ) -> Result<Vec<LedgerSummary>> {
        // Typed NULLs: Postgres reads a bare NULL column as text.
        let period = period_ms.map_or("CAST(NULL AS BIGINT)".to_string(), |p| {
            format!("(at / {p}) * {p}")
        });
        let op = if by_op { "op" } else { "CAST(NULL AS TEXT)" };
        let sql = format!(
            "SELECT {op}, {period}, COUNT(*), SUM(millis), MAX(millis),
                    CAST(SUM(items) AS BIGINT), CAST(SUM(llm_calls) AS BIGINT),
                    CAST(SUM(tokens) AS BIGINT)
             FROM ledger WHERE at >= ?1 GROUP BY 1, 2 ORDER BY 2, 4 DESC"
        );
        let mut stmt = self.conn().prepare(&sql)?;
        let rows = stmt.query_map([since], |r| {
            let count: i64 = r.get(2)?;
            let total: f64 = r.get(3)?;
            Ok(LedgerSummary {
                op: r.get(0)?,
                period_start: r.get(1)?,
                count: count as u64,
                total_ms: total,
                mean_ms: if count > 0 { total / count as f64 } else { 0.0 },
                max_ms: r.get(4)?,
                items: r.get::<i64>(5)? as u64,
                llm_calls: r.get::<i64>(6)? as u64,
                tokens: r.get::<i64>(7)? as u64,
            })
        })?;
        rows.collect::<Result<_>>()
    }
}
