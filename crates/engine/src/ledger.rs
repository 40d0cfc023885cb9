//! The cost and latency ledger: every engine operation (add, import, search, embedding
//! batch, sleep phase, LLM call, projection, golden run) records its wall time, items, LLM
//! calls and tokens. Recording is a push onto an in-memory buffer; the buffer is written in
//! one transaction when it holds [`FLUSH_AT`] entries or right after an operation of
//! [`LONG_OP_MS`] or more (only if the store is free at that moment, so recording never
//! waits for the store), when a summary is read, and when the engine is dropped. A search
//! therefore pays a vector push, not an insert, and a process killed without closing its
//! engine (a desktop app's window killed, a test driver's quit) loses at most the short
//! operations since the last write, never an import, a sleep cycle or a projection.

use crate::store::{LedgerEntry, Store};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Entries buffered before a write is attempted.
pub const FLUSH_AT: usize = 256;

/// An operation that took this long (ms) is written at once: its write costs nothing
/// beside it, and it is the kind of entry a killed process must not lose.
pub const LONG_OP_MS: f64 = 1000.0;

#[derive(Default)]
pub(crate) struct Ledger {
    buf: Mutex<Vec<LedgerEntry>>,
}

impl Ledger {
    pub(crate) fn push(&self, e: LedgerEntry) -> usize {
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
