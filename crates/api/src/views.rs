//! What the visual views read: store statistics, point attributes, layouts, the link graph
//! around memories, concept clusters, a memory's sleep history, and the export.

use crate::limits::{GRAPH_DEPTH, GRAPH_LIMIT};
use crate::Api;
use serde::{Deserialize, Serialize};
use somna_engine::ingest::ExportDoc;
use somna_engine::points::{MemorySleepEvent, Neighbourhood, PointAttributes};
use somna_engine::store::{LayoutSnapshot, Store};
use somna_engine::{
    ClusterInfo, ClusterMerge, ClusterReport, Error, Job, Layout, LiquidParams, LiquidStep,
    ProjectionMethod, ProjectionParams, Result, Stats,
};
use std::collections::HashMap;
use std::path::Path;

/// The layout of one projection method in 2 or 3 dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct LayoutKey {
    pub method: ProjectionMethod,
    pub dims: usize,
}

/// Compute a layout: the cached one with new memories placed incrementally, or (`full`) a
/// recomputation aligned to the previous one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct LayoutRequest {
    pub method: ProjectionMethod,
    pub dims: usize,
    #[serde(default)]
    pub full: bool,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LayoutSummary {
    pub method: ProjectionMethod,
    pub dims: usize,
    pub points: usize,
    pub placed_incrementally: usize,
    pub computed_at: i64,
}

/// A layout's ids and row-major coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutCoords {
    pub ids: Vec<i64>,
    pub dims: usize,
    pub coords: Vec<f32>,
}

/// The layout of one projection method as it was at a past instant (the time scrubber's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct LayoutAsOf {
    pub method: ProjectionMethod,
    pub dims: usize,
    /// The instant (Unix ms).
    pub at: i64,
}

impl LayoutAsOf {
    pub fn key(&self) -> LayoutKey {
        LayoutKey {
            method: self.method,
            dims: self.dims,
        }
    }
}

/// `current`'s memories where the full computation `then` placed them; a memory `then` did
/// not hold (placed after it) keeps its current place. Both are in one frame: each
/// computation is aligned to the one before it.
pub fn positions_then(current: &LayoutCoords, then: &LayoutSnapshot) -> LayoutCoords {
    let d = current.dims;
    let row_then: HashMap<i64, usize> = if then.dims == d {
        then.ids
            .iter()
            .enumerate()
            .map(|(r, &id)| (id, r))
            .collect()
    } else {
        HashMap::new()
    };
    let mut coords = current.coords.clone();
    for (r, id) in current.ids.iter().enumerate() {
        if let Some(&t) = row_then.get(id) {
            coords[r * d..(r + 1) * d].copy_from_slice(&then.coords[t * d..(t + 1) * d]);
        }
    }
    LayoutCoords {
        ids: current.ids.clone(),
        dims: d,
        coords,
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct NeighbourhoodRequest {
    /// Start here; empty: the most linked memories.
    #[serde(default)]
    pub seeds: Vec<i64>,
    /// Hops, 1 to 4.
    pub depth: usize,
    /// Nodes, 1 to 2000.
    pub limit: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct ClusterRequest {
    /// Clusters to make; left out, chosen from the store's size.
    pub k: Option<usize>,
}

pub(crate) fn check_dims(dims: usize) -> Result<()> {
    if dims == 2 || dims == 3 {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "dims must be 2 or 3 (got {dims})"
        )))
    }
}

/// The layout saved in `store` for `key`, read without the engine (the app reads it this
/// way while the engine is still opening).
pub fn stored_layout(store: &Store, key: LayoutKey) -> Result<Option<LayoutCoords>> {
    check_dims(key.dims)?;
    Ok(store
        .read()
        .get_layout(key.method.as_str(), key.dims)?
        .map(|c| LayoutCoords {
            ids: c.ids,
            dims: c.dims,
            coords: c.coords,
        }))
}

/// Point attributes read from `store` without the engine (see [`stored_layout`]).
pub fn stored_points(store: &Store) -> Result<PointAttributes> {
    somna_engine::points::attributes(store)
}

impl Api {
    pub fn stats(&self) -> Result<Stats> {
        self.engine().stats()
    }

    /// Every speaker name in the store.
    pub fn actors(&self) -> Vec<String> {
        self.engine().actors()
    }

    pub fn point_attributes(&self) -> Result<PointAttributes> {
        self.engine().point_attributes()
    }

    /// The link graph around memories.
    pub fn neighbourhood(&self, req: &NeighbourhoodRequest) -> Result<Neighbourhood> {
        let depth = GRAPH_DEPTH.check(Some(req.depth))?;
        let limit = GRAPH_LIMIT.check(Some(req.limit))?;
        self.engine().neighbourhood(&req.seeds, depth, limit)
    }

    /// The store's span in time and its imports and operations (for a time scrubber).
    pub fn timeline(&self) -> Result<somna_engine::Timeline> {
        self.engine().timeline()
    }

    /// Every memory's visibility over time (for scrubbing a view).
    pub fn visibility_steps(&self) -> Result<somna_engine::VisibilitySteps> {
        self.engine().visibility_steps()
    }

    /// The sleep cycles that touched a memory (the latest 200).
    pub fn memory_sleep_history(&self, id: i64) -> Result<Vec<MemorySleepEvent>> {
        self.engine().memory_sleep_history(id, 200)
    }

