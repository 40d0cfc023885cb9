//! The façade's cost-and-latency ledger methods over the buffer in `crate::ledger`.

use super::Somna;
use crate::ledger::{Cost, LedgerGroup, FLUSH_AT, LONG_OP_MS};
use crate::store::{now_ms, LedgerEntry, LedgerSummary};
use crate::Result;
use std::time::Instant;

impl Somna {
    /// Records one operation that started at `started`. Never blocks on the store.
    pub fn record(&self, op: &str, started: Instant, cost: Cost) {
        self.record_ms(op, started.elapsed().as_secs_f64() * 1000.0, cost);
    }

    /// Records one operation that took `millis`.
    pub fn record_ms(&self, op: &str, millis: f64, cost: Cost) {
        let n = self.ledger.push(LedgerEntry {
            at: now_ms(),
            op: op.to_string(),
            millis,
            items: cost.items,
            llm_calls: cost.llm_calls,
            tokens: cost.tokens,
        });
        if n >= FLUSH_AT || millis >= LONG_OP_MS {
            if let Some(mut store) = self.try_store() {
                // A failed write keeps the entries for the next flush.
                let _ = self.ledger.flush(&mut store);
            }
        }
    }

    /// Writes the buffered ledger entries now.
    pub fn flush_ledger(&self) -> Result<()> {
        self.ledger.flush(&mut self.store())
    }

    /// Totals since `since` (Unix ms), by operation, or by day or hour (and operation).
    pub fn ledger_summary(&self, since: i64, by: LedgerGroup) -> Result<Vec<LedgerSummary>> {
        let mut store = self.store();
        self.ledger.flush(&mut store)?;
        let read = store.read();
        match by {
            LedgerGroup::Op => read.ledger_summary(since, true, None),
            LedgerGroup::Day => read.ledger_summary(since, true, Some(86_400_000)),
            LedgerGroup::Hour => read.ledger_summary(since, true, Some(3_600_000)),
        }
    }
}
