//! Queries on `meta`: the store's settings, one text value per key.

use super::sql::OptionalExtension;
use super::{Change, Tx};
use crate::Result;
use std::collections::BTreeMap;

impl Tx<'_> {
    pub fn get_meta(&self, key: &str) -> Result<Option<String>> {
        self.conn()
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()
    }

    /// Every setting, by key: what an export holds.
    pub fn all_meta(&self) -> Result<BTreeMap<String, String>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT key, value FROM meta ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_>>()
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.note(Change::Settings {
            keys: vec![key.to_string()],
        })?;
        self.write_meta(key, value)
    }

    /// Writes a meta value that belongs to another change of the same transaction (the
    /// cluster groups of a clustering, announced by its `Change::Clusters`), so it is not
    /// announced as a change of settings.
    pub(crate) fn set_meta_of_change(&self, key: &str, value: &str) -> Result<()> {
        self.write_meta(key, value)
    }

    fn write_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )?
            .execute([key, value])?;
        Ok(())
    }
}
