//! The engine's shared state as the façade lends it to a subsystem for one call: the store
//! and the vector index behind their locks, and the embedder. Subsystems take these (or a
//! context struct built from them) instead of the façade, so they never reach back up.

use crate::embed::Embedder;
use crate::index::VectorIndex;
use crate::store::{MemoryFilter, Store};
use crate::Result;
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard};

#[derive(Clone, Copy)]
pub(crate) struct Handles<'a> {
    pub store: &'a Mutex<Store>,
    pub index: &'a RwLock<VectorIndex>,
    pub embedder: &'a dyn Embedder,
}

impl<'a> Handles<'a> {
    pub fn store(&self) -> MutexGuard<'a, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The index, its rows holding every vector (what the subsystems lent these read).
    pub fn index_read(&self) -> Result<RwLockReadGuard<'a, VectorIndex>> {
        crate::index::read_with_vectors(self.index)
    }

    pub fn embedder(&self) -> &'a dyn Embedder {
        self.embedder
    }

    /// Ids and vectors (row-major) of every visible memory that has an embedding. Takes the
    /// store lock for the id list only and the index read lock for the copy.
    pub fn visible_vectors(&self) -> Result<(Vec<i64>, Vec<f32>)> {
        let mut ids = self.store().read().filter_ids(&MemoryFilter::default())?;
        ids.sort_unstable();
        let index = self.index_read()?;
        let d = self.embedder.dim();
        let mut kept = Vec::with_capacity(ids.len());
        let mut x = Vec::with_capacity(ids.len() * d);
        for id in ids {
            if let Some(v) = index.vector(id) {
                kept.push(id);
                x.extend_from_slice(v);
            }
        }
        Ok((kept, x))
    }
}
