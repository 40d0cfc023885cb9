//! Queries on `layouts`: the cached 2D/3D projections, one per (method, dims).

use super::{blob_to_vec, vec_to_blob, Change, Tx};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
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

impl Tx<'_> {
    pub fn get_layout(&self, method: &str, dims: usize) -> Result<Option<StoredLayout>> {
        let row = self
            .conn()
            .query_row(
                "SELECT params, ids, coords, model, computed_at, placed_incrementally
                 FROM layouts WHERE method = ?1 AND dims = ?2",
                params![method, dims as i64],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Vec<u8>>(1)?,
                        r.get::<_, Vec<u8>>(2)?,
                        r.get::<_, Option<Vec<u8>>>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
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
            .collect::<rusqlite::Result<_>>()?;
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
        // SQLite dialect: INSERT OR REPLACE (Postgres: ON CONFLICT ... DO UPDATE).
        self.conn().execute(
            "INSERT OR REPLACE INTO layouts
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
}
