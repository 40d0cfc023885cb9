//! Queries on `history`: every change of a memory (as mem0's `history()`).

use super::sql::params;
use super::{Change, Tx};
use crate::Result;
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

const HISTORY_COLUMNS: &str =
    "id, memory_id, event, old_value, new_value, actor, cause, created_at";

fn entry(r: &super::sql::Row<'_>) -> Result<HistoryEntry> {
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
}

impl Tx<'_> {
    /// Records one change of memory `memory_id`. Its history is part of the memory as the
    /// views show it, so this announces the memory as updated (merged away when the same
    /// transaction added or removed it), as other processes' history rows are announced.
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
        self.note(Change::MemoriesUpdated {
            ids: vec![memory_id],
        })?;
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
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {HISTORY_COLUMNS} FROM history WHERE memory_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([memory_id], entry)?;
        rows.collect::<Result<_>>()
    }

    /// Every change recorded after `at` (Unix ms), oldest first, as far as time travel to
    /// `at` needs it: each entry's old values, not its new ones (`new_value` is `None`, and
    /// `actor` and `cause` are empty). Read through the `history_time` index (migration
    /// 0008), so the cost is that of the changes since `at`, not of the whole history.
    pub fn history_since(&self, at: i64) -> Result<Vec<HistoryEntry>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT id, memory_id, event, old_value, NULL, '', NULL, created_at FROM history
             WHERE created_at > ?1 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map([at], entry)?;
        rows.collect::<Result<_>>()
    }

    /// [`Tx::history_since`] for the memories that existed at `at`: without the entries of
    /// memories created after `at` (in the store now: they did not exist then, whatever
    /// their history says) and without `add` entries (creation is decided by `created_at`).
    /// A scrubber early in a store's life asks for an instant before most of its memories:
    /// this reads the changes of the few that existed, not of all.
    pub fn history_since_of_existing(&self, at: i64) -> Result<Vec<HistoryEntry>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT h.id, h.memory_id, h.event, h.old_value, NULL, '', NULL, h.created_at
             FROM history h
             WHERE h.created_at > ?1 AND h.event <> 'add'
               AND h.memory_id NOT IN (SELECT id FROM memories WHERE created_at > ?1)
             ORDER BY h.created_at, h.id",
        )?;
        let rows = stmt.query_map([at], entry)?;
        rows.collect::<Result<_>>()
    }

    /// When each memory was added and by whom (the history's `add` entries), oldest first.
    pub fn add_times(&self) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.conn().prepare(
            "SELECT created_at, actor FROM history WHERE event = 'add' ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_>>()
    }

    /// The first and last times anything was recorded (memories added, changed, operations
    /// run), or `None` for an empty store.
    pub fn history_span(&self) -> Result<Option<(i64, i64)>> {
        let (first, last): (Option<i64>, Option<i64>) = self.conn().query_row(
            "SELECT MIN(t), MAX(t) FROM (
                 SELECT MIN(created_at) AS t FROM history UNION ALL SELECT MAX(created_at) FROM history
                 UNION ALL SELECT MIN(created_at) FROM memories UNION ALL SELECT MAX(updated_at) FROM memories
                 UNION ALL SELECT MAX(COALESCE(undone_at, ended_at, started_at)) FROM sleep_cycles)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(first.zip(last))
    }
}

impl Tx<'_> {
    pub fn all_history(&self) -> Result<Vec<HistoryEntry>> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .conn()
                .prepare("SELECT DISTINCT memory_id FROM history ORDER BY memory_id")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_>>()?
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
        self.note(Change::MemoriesUpdated {
            ids: vec![h.memory_id],
        })?;
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

#[cfg(test)]
mod tests {
    use super::super::{Change, Message, Store};
    use crate::memory::{Kind, NewMemory};

    #[test]
    fn writes_to_history_or_the_message_log_alone_are_announced() {
        let mut store = Store::open_in_memory().unwrap();
        let (id, message) = store
            .transaction(|tx| {
                let id = tx.insert_memory(&NewMemory::new(Kind::Episode, "kept"), 1.0, 0)?;
                let m = Message {
                    role: "user".into(),
                    speaker: None,
                    text: "kept".into(),
                    session: None,
                    occurred_at: None,
                    external_id: None,
                    metadata: serde_json::json!({}),
                };
                Ok((id, tx.insert_message("c", &m, 0)?.unwrap()))
            })
            .unwrap();
        let rx = store.changes().subscribe();
        let changes = |rx: &std::sync::mpsc::Receiver<_>| -> Vec<Change> {
            rx.try_iter()
                .map(|e: super::super::ChangeEvent| e.change)
                .collect()
        };

        store
            .transaction(|tx| tx.record_history(id, "state", None, None, "sleep:1", None, 0))
            .unwrap();
        assert_eq!(
            changes(&rx),
            vec![Change::MemoriesUpdated { ids: vec![id] }]
        );

        store
            .transaction(|tx| tx.link_message(message, id))
            .unwrap();
        assert_eq!(
            changes(&rx),
            vec![Change::Messages {
                conversations: vec!["c".into()]
            }]
        );

        assert_eq!(
            store
                .transaction(|tx| tx.delete_history_by("sleep:1"))
                .unwrap(),
            1
        );
        assert_eq!(
            changes(&rx),
            vec![Change::MemoriesUpdated { ids: vec![id] }]
        );
        // Nothing deleted, nothing announced.
        store
            .transaction(|tx| tx.delete_history_by("sleep:1"))
            .unwrap();
        assert!(changes(&rx).is_empty());

        let entry = super::HistoryEntry {
            id: 99,
            memory_id: id,
            event: "update".into(),
            old_value: None,
            new_value: None,
            actor: "import".into(),
            cause: None,
            created_at: 0,
        };
        store.transaction(|tx| tx.restore_history(&entry)).unwrap();
        assert_eq!(
            changes(&rx),
            vec![Change::MemoriesUpdated { ids: vec![id] }]
        );
    }
}
