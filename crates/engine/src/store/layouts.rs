//! Queries on `layouts`: the cached 2D/3D projections, one per (method, dims); and on
//! `layout_history`: every full computation of them, newest [`LAYOUT_HISTORY_KEPT`] per
//! (method, dims), for placing points where they were at a past instant.

use super::sql::{params, OptionalExtension};
use super::{blob_to_vec, vec_to_blob, Change, Tx};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// A cached layout as stored: `params` is the JSON of the parameters that made it, `model`
/// the fitted model's numbers where the method has one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredLayout {
    pub method: String,
    pub dims: usize,
    pub params: String,
    pub ids: Vec<i64>,
    pub coords: Vec<f32>,
    pub model: Option<Vec<f32>>,
    pub computed_at: i64,
    pub placed_incrementally: usize,
}

/// How many full computations of one (method, dims) `layout_history` keeps (the oldest go).
/// At 100K memories in 3D one is about 2 MB.
pub const LAYOUT_HISTORY_KEPT: usize = 32;

/// One full computation of a layout as `layout_history` keeps it: where each memory was
/// placed from `computed_at` until the next computation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutSnapshot {
    pub method: String,
    pub dims: usize,
    pub computed_at: i64,
    pub ids: Vec<i64>,
    pub coords: Vec<f32>,
}

fn ids_to_blob(ids: &[i64]) -> Vec<u8> {
    ids.iter().flat_map(|i| i.to_le_bytes()).collect()
}

fn blob_to_ids(b: &[u8]) -> Option<Vec<i64>> {
    if !b.len().is_multiple_of(8) {
        return None;
    }
    Some(
        b.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
    )
}

