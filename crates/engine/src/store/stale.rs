//! Queries on `fact_contradictions` and `fact_restated`: what the second rule of "stale"
//! reads (a fact not confirmed in N days while a newer fact contradicts it; see
//! [`super::Superseded::Stale`] and migration 0011).

use super::sql::params;
use super::sql::Dialect;
use super::{Change, Tx};
use crate::Result;

/// A current fact of a speaker that may contradict another (see `current_facts_opening`).
#[derive(Debug, Clone, PartialEq)]
pub struct FactRow {
    pub id: i64,
    pub text: String,
    /// When it held from: `valid_from`, else `occurred_at`, else `created_at`.
    pub from: i64,
}

/// A recorded contradiction: `fact_id` is contradicted by the newer `by_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Contradiction {
    pub fact_id: i64,
    pub by_id: i64,
    pub found_at: i64,
}

/// How often a fact was said again, and when last (event time): a row of `fact_restated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Restatement {
    pub memory_id: i64,
    pub count: i64,
    pub last_at: i64,
}

impl Tx<'_> {
    /// Every recorded contradiction, for an export.
    pub fn all_contradictions(&self) -> Result<Vec<Contradiction>> {
        let mut stmt = self.conn().prepare(
            "SELECT fact_id, by_id, found_at FROM fact_contradictions ORDER BY fact_id, by_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(Contradiction {
                fact_id: r.get(0)?,
                by_id: r.get(1)?,
                found_at: r.get(2)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Every fact's re-statements, for an export.
    pub fn all_restatements(&self) -> Result<Vec<Restatement>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT memory_id, count, last_at FROM fact_restated ORDER BY memory_id")?;
        let rows = stmt.query_map([], |r| {
            Ok(Restatement {
                memory_id: r.get(0)?,
                count: r.get(1)?,
                last_at: r.get(2)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Puts back an exported contradiction as it was (an import of a Somna export).
    pub fn restore_contradiction(&self, c: &Contradiction) -> Result<()> {
        self.note(Change::MemoriesUpdated {
            ids: vec![c.fact_id],
        })?;
        self.conn().execute(
            "INSERT INTO fact_contradictions (fact_id, by_id, found_at) VALUES (?1, ?2, ?3)",
            params![c.fact_id, c.by_id, c.found_at],
        )?;
        Ok(())
    }

    /// Puts back an exported re-statement record as it was (an import of a Somna export).
    pub fn restore_restatement(&self, r: &Restatement) -> Result<()> {
        self.note(Change::MemoriesUpdated {
            ids: vec![r.memory_id],
        })?;
        self.conn().execute(
            "INSERT INTO fact_restated (memory_id, count, last_at) VALUES (?1, ?2, ?3)",
            params![r.memory_id, r.count, r.last_at],
        )?;
        Ok(())
    }

    /// `who`'s facts that are neither deleted nor superseded, other than `except`, whose
    /// text starts with one of `openings` (exactly, case included).
    pub fn current_facts_opening(
        &self,
        who: &str,
        openings: &[String],
        except: i64,
    ) -> Result<Vec<FactRow>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT m.id, m.text, COALESCE(m.valid_from, m.occurred_at, m.created_at)
             FROM memories m
             WHERE m.who = ?1 AND m.kind = 'fact' AND m.deleted_at IS NULL
               AND m.superseded_by IS NULL AND m.id != ?2
               AND substr(m.text, 1, length(CAST(?3 AS TEXT))) = ?3",
        )?;
        let mut out = Vec::new();
        for opening in openings {
            let rows = stmt.query_map(params![who, except, opening], |r| {
                Ok(FactRow {
                    id: r.get(0)?,
                    text: r.get(1)?,
                    from: r.get(2)?,
                })
            })?;
            for row in rows {
                out.push(row?);
            }
        }
        Ok(out)
    }

    /// Records that fact `fact_id` is contradicted by the newer fact `by_id`.
    pub fn insert_contradiction(&self, fact_id: i64, by_id: i64, now: i64) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![fact_id] })?;
        self.conn().execute(
            "INSERT INTO fact_contradictions (fact_id, by_id, found_at)
             VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            params![fact_id, by_id, now],
        )?;
        Ok(())
    }

    /// The contradictions of fact `id`, both ways (it contradicted, or contradicting).
    pub fn contradictions_of(&self, id: i64) -> Result<Vec<Contradiction>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT fact_id, by_id, found_at FROM fact_contradictions
             WHERE fact_id = ?1 OR by_id = ?1 ORDER BY fact_id, by_id",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(Contradiction {
                fact_id: r.get(0)?,
                by_id: r.get(1)?,
                found_at: r.get(2)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Records that fact `id` was said again at `at` (event time): it is confirmed then.
    pub fn record_restatement(&self, id: i64, at: i64) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![id] })?;
        let conn = self.conn();
        conn.execute(
            &format!(
                "INSERT INTO fact_restated (memory_id, count, last_at) VALUES (?1, 1, ?2)
                 ON CONFLICT (memory_id) DO UPDATE SET count = fact_restated.count + 1,
                     last_at = {}",
                conn.greatest("fact_restated.last_at", "excluded.last_at")
            ),
            params![id, at],
        )?;
        Ok(())
    }

    /// When fact `id` was last confirmed: the latest of when it held from, its last
    /// re-statement and its last retrieval. `None` when there is no such memory.
    pub fn confirmed_at(&self, id: i64) -> Result<Option<i64>> {
        use super::sql::OptionalExtension;
        self.conn()
            .query_row(
                &format!(
                    "SELECT {} FROM memories m WHERE m.id = ?1",
                    confirmed(self.conn().dialect())
                ),
                [id],
                |r| r.get(0),
            )
            .optional()
    }
}

/// SQL (over `memories m`) of when a fact was last confirmed: the latest of when it held
/// from, its last re-statement (event time) and its last retrieval.
pub(crate) fn confirmed(d: Dialect) -> String {
    let greatest = match d {
        Dialect::Sqlite => "MAX",
        Dialect::Postgres => "GREATEST",
    };
    format!(
        "{greatest}(COALESCE(m.valid_from, m.occurred_at, m.created_at), \
         COALESCE((SELECT r.last_at FROM fact_restated r WHERE r.memory_id = m.id), 0), \
         COALESCE((SELECT x.last_at FROM memory_access x WHERE x.memory_id = m.id), 0))"
    )
}
