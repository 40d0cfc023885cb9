//! Queries on `sleep_cycles`, and the few memory-level writes a sleep cycle (and its undo)
//! makes: one column at a time, so an undo can put back exactly what was there.

use super::sql::{params, OptionalExtension};
use super::{Change, Tx};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One row of `sleep_cycles` as stored: a sleep cycle (`op` = "sleep") or a curation
/// (`op` = "merge", "pin", …; see migration 0007). Also how the log is exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleRow {
    pub id: i64,
    pub op: String,
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub trigger: String,
    pub status: String,
    pub phase_stats: serde_json::Value,
    pub created_ids: Vec<i64>,
    pub changed: serde_json::Value,
    pub forgotten_ids: Vec<i64>,
    /// When the operation was undone (`status` "undone"); `None` for rows undone before
    /// migration 0008, whose notes say when.
    pub undone_at: Option<i64>,
}

/// Columns a logged operation (a sleep cycle or a curation) may change, one at a time.
const LOGGED_FIELDS: &[&str] = &[
    "last_accessed",
    "importance",
    "state",
    "pinned",
    "tags",
    "deleted_at",
    "cluster",
];

fn row(r: &super::sql::Row<'_>) -> Result<CycleRow> {
    let json = |i: usize| -> Result<serde_json::Value> {
        let s: String = r.get(i)?;
        serde_json::from_str(&s)
            .map_err(|e| Error::Internal(format!("column {i} of a sleep cycle is not JSON: {e}")))
    };
    let ids =
        |i: usize| -> Result<Vec<i64>> { Ok(serde_json::from_value(json(i)?).unwrap_or_default()) };
    Ok(CycleRow {
        id: r.get(0)?,
        op: r.get(9)?,
        started_at: r.get(1)?,
        ended_at: r.get(2)?,
        trigger: r.get(3)?,
        status: r.get(4)?,
        phase_stats: json(5)?,
        created_ids: ids(6)?,
        changed: json(7)?,
        forgotten_ids: ids(8)?,
        undone_at: r.get(10)?,
    })
}

const CYCLE_COLUMNS: &str =
    "id, started_at, ended_at, trigger, status, phase_stats, created_ids, changed, forgotten_ids, op, undone_at";