impl Tx<'_> {
    /// The full computation of (method, dims) in force at `at`: the newest computed at or
    /// before it, else (an instant before the first) the oldest kept.
    pub fn layout_snapshot_at(
        &self,
        method: &str,
        dims: usize,
        at: i64,
    ) -> Result<Option<LayoutSnapshot>> {
        let row = |sql: &str, args: &[&dyn super::sql::ToArg]| {
            self.conn()
                .query_row(sql, args, |r| {
                    Ok((r.get::<i64>(0)?, r.get::<Vec<u8>>(1)?, r.get::<Vec<u8>>(2)?))
                })
                .optional()
        };
        let dims_i = dims as i64;
        let found = match row(
            "SELECT computed_at, ids, coords FROM layout_history
             WHERE method = ?1 AND dims = ?2 AND computed_at <= ?3
             ORDER BY computed_at DESC LIMIT 1",
            &[&method, &dims_i, &at],
        )? {
            Some(r) => Some(r),
            None => row(
                "SELECT computed_at, ids, coords FROM layout_history
                 WHERE method = ?1 AND dims = ?2 ORDER BY computed_at ASC LIMIT 1",
                &[&method, &dims_i],
            )?,
        };
        let Some((computed_at, ids, coords)) = found else {
            return Ok(None);
        };
        let malformed = || {
            Error::InvalidInput(format!(
                "a kept {method} layout of {computed_at} is malformed"
            ))
        };
        let ids = blob_to_ids(&ids).ok_or_else(malformed)?;
        let coords = blob_to_vec(&coords).ok_or_else(malformed)?;
        if coords.len() != ids.len() * dims {
            return Err(malformed());
        }
        Ok(Some(LayoutSnapshot {
            method: method.to_string(),
            dims,
            computed_at,
            ids,
            coords,
        }))
    }

    /// Every kept computation, by method, dimensions and time: what an export holds.
    pub fn all_layout_snapshots(&self) -> Result<Vec<LayoutSnapshot>> {
        let mut stmt = self.conn().prepare(
            "SELECT method, dims, computed_at, ids, coords FROM layout_history
             ORDER BY method, dims, computed_at",
        )?;
        let mut out = Vec::new();
        stmt.for_each([], |r| {
            let method: String = r.get(0)?;
            let dims = r.get::<i64>(1)? as usize;
            let computed_at: i64 = r.get(2)?;
            let malformed = || {
                Error::InvalidInput(format!(
                    "a kept {method} layout of {computed_at} is malformed"
                ))
            };
            let ids = blob_to_ids(&r.get::<Vec<u8>>(3)?).ok_or_else(malformed)?;
            let coords = blob_to_vec(&r.get::<Vec<u8>>(4)?).ok_or_else(malformed)?;
            out.push(LayoutSnapshot {
                method,
                dims,
                computed_at,
                ids,
                coords,
            });
            Ok(true)
        })?;
        Ok(out)
    }

    /// Keeps `l` (a full computation) in the history, replacing one of the same instant,
    /// then drops all but the newest [`LAYOUT_HISTORY_KEPT`] of its (method, dims).
    pub fn keep_layout_snapshot(&self, l: &LayoutSnapshot) -> Result<()> {
        self.insert_layout_snapshot(
            "ON CONFLICT (method, dims, computed_at) DO UPDATE SET ids = excluded.ids,
                 coords = excluded.coords",
            l,
        )?;
        self.conn().execute(
            "DELETE FROM layout_history WHERE method = ?1 AND dims = ?2 AND computed_at NOT IN
             (SELECT computed_at FROM layout_history WHERE method = ?1 AND dims = ?2
              ORDER BY computed_at DESC LIMIT ?3)",
            params![l.method, l.dims as i64, LAYOUT_HISTORY_KEPT as i64],
        )?;
        Ok(())
    }

    /// Writes an exported computation; one of the same (method, dims, instant) is a
    /// constraint error, not replaced.
    pub fn restore_layout_snapshot(&self, l: &LayoutSnapshot) -> Result<()> {
        self.insert_layout_snapshot("", l)
    }

    /// Inserts `l` into the history; `on_conflict` is what a row of the same instant does
    /// (empty: the insert fails).
    fn insert_layout_snapshot(&self, on_conflict: &str, l: &LayoutSnapshot) -> Result<()> {
        self.note(Change::Layout {
            method: l.method.clone(),
            dims: l.dims,
        })?;
        self.conn().execute(
            &format!(
                "INSERT INTO layout_history (method, dims, computed_at, ids, coords)
                 VALUES (?1, ?2, ?3, ?4, ?5) {on_conflict}"
            ),
            params![
                l.method,
                l.dims as i64,
                l.computed_at,
                ids_to_blob(&l.ids),
                vec_to_blob(&l.coords)
            ],
        )?;
        Ok(())
    }

    pub fn get_layout(&self, method: &str, dims: usize) -> Result<Option<StoredLayout>> {
        let row = self
            .conn()
            .query_row(
                "SELECT params, ids, coords, model, computed_at, placed_incrementally
                 FROM layouts WHERE method = ?1 AND dims = ?2",
                params![method, dims as i64],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<Vec<u8>>(1)?,
                        r.get::<Vec<u8>>(2)?,
                        r.get::<Option<Vec<u8>>>(3)?,
                        r.get::<i64>(4)?,
                        r.get::<i64>(5)?,
                    ))
                },
            )
            .optional()?;
        let Some((params, ids, coords, model, computed_at, placed)) = row else {
            return Ok(None);
        };
        let malformed = || Error::InvalidInput(format!("the cached {method} layout is malformed"));
        if !ids.len().is_multiple_of(8) {
            return Err(malformed());
        }
        let ids: Vec<i64> = ids
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let coords = blob_to_vec(&coords).ok_or_else(malformed)?;
        if coords.len() != ids.len() * dims {
            return Err(malformed());
        }
        let model = match model {
            Some(b) => Some(blob_to_vec(&b).ok_or_else(malformed)?),
            None => None,
        };
        Ok(Some(StoredLayout {
            method: method.to_string(),
            dims,
            params,
            ids,
            coords,
            model,
            computed_at,
            placed_incrementally: placed as usize,
        }))
    }

    /// Every cached layout, by method and dimensions: what an export holds.
    pub fn all_layouts(&self) -> Result<Vec<StoredLayout>> {
        let keys: Vec<(String, i64)> = self
            .conn()
            .prepare("SELECT method, dims FROM layouts ORDER BY method, dims")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_>>()?;
        let mut out = Vec::with_capacity(keys.len());
        for (method, dims) in keys {
            out.extend(self.get_layout(&method, dims as usize)?);
        }
        Ok(out)
    }

    /// Writes an exported layout; one already cached for its (method, dims) is a
    /// constraint error, not replaced.
    pub fn restore_layout(&self, l: &StoredLayout) -> Result<()> {
        self.note(Change::Layout {
            method: l.method.clone(),
            dims: l.dims,
        })?;
        let ids: Vec<u8> = l.ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        self.conn().execute(
            "INSERT INTO layouts
             (method, dims, params, ids, coords, model, computed_at, placed_incrementally)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                l.method,
                l.dims as i64,
                l.params,
                ids,
                vec_to_blob(&l.coords),
                l.model.as_deref().map(vec_to_blob),
                l.computed_at,
                l.placed_incrementally as i64
            ],
        )?;
        Ok(())
    }

    /// Replaces the cached layout of its (method, dims).
    pub fn put_layout(&self, l: &StoredLayout) -> Result<()> {
        self.note(Change::Layout {
            method: l.method.clone(),
            dims: l.dims,
        })?;
        let ids: Vec<u8> = l.ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        self.conn().execute(
            "INSERT INTO layouts
             (method, dims, params, ids, coords, model, computed_at, placed_incrementally)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (method, dims) DO UPDATE SET params = excluded.params,
                 ids = excluded.ids, coords = excluded.coords, model = excluded.model,
                 computed_at = excluded.computed_at,
                 placed_incrementally = excluded.placed_incrementally",
            params![
                l.method,
                l.dims as i64,
                l.params,
                ids,
                vec_to_blob(&l.coords),
                l.model.as_deref().map(vec_to_blob),
                l.computed_at,
                l.placed_incrementally as i64
            ],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn layouts_round_trip_and_replace() {
        let mut store = Store::open_in_memory().unwrap();
        let mut l = super::StoredLayout {
            method: "pca".into(),
            dims: 2,
            params: "{}".into(),
            ids: vec![3, -1, 7],
            coords: vec![0.0, 1.0, 2.0, 3.0, 4.5, -5.0],
            model: Some(vec![1.0, 2.0]),
            computed_at: 42,
            placed_incrementally: 1,
        };
        store.transaction(|tx| tx.put_layout(&l)).unwrap();
        assert_eq!(store.read().get_layout("pca", 2).unwrap().unwrap(), l);
        assert!(store.read().get_layout("pca", 3).unwrap().is_none());
        l.ids.pop();
        l.coords.truncate(4);
        l.model = None;
        store.transaction(|tx| tx.put_layout(&l)).unwrap();
        assert_eq!(store.read().get_layout("pca", 2).unwrap().unwrap(), l);
    }

    fn snapshot(at: i64, x: f32) -> super::LayoutSnapshot {
        super::LayoutSnapshot {
            method: "tsne".into(),
            dims: 3,
            computed_at: at,
            ids: vec![1, 2],
            coords: vec![x, 0.0, 0.0, x, 1.0, 1.0],
        }
    }

    #[test]
    fn the_layout_in_force_at_an_instant_is_the_newest_computed_by_then() {
        let mut store = Store::open_in_memory().unwrap();
        assert!(store
            .read()
            .layout_snapshot_at("tsne", 3, 100)
            .unwrap()
            .is_none());
        for (at, x) in [(100, 1.0), (200, 2.0), (300, 3.0)] {
            store
                .transaction(|tx| tx.keep_layout_snapshot(&snapshot(at, x)))
                .unwrap();
        }
        let at = |t: i64| {
            store
                .read()
                .layout_snapshot_at("tsne", 3, t)
                .unwrap()
                .unwrap()
                .computed_at
        };
        assert_eq!(at(250), 200);
        assert_eq!(at(300), 300);
        assert_eq!(at(10_000), 300);
        // Before the first computation: the oldest kept.
        assert_eq!(at(5), 100);
        assert!(store
            .read()
            .layout_snapshot_at("tsne", 2, 250)
            .unwrap()
            .is_none());
        assert_eq!(
            store
                .read()
                .layout_snapshot_at("tsne", 3, 250)
                .unwrap()
                .unwrap(),
            snapshot(200, 2.0)
        );
    }

    #[test]
    fn only_the_newest_computations_are_kept() {
        let mut store = Store::open_in_memory().unwrap();
        let n = super::LAYOUT_HISTORY_KEPT as i64 + 5;
        for at in 1..=n {
            store
                .transaction(|tx| tx.keep_layout_snapshot(&snapshot(at, at as f32)))
                .unwrap();
        }
        let kept = store.read().all_layout_snapshots().unwrap();
        assert_eq!(kept.len(), super::LAYOUT_HISTORY_KEPT);
        assert_eq!(kept[0].computed_at, 6);
        assert_eq!(kept.last().unwrap().computed_at, n);
    }
}
