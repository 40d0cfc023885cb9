//! Finding the writes other processes committed to the same store file (SQLite-specific:
//! a second backend finds them its own way, e.g. LISTEN/NOTIFY). Every change of a memory
//! is one row of `history`, written in the same transaction as the change, so a reader
//! catches up by reading the history rows after the last one it has seen.
//! `PRAGMA data_version` changes only when *another* connection commits, so a poll that
//! finds it unchanged costs two tiny queries and reports nothing.

use super::Store;
use crate::Result;
use rusqlite::OptionalExtension;
use std::collections::BTreeMap;

/// Where a reader stands: the connection's data version and the last history row seen.
#[derive(Debug, Default)]
pub struct ExternalCursor {
    data_version: i64,
    history_id: i64,
}

impl Store {
    /// The cursor of a freshly opened store: everything so far is known.
    pub fn external_cursor(&self) -> Result<ExternalCursor> {
        Ok(ExternalCursor {
            history_id: self.max_history_id()?,
            data_version: self.data_version()?,
        })
    }

    /// The memories changed since `cursor` (id → whether it was added since), when another
    /// connection committed since; moves the cursor past them. Own writes are included
    /// only when another connection committed too.
    pub fn external_changes(&self, cursor: &mut ExternalCursor) -> Result<BTreeMap<i64, bool>> {
        // Read the high-water mark before the version: a commit by another process in
        // between changes the version, so its rows are read below, never skipped.
        let latest = self.max_history_id()?;
        let version = self.data_version()?;
        let mut seen: BTreeMap<i64, bool> = BTreeMap::new();
        if version == cursor.data_version {
            cursor.history_id = latest;
            return Ok(seen);
        }
        cursor.data_version = version;
        let mut max_seen = cursor.history_id;
        let mut stmt = self
            .sqlite()
            .prepare_cached("SELECT id, memory_id, event FROM history WHERE id > ?1 ORDER BY id")?;
        let rows = stmt.query_map([cursor.history_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        for row in rows {
            let (hid, memory_id, event) = row?;
            max_seen = max_seen.max(hid);
            *seen.entry(memory_id).or_insert(false) |= event == "add";
        }
        cursor.history_id = max_seen;
        Ok(seen)
    }

    fn data_version(&self) -> Result<i64> {
        Ok(self
            .sqlite()
            .pragma_query_value(None, "data_version", |r| r.get(0))?)
    }

    fn max_history_id(&self) -> Result<i64> {
        Ok(self
            .sqlite()
            .query_row("SELECT MAX(id) FROM history", [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .optional()?
            .flatten()
            .unwrap_or(0))
    }
}