impl Tx<'_> {
    pub fn insert_cycle(&self, started_at: i64, trigger: &str) -> Result<i64> {
        self.insert_operation("sleep", started_at, trigger)
    }

    /// Starts a row of the operation log (`running`); `op` is "sleep" or a curation.
    pub fn insert_operation(&self, op: &str, started_at: i64, trigger: &str) -> Result<i64> {
        let id: i64 = self.conn().query_row(
            "INSERT INTO sleep_cycles (op, started_at, trigger, status)
             VALUES (?1, ?2, ?3, 'running') RETURNING id",
            params![op, started_at, trigger],
            |r| r.get(0),
        )?;
        self.note(Change::SleepCycles { ids: vec![id] })?;
        Ok(id)
    }

    pub fn save_cycle(&self, c: &CycleRow) -> Result<()> {
        self.note(Change::SleepCycles { ids: vec![c.id] })?;
        self.conn().execute(
            "UPDATE sleep_cycles SET ended_at = ?2, status = ?3, phase_stats = ?4,
                created_ids = ?5, changed = ?6, forgotten_ids = ?7, undone_at = ?8
             WHERE id = ?1",
            params![
                c.id,
                c.ended_at,
                c.status,
                c.phase_stats.to_string(),
                serde_json::to_string(&c.created_ids)?,
                c.changed.to_string(),
                serde_json::to_string(&c.forgotten_ids)?,
                c.undone_at,
            ],
        )?;
        Ok(())
    }

    pub fn get_cycle(&self, id: i64) -> Result<Option<CycleRow>> {
        self.conn()
            .query_row(
                &format!("SELECT {CYCLE_COLUMNS} FROM sleep_cycles WHERE id = ?1"),
                [id],
                row,
            )
            .optional()
    }

    /// The whole operation log (sleep cycles and curations, undone ones too), by id: what
    /// an export holds.
    pub fn all_operations(&self) -> Result<Vec<CycleRow>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CYCLE_COLUMNS} FROM sleep_cycles ORDER BY id"
        ))?;
        let rows = stmt.query_map([], row)?;
        rows.collect::<Result<_>>()
    }

    /// Writes an exported row of the operation log as it was, id included; an id already
    /// taken is a constraint error (nothing is replaced).
    pub fn restore_operation(&self, c: &CycleRow) -> Result<()> {
        self.note(Change::SleepCycles { ids: vec![c.id] })?;
        self.conn().execute(
            &format!("INSERT INTO sleep_cycles ({CYCLE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
            params![
                c.id,
                c.started_at,
                c.ended_at,
                c.trigger,
                c.status,
                c.phase_stats.to_string(),
                serde_json::to_string(&c.created_ids)?,
                c.changed.to_string(),
                serde_json::to_string(&c.forgotten_ids)?,
                c.op,
                c.undone_at,
            ],
        )?;
        Ok(())
    }

    /// The latest sleep cycles, newest first.
    pub fn list_cycles(&self, limit: usize) -> Result<Vec<CycleRow>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CYCLE_COLUMNS} FROM sleep_cycles WHERE op = 'sleep' ORDER BY id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([super::sql::count(limit)], row)?;
        rows.collect::<Result<_>>()
    }

    /// The latest curations, newest first.
    pub fn list_curations(&self, limit: usize) -> Result<Vec<CycleRow>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CYCLE_COLUMNS} FROM sleep_cycles WHERE op != 'sleep' ORDER BY id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([super::sql::count(limit)], row)?;
        rows.collect::<Result<_>>()
    }

    /// The latest operations named `op`, newest first.
    pub fn list_operations(&self, op: &str, limit: usize) -> Result<Vec<CycleRow>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CYCLE_COLUMNS} FROM sleep_cycles WHERE op = ?1 ORDER BY id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![op, super::sql::count(limit)], row)?;
        rows.collect::<Result<_>>()
    }

    /// Cycles left `running` by a process that died; marks them `interrupted`.
    pub fn interrupt_running_cycles(&self) -> Result<Vec<i64>> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .conn()
                .prepare("SELECT id FROM sleep_cycles WHERE status = 'running' ORDER BY id")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_>>()?
        };
        self.note(Change::SleepCycles { ids: ids.clone() })?;
        self.conn().execute(
            "UPDATE sleep_cycles SET status = 'interrupted' WHERE status = 'running'",
            [],
        )?;
        Ok(ids)
    }

    /// The operations (sleep cycles and curations) after `id` that are not undone, oldest
    /// first.
    pub fn later_live_cycles(&self, id: i64) -> Result<Vec<CycleRow>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CYCLE_COLUMNS} FROM sleep_cycles WHERE id > ?1 AND status != 'undone' ORDER BY id"
        ))?;
        let rows = stmt.query_map([id], row)?;
        rows.collect::<Result<_>>()
    }

    /// The operations whose effect changed after `at`: ended (or, unfinished, started)
    /// after it, or undone after it; oldest first. Time travel reverts them.
    pub fn operations_since(&self, at: i64) -> Result<Vec<CycleRow>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CYCLE_COLUMNS} FROM sleep_cycles
             WHERE COALESCE(ended_at, started_at) > ?1 OR (status = 'undone' AND (undone_at IS NULL OR undone_at > ?1))
             ORDER BY id"
        ))?;
        let rows = stmt.query_map([at], row)?;
        rows.collect::<Result<_>>()
    }

    /// The instant the last committed forget phase decayed importance to: its cycle's
    /// "now" (`config.now_ms` of a replayed or reviewed cycle), else its start.
    pub fn last_decay_at(&self) -> Result<Option<i64>> {
        let conn = self.conn();
        conn.query_row(
            conn.pick(
                "SELECT MAX(COALESCE(json_extract(phase_stats, '$.config.now_ms'), started_at))
                 FROM sleep_cycles
                 WHERE op = 'sleep' AND status != 'undone'
                   AND json_extract(phase_stats, '$.decayed') = 1",
                "SELECT MAX(COALESCE(CAST(CAST(phase_stats AS JSONB) #>> '{config,now_ms}' AS BIGINT),
                                     started_at))
                 FROM sleep_cycles
                 WHERE op = 'sleep' AND status != 'undone'
                   AND CAST(phase_stats AS JSONB) -> 'decayed' = 'true'",
            ),
            [],
            |r| r.get(0),
        )
    }

    /// Memories that a live (not soft-deleted) memory of `kind` derives from. Rolling
    /// conversation summaries (ingest) do not count: a sleep cycle still consolidates.
    pub fn derived_targets(&self, kind: crate::memory::Kind) -> Result<HashSet<i64>> {
        let conn = self.conn();
        // From the memories of `kind` to their links, not from every derived link to its
        // memory: SQLite's planner otherwise starts from the links (90,000 at 100K
        // memories) and looks each source up, even for a kind no memory has. CROSS JOIN
        // is how SQLite is told the order; Postgres plans it itself.
        let mut stmt = conn.prepare(&format!(
            "SELECT DISTINCT l.dst FROM memories s {} links l
               ON l.src = s.id AND l.kind = 'derived_from'
             WHERE s.kind = ?1 AND s.deleted_at IS NULL AND {} IS NULL",
            conn.pick("CROSS JOIN", "JOIN"),
            conn.json_int("s.metadata", "$.conversation_window")
        ))?;
        let rows = stmt.query_map([kind.as_str()], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Sets one column of a memory that logged operations change (sleep cycles and
    /// curations, see `LOGGED_FIELDS`) to a JSON value (number, text, bool, array for
    /// `tags`, or null), leaving `updated_at` alone, so an undo puts back exactly what
    /// was there.
    pub fn set_logged_field(&self, id: i64, field: &str, value: &serde_json::Value) -> Result<()> {
        if !LOGGED_FIELDS.contains(&field) {
            return Err(Error::InvalidInput(format!(
                "a logged operation cannot change {field:?}"
            )));
        }
        if field == "cluster" {
            self.note(Change::MemoriesUpdated { ids: vec![id] })?;
            return self.set_membership(id, value);
        }
        self.note(match (field, value) {
            ("deleted_at", serde_json::Value::Number(_)) => {
                Change::MemoriesRemoved { ids: vec![id] }
            }
            _ => Change::MemoriesUpdated { ids: vec![id] },
        })?;
        let v: super::sql::Value = match value {
            serde_json::Value::Null => super::sql::Value::Null,
            serde_json::Value::String(s) => super::sql::Value::Text(s.clone()),
            serde_json::Value::Bool(b) if field == "pinned" => {
                super::sql::Value::Integer(*b as i64)
            }
            serde_json::Value::Array(_) if field == "tags" => {
                super::sql::Value::Text(value.to_string())
            }
            serde_json::Value::Number(n) if field == "importance" => {
                super::sql::Value::Real(n.as_f64().unwrap_or_default())
            }
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => super::sql::Value::Integer(i),
                None => super::sql::Value::Real(n.as_f64().unwrap_or_default()),
            },
            other => {
                return Err(Error::InvalidInput(format!(
                    "not a value of {field}: {other}"
                )))
            }
        };
        if field == "last_accessed" {
            // Kept beside the access count in `memory_access` (migration 0006).
            let last_at = match v {
                super::sql::Value::Null => None,
                super::sql::Value::Integer(t) => Some(t),
                _ => {
                    return Err(Error::InvalidInput(format!(
                        "last_accessed is a time in Unix ms or null, not {value}"
                    )))
                }
            };
            return self.set_last_access(id, last_at);
        }
        self.conn()
            .prepare_cached(&format!("UPDATE memories SET {field} = ?2 WHERE id = ?1"))?
            .execute(params![id, v])?;
        Ok(())
    }

    /// Episodes (not deleted, not forgotten) that no live summary derives from.
    pub fn unconsolidated_episodes(&self) -> Result<usize> {
        let conn = self.conn();
        let n: i64 = conn.query_row(
            &format!(
                "SELECT COUNT(*) FROM memories e
                 WHERE e.kind = 'episode' AND e.deleted_at IS NULL AND e.state != 'forgotten'
                   AND NOT EXISTS (SELECT 1 FROM links l JOIN memories s ON s.id = l.src
                       WHERE l.dst = e.id AND l.kind = 'derived_from' AND s.kind = 'summary'
                         AND s.deleted_at IS NULL AND {} IS NULL)",
                conn.json_int("s.metadata", "$.conversation_window")
            ),
            [],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Removes the history entries written by `actor` (an undone cycle's); announces their
    /// memories as updated (see [`Tx::record_history`]).
    pub fn delete_history_by(&self, actor: &str) -> Result<usize> {
        self.writing()?;
        let ids: Vec<i64> = self
            .conn()
            .prepare_cached("DELETE FROM history WHERE actor = ?1 RETURNING memory_id")?
            .query_map([actor], |r| r.get(0))?
            .collect::<Result<_>>()?;
        let removed = ids.len();
        if removed > 0 {
            self.note(Change::MemoriesUpdated { ids })?;
        }
        Ok(removed)
    }

    /// Ids of the latest `limit` cycles that changed, forgot or consolidated memory `id`,
    /// newest first. The reports' JSON is searched by SQLite, so only those cycles need
    /// to be read in full.
    pub fn cycles_touching(&self, id: i64, limit: usize) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(conn.pick(
            "SELECT c.id FROM (SELECT id, changed, created_ids, forgotten_ids FROM sleep_cycles
                                WHERE op = 'sleep' ORDER BY id DESC LIMIT ?2) c
             WHERE EXISTS (SELECT 1 FROM json_each(c.forgotten_ids) WHERE value = ?1)
                OR EXISTS (SELECT 1 FROM json_each(c.changed)
                           WHERE json_extract(value, '$.memory_id') = ?1)
                OR EXISTS (SELECT 1 FROM links l
                           WHERE l.dst = ?1 AND l.kind = 'derived_from'
                             AND l.src IN (SELECT value FROM json_each(c.created_ids)))
             ORDER BY c.id DESC",
            "SELECT c.id FROM (SELECT id, changed, created_ids, forgotten_ids FROM sleep_cycles
                                WHERE op = 'sleep' ORDER BY id DESC LIMIT ?2) c
             WHERE CAST(c.forgotten_ids AS JSONB) @> jsonb_build_array(CAST(?1 AS BIGINT))
                OR CAST(c.changed AS JSONB)
                   @> jsonb_build_array(jsonb_build_object('memory_id', CAST(?1 AS BIGINT)))
                OR EXISTS (SELECT 1 FROM links l
                           WHERE l.dst = ?1 AND l.kind = 'derived_from'
                             AND l.src IN (SELECT CAST(value AS BIGINT) FROM
                                 jsonb_array_elements_text(CAST(c.created_ids AS JSONB))))
             ORDER BY c.id DESC",
        ))?;
        let rows = stmt.query_map(params![id, super::sql::count(limit)], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }
}
