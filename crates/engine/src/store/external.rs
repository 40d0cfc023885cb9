//! Finding the writes other processes committed to the same store file (SQLite-specific:
//! a second backend finds them its own way, e.g. LISTEN/NOTIFY). Every change of a memory
//! is one row of `history`, written in the same transaction as the change, so a reader
//! catches up by reading the history rows after the last one it has seen.
//! `PRAGMA data_version` changes only when *another* connection commits, so a poll that
//! finds it unchanged costs two tiny queries and reports nothing.
//!
//! The other tables keep no history, so when the version moved a reader compares cheap
//! marks of them with the ones it saw last ([`Marks`]): clusters by their count, highest id
//! and `updated_at` (every cluster write bumps `updated_at` of the clusters it touches, or
//! creates or clears rows); links by their highest rowid (new links; links removed or
//! re-scored are always written beside a history row of one of their memories, so they
//! arrive as that memory's change); sleep cycles by each row's status and end (a small
//! table: one row per cycle); settings by each key's value (a handful of rows). Like the
//! memories, what this process wrote itself since the previous catch-up is included when
//! another connection committed too.

use super::sql::OptionalExtension;
use super::{Change, Store};
use crate::Result;
use std::collections::BTreeMap;

/// Where a reader stands: the connection's data version, the last history row seen and
/// the marks of the other tables.
#[derive(Debug, Default)]
pub struct ExternalCursor {
    data_version: i64,
    history_id: i64,
    marks: Marks,
}

/// What a reader last saw of the tables without history.
#[derive(Debug, Default, Clone, PartialEq)]
struct Marks {
    /// Count, highest id, highest and summed `updated_at` of `clusters`.
    clusters: (i64, i64, i64, i64),
    /// Highest rowid of `links`.
    links: i64,
    /// Each sleep cycle's status and end.
    cycles: BTreeMap<i64, (String, Option<i64>)>,
    /// Each setting's value.
    settings: BTreeMap<String, String>,
}

/// What other connections changed since a cursor.
#[derive(Debug, Default, PartialEq)]
pub struct ExternalChanges {
    /// The memories changed (id → whether it was added since).
    pub memories: BTreeMap<i64, bool>,
    /// Changes of clusters, links, sleep cycles and settings.
    pub others: Vec<Change>,
}

impl Store {
    /// The cursor of a freshly opened store: everything so far is known.
    pub fn external_cursor(&self) -> Result<ExternalCursor> {
        Ok(ExternalCursor {
            history_id: self.max_history_id()?,
            data_version: self.data_version()?,
            marks: self.marks()?,
        })
    }

    /// What changed since `cursor`, when another connection committed since; moves the
    /// cursor past it. Own writes are included only when another connection committed too.
    pub fn external_changes(&self, cursor: &mut ExternalCursor) -> Result<ExternalChanges> {
        // Read the high-water mark before the version: a commit by another process in
        // between changes the version, so its rows are read below, never skipped.
        let latest = self.max_history_id()?;
        let version = self.data_version()?;
        let mut out = ExternalChanges::default();
        if version == cursor.data_version {
            cursor.history_id = latest;
            return Ok(out);
        }
        cursor.data_version = version;
        let mut max_seen = cursor.history_id;
        let mut stmt = self
            .read()
            .conn()
            .prepare_cached("SELECT id, memory_id, event FROM history WHERE id > ?1 ORDER BY id")?;
        let rows = stmt.query_map([cursor.history_id], |r| {
            Ok((r.get::<i64>(0)?, r.get::<i64>(1)?, r.get::<String>(2)?))
        })?;
        for row in rows {
            let (hid, memory_id, event) = row?;
            max_seen = max_seen.max(hid);
            *out.memories.entry(memory_id).or_insert(false) |= event == "add";
        }
        cursor.history_id = max_seen;
        let marks = self.marks()?;
        out.others = self.changed_since(&cursor.marks, &marks)?;
        cursor.marks = marks;
        Ok(out)
    }

