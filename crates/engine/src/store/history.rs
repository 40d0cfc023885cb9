//! Queries on `history`: every change of a memory (as mem0's `history()`).

use super::Tx;
use crate::Result;
use rusqlite::params;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HistoryEntry {
    pub id: i64,
    pub memory_id: i64,
    /// add, update, delete, restore, hard_delete, state
    pub event: String,
    /// The fields before the change (JSON object of the changed fields), if any.
    pub old_value: Option<serde_json::Value>,
    pub new_value: Option<serde_json::Value>,
    /// Who made the change: "user", "import", "ingest", "sleep:<cycle>", ...
    pub actor: String,
    pub cause: Option<String>,
    pub created_at: i64,
}

impl Tx<'_> {
    #[allow(clippy::too_many_arguments)]
    pub fn record_history(
        &self,
        memory_id: i64,
        event: &str,
        old_value: Option<&serde_json::Value>,
        new_value: Option<&serde_json::Value>,
        actor: &str,
        cause: Option<&str>,
        now: i64,
    ) -> Result<()> {
        self.writing()?;
        self.conn()
            .prepare_cached(
                "INSERT INTO history (memory_id, event, old_value, new_value, actor, cause, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                memory_id,
                event,
                old_value.map(|v| v.to_string()),
                new_value.map(|v| v.to_string()),
                actor,
                cause,
                now
            ])?;
        Ok(())
    }

    pub fn history(&self, memory_id: i64) -> Result<Vec<HistoryEntry>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, memory_id, event, old_value, new_value, actor, cause, created_at
             FROM history WHERE memory_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([memory_id], |r| {
            let old: Option<String> = r.get(3)?;
            let new: Option<String> = r.get(4)?;
            Ok(HistoryEntry {
                id: r.get(0)?,
                memory_id: r.get(1)?,
                event: r.get(2)?,
                old_value: old.and_then(|s| serde_json::from_str(&s).ok()),
                new_value: new.and_then(|s| serde_json::from_str(&s).ok()),
                actor: r.get(5)?,
                cause: r.get(6)?,
                created_at: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Tx<'_> {
    pub fn all_history(&self) -> Result<Vec<HistoryEntry>> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .conn()
                .prepare("SELECT DISTINCT memory_id FROM history ORDER BY memory_id")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.history(id)?);
        }
        out.sort_by_key(|h| h.id);
        Ok(out)
    }

    /// Inserts an exported history entry as it was.
    pub fn restore_history(&self, h: &HistoryEntry) -> Result<()> {
        self.writing()?;
        self.conn().execute(
            "INSERT INTO history (id, memory_id, event, old_value, new_value, actor, cause, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                h.id,
                h.memory_id,
                h.event,
                h.old_value.as_ref().map(|v| v.to_string()),
                h.new_value.as_ref().map(|v| v.to_string()),
                h.actor,
                h.cause,
                h.created_at
            ],
        )?;
        Ok(())
    }
}