    pub fn cluster(&self, req: &ClusterRequest, job: &Job) -> Result<ClusterReport> {
        self.engine().cluster(req.k, job)
    }

    /// [`Api::cluster`], then, with the chat backend, the clusters named by the LLM
    /// endpoint. An endpoint that fails leaves the extractive labels, and the report says so.
    pub fn cluster_with(
        &self,
        req: &ClusterRequest,
        backend: &crate::sleep::Backend,
        job: &Job,
    ) -> Result<ClusterReport> {
        let mut report = self.cluster(req, job)?;
        let crate::sleep::Backend::Chat(config) = backend else {
            return Ok(report);
        };
        let chat = somna_engine::sleep::chat::ChatCompressor::new(config.clone());
        match self.engine().name_clusters_with(&chat) {
            Ok(_) => {
                let names: std::collections::HashMap<i64, String> = self
                    .clusters()?
                    .into_iter()
                    .map(|c| (c.id, c.label))
                    .collect();
                for c in &mut report.clusters {
                    if let Some(n) = names.get(&c.id) {
                        c.label = n.clone();
                    }
                }
                report.named_by = Some(somna_engine::compress::Compressor::name(&chat).to_string());
            }
            Err(e) => {
                report.note = Some(format!(
                    "the LLM endpoint could not name the clusters ({e}); the labels are extractive"
                ))
            }
        }
        Ok(report)
    }

    pub fn clusters(&self) -> Result<Vec<ClusterInfo>> {
        self.engine().clusters()
    }

    pub fn cluster_merges(&self) -> Result<Vec<ClusterMerge>> {
        self.engine().cluster_merges()
    }

    /// The ids of up to `limit` members of a cluster, the closest to its centroid first.
    pub fn cluster_members(&self, cluster_id: i64, limit: usize) -> Result<Vec<i64>> {
        self.engine().cluster_members(cluster_id, limit)
    }

    /// One step of liquid clustering with `params` (the app's loop runs them in the
    /// [`crate::Workspace`]).
    pub fn liquid_step(&self, params: &LiquidParams, job: &Job) -> Result<LiquidStep> {
        self.engine().liquid_step_with(params, job)
    }

    /// Computes a layout from scratch with `params`, aligned to the previous one.
    pub fn project(&self, params: &ProjectionParams, job: &Job) -> Result<Layout> {
        check_dims(params.dims)?;
        self.engine().project(params, job)
    }

    /// The cached layout of `key`, with memories added since placed incrementally.
    pub fn cached_layout(&self, key: LayoutKey, job: &Job) -> Result<Layout> {
        check_dims(key.dims)?;
        self.engine().layout(key.method, key.dims, job)
    }

    /// The layout saved in the store for `key`, if any.
    pub fn stored_layout(&self, key: LayoutKey) -> Result<Option<LayoutCoords>> {
        self.engine().with_store(|s| stored_layout(s, key))
    }

    /// The full computation of `req`'s layout in force at `req.at` (the newest computed by
    /// then, else the oldest kept), if any is kept.
    pub fn layout_snapshot_at(&self, req: LayoutAsOf) -> Result<Option<LayoutSnapshot>> {
        check_dims(req.dims)?;
        self.engine().with_store(|s| {
            s.read()
                .layout_snapshot_at(req.method.as_str(), req.dims, req.at)
        })
    }

    /// The whole store as a Somna export document.
    pub fn export(&self) -> Result<ExportDoc> {
        self.engine().export()
    }

    /// Writes the export to `path` (a leading `~/` is the home directory), all or nothing
    /// (see [`somna_engine::ingest::write_export`]); returns how many memories it holds.
    pub fn export_to(&self, path: &str) -> Result<usize> {
        let doc = self.export()?;
        somna_engine::ingest::write_export(&doc, &expand_home(path), true)?;
        Ok(doc.memories.len())
    }
}

/// `~/rest` → `$HOME/rest`; anything else as given.
pub fn expand_home(p: &str) -> std::path::PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => std::path::PathBuf::from(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_two_or_three_dimensions_are_laid_out() {
        assert!(check_dims(3).is_ok());
        let e = check_dims(4).unwrap_err();
        assert!(e.to_string().contains("dims must be 2 or 3 (got 4)"), "{e}");
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn points_take_their_place_then_and_later_ones_keep_theirs() {
        let current = LayoutCoords {
            ids: vec![1, 2, 3],
            dims: 2,
            coords: vec![10.0, 10.0, 20.0, 20.0, 30.0, 30.0],
        };
        // Computed when only 1 and 2 (and 9, since forgotten) existed.
        let then = LayoutSnapshot {
            method: "pca".into(),
            dims: 2,
            computed_at: 5,
            ids: vec![2, 1, 9],
            coords: vec![2.0, -2.0, 1.0, -1.0, 9.0, 9.0],
        };
        let p = positions_then(&current, &then);
        assert_eq!(p.ids, vec![1, 2, 3]);
        assert_eq!(p.coords, vec![1.0, -1.0, 2.0, -2.0, 30.0, 30.0]);
        // A computation in other dimensions moves nothing.
        let flat = LayoutSnapshot {
            dims: 3,
            coords: vec![0.0; 9],
            ..then
        };
        assert_eq!(positions_then(&current, &flat), current);
    }
}