    fn marks(&self) -> Result<Marks> {
        let conn = self.read().conn();
        let clusters = conn.query_row(
            "SELECT COUNT(*), COALESCE(MAX(id), 0), COALESCE(MAX(updated_at), 0),
                    COALESCE(CAST(SUM(updated_at) AS BIGINT), 0) FROM clusters",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        // The order links were made in: SQLite's rowid, Postgres's `seq` column.
        let links = conn.query_row(
            conn.pick(
                "SELECT COALESCE(MAX(rowid), 0) FROM links",
                "SELECT COALESCE(MAX(seq), 0) FROM links",
            ),
            [],
            |r| r.get(0),
        )?;
        let mut stmt = conn.prepare_cached("SELECT id, status, ended_at FROM sleep_cycles")?;
        let cycles = stmt
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
            .collect::<Result<_>>()?;
        // The cluster groups are part of the clusters (whose marks above see them change).
        let mut stmt = conn.prepare_cached("SELECT key, value FROM meta WHERE key != ?1")?;
        let settings = stmt
            .query_map([super::CLUSTER_GROUPS_META], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_>>()?;
        Ok(Marks {
            clusters,
            links,
            cycles,
            settings,
        })
    }

    /// The changes between two marks of the tables without history.
    fn changed_since(&self, before: &Marks, now: &Marks) -> Result<Vec<Change>> {
        let mut out = Vec::new();
        if before.clusters != now.clusters {
            // Created or updated since (removed ones cannot be named: a clear removes them
            // all and creates new ones, which are named).
            let mut stmt = self.read().conn().prepare_cached(
                "SELECT id FROM clusters WHERE id > ?1 OR updated_at >= ?2 ORDER BY id",
            )?;
            let ids = stmt
                .query_map([before.clusters.1, before.clusters.2], |r| r.get(0))?
                .collect::<Result<_>>()?;
            out.push(Change::Clusters { ids });
        }
        if before.links != now.links {
            let conn = self.read().conn();
            let mut stmt = conn.prepare_cached(conn.pick(
                "SELECT src, dst FROM links WHERE rowid > ?1",
                "SELECT src, dst FROM links WHERE seq > ?1",
            ))?;
            let mut ids = std::collections::BTreeSet::new();
            for row in stmt.query_map([before.links], |r| Ok((r.get(0)?, r.get(1)?)))? {
                let (src, dst): (i64, i64) = row?;
                ids.extend([src, dst]);
            }
            out.push(Change::Links {
                ids: ids.into_iter().collect(),
            });
        }
        let cycles: Vec<i64> = now
            .cycles
            .iter()
            .filter(|&(id, row)| before.cycles.get(id) != Some(row))
            .map(|(id, _)| *id)
            .chain(
                before
                    .cycles
                    .keys()
                    .filter(|id| !now.cycles.contains_key(*id))
                    .copied(),
            )
            .collect();
        if !cycles.is_empty() {
            out.push(Change::SleepCycles { ids: cycles });
        }
        let keys: Vec<String> = now
            .settings
            .iter()
            .filter(|&(k, v)| before.settings.get(k) != Some(v))
            .map(|(k, _)| k.clone())
            .chain(
                before
                    .settings
                    .keys()
                    .filter(|k| !now.settings.contains_key(*k))
                    .cloned(),
            )
            .collect();
        if !keys.is_empty() {
            out.push(Change::Settings { keys });
        }
        Ok(super::coalesce(out))
    }

    /// A number that changes when another connection commits and only then: SQLite's
    /// `PRAGMA data_version`; on Postgres, the count of write transactions begun on the
    /// store less this connection's own (see `postgres.rs`).
    fn data_version(&self) -> Result<i64> {
        match &self.backend {
            super::Backend::Sqlite(conn) => {
                Ok(conn.pragma_query_value(None, "data_version", |r| r.get(0))?)
            }
            super::Backend::Postgres(conn) => conn.others_writes(),
        }
    }

    fn max_history_id(&self) -> Result<i64> {
        Ok(self
            .read()
            .conn()
            .query_row("SELECT MAX(id) FROM history", [], |r| {
                r.get::<Option<i64>>(0)
            })
            .optional()?
            .flatten()
            .unwrap_or(0))
    }
}
