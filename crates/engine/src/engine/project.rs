//! The façade's projection methods: compute, cache and incrementally extend layouts of the
//! memories in 2 or 3 dimensions (`crate::project` does the work).

use super::Somna;
use crate::events::Job;
use crate::ledger::Cost;
use crate::project::{self, Layout, ProjectionMethod, ProjectionParams};
use crate::Result;
use std::time::Instant;

impl Somna {
    /// Projects every visible memory afresh, aligns the result to the cached layout of the
    /// same method and dimensions, and caches it. Cancellable; reports progress.
    pub fn project(&self, params: &ProjectionParams, job: &Job) -> Result<Layout> {
        let started = Instant::now();
        let layout = project::project(&self.handles(), params, job)?;
        self.record("project", started, Cost::items(layout.ids.len()));
        Ok(layout)
    }

    /// The cached layout of `method` in `dims` dimensions, with memories added since placed
    /// without a recomputation and removed ones dropped; computed in full if none is cached.
    pub fn layout(&self, method: ProjectionMethod, dims: usize, job: &Job) -> Result<Layout> {
        let started = Instant::now();
        let (layout, computed) = project::layout(&self.handles(), method, dims, job)?;
        if computed {
            self.record("project", started, Cost::items(layout.ids.len()));
        }
        Ok(layout)
    }
}
