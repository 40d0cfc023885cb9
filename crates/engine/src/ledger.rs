//! The cost and latency ledger: every engine operation (add, import, search, embedding
//! batch, sleep phase, LLM call, projection, golden run) records its wall time, items, LLM
//! calls and tokens. Recording is a push onto an in-memory buffer; the buffer is written in
//! one transaction when it holds [`FLUSH_AT`] entries (only if the store is free at that
//! moment, so recording never waits for the store), when a summary is read, and when the
//! engine is dropped. A search therefore pays a vector push, not an insert.

use crate::store::{now_ms, LedgerEntry, LedgerSummary, Store};
use crate::{Error, Result, Somna};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Instant;

/// Entries buffered before a write is attempted.
pub const FLUSH_AT: usize = 256;

#[derive(Default)]
pub(crate) struct Ledger {
    buf: Mutex<Vec<LedgerEntry>>,
}

impl Ledger {
    fn push(&self, e: LedgerEntry) -> usize {
        let mut buf = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        buf.push(e);
        buf.len()
    }

    /// Writes the buffered entries; on failure they are kept for the next attempt.
    pub(crate) fn flush(&self, store: &mut Store) -> Result<()> {
        let entries = std::mem::take(&mut *self.buf.lock().unwrap_or_else(|p| p.into_inner()));
        if entries.is_empty() {
            return Ok(());
        }
        if let Err(e) = store.transaction(|tx| tx.insert_ledger(&entries)) {
            let mut buf = self.buf.lock().unwrap_or_else(|p| p.into_inner());
            let newer = std::mem::replace(&mut *buf, entries);
            buf.extend(newer);
            return Err(e);
        }
        Ok(())
    }
}

/// How `somna ledger` groups the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerGroup {
    Op,
    Day,
    Hour,
}

impl std::str::FromStr for LedgerGroup {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "op" => Ok(Self::Op),
            "day" => Ok(Self::Day),
            "hour" => Ok(Self::Hour),
            other => Err(Error::InvalidInput(format!(
                "unknown grouping {other:?}; expected op, day or hour"
            ))),
        }
    }
}

/// What one operation cost, beyond its wall time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    pub items: u64,
    pub llm_calls: u64,
    pub tokens: u64,
}

impl Cost {
    pub fn items(n: usize) -> Self {
        Self {
            items: n as u64,
            ..Default::default()
        }
    }
}

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
        if n >= FLUSH_AT {
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
