//! Projection of the memories' embeddings to 2D or 3D for the app's views: PCA, t-SNE and
//! UMAP (both on landmarks + placement), aligned to the previous layout (orthogonal
//! Procrustes), cached in the store with the parameters that made it, and extended
//! incrementally as memories arrive (PCA: the fitted basis; t-SNE and UMAP: the weighted
//! mean of already-placed neighbours, for t-SNE then a short local optimisation of the new
//! point).

pub mod align;
pub mod knn;
pub mod landmarks;
pub mod pca;
pub mod syrk;
pub mod tsne;
pub mod umap;

use crate::events::Job;
use crate::handles::Handles;
use crate::store::{MemoryFilter, StoredLayout};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ProjectionMethod {
    Pca,
    Tsne,
    Umap,
}

impl ProjectionMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectionMethod::Pca => "pca",
            ProjectionMethod::Tsne => "tsne",
            ProjectionMethod::Umap => "umap",
        }
    }
}

impl std::str::FromStr for ProjectionMethod {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "pca" => Ok(Self::Pca),
            "tsne" | "t-sne" => Ok(Self::Tsne),
            "umap" => Ok(Self::Umap),
            other => Err(Error::InvalidInput(format!(
                "unknown projection method {other:?} (pca, tsne or umap)"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectionParams {
    pub method: ProjectionMethod,
    /// 2 or 3.
    pub dims: usize,
    /// t-SNE only.
    pub perplexity: f64,
    /// t-SNE gradient steps; UMAP epochs (0: umap-learn's rule, 500 up to 10K points,
    /// else 200).
    pub iterations: usize,
    /// t-SNE and UMAP run on at most this many points; the others are placed near them.
    pub landmarks: usize,
    pub seed: u64,
}

impl Default for ProjectionParams {
    fn default() -> Self {
        Self {
            method: ProjectionMethod::Pca,
            dims: 3,
            perplexity: 30.0,
            iterations: 1000,
            landmarks: 3000,
            seed: 42,
        }
    }
}

impl ProjectionParams {
    /// The defaults of `method`: UMAP's epochs follow umap-learn and its landmarks are
    /// more than t-SNE's (its graph and SGD cost far less per point).
    pub fn new(method: ProjectionMethod, dims: usize) -> Self {
        let d = Self::default();
        let (iterations, landmarks) = match method {
            ProjectionMethod::Umap => (0, umap::LANDMARKS),
            _ => (d.iterations, d.landmarks),
        };
        Self {
            method,
            dims,
            iterations,
            landmarks,
            ..d
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidInput(m));
        if !(2..=3).contains(&self.dims) {
            return bad(format!("a layout has 2 or 3 dimensions, not {}", self.dims));
        }
        if self.method == ProjectionMethod::Tsne {
            if !(self.perplexity > 0.0 && self.perplexity.is_finite()) {
                return bad(format!(
                    "perplexity must be positive, not {}",
                    self.perplexity
                ));
            }
            if self.iterations == 0 || self.landmarks == 0 {
                return bad("t-SNE needs at least one iteration and one landmark".into());
            }
        }
        if self.method == ProjectionMethod::Umap && self.landmarks == 0 {
            return bad("UMAP needs at least one landmark".into());
        }
        Ok(())
    }
}

/// Positions of memories in 2D or 3D.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub method: ProjectionMethod,
    pub dims: usize,
    pub ids: Vec<i64>,
    /// Row-major, `ids.len() × dims`.
    pub coords: Vec<f32>,
    pub params: ProjectionParams,
    pub computed_at: i64,
    /// Memories placed after the full computation, without recomputing.
    pub placed_incrementally: usize,
}

impl Layout {
    fn to_stored(&self, model: Option<Vec<f32>>) -> Result<StoredLayout> {
        Ok(StoredLayout {
            method: self.method.as_str().into(),
            dims: self.dims,
            params: serde_json::to_string(&self.params)?,
            ids: self.ids.clone(),
            coords: self.coords.clone(),
            model,
            computed_at: self.computed_at,
            placed_incrementally: self.placed_incrementally,
        })
    }
}

/// Full computation of `params` over the n×d rows `x`: coordinates and the fitted model.
pub fn compute(
    params: &ProjectionParams,
    x: &[f32],
    d: usize,
    job: &Job,
) -> Result<(Vec<f32>, Option<Vec<f32>>)> {
    let n = x.len() / d.max(1);
    if n == 0 {
        return Ok((Vec::new(), None));
    }
    match params.method {
        ProjectionMethod::Pca => {
            let pca = pca::Pca::fit(x, d, params.dims, job)?;
            Ok((pca.transform(x), Some(pca.to_model())))
        }
        ProjectionMethod::Tsne => {
            let run = tsne::tsne(x, d, params, job)?;
            Ok((run.coords, None))
        }
        ProjectionMethod::Umap => Ok((umap::umap(x, d, params, job)?, None)),
    }
}

/// Projects every visible memory afresh, aligns the result to the cached layout of the
/// same method and dimensions, and caches it. Cancellable; reports progress.
pub(crate) fn project(h: &Handles<'_>, params: &ProjectionParams, job: &Job) -> Result<Layout> {
    params.validate()?;
    let (ids, x) = h.visible_vectors()?;
    let d = h.embedder().dim();
    let (mut coords, model) = compute(params, &x, d, job)?;
    drop(x);
    let prev = h
        .store()
        .read()
        .get_layout(params.method.as_str(), params.dims)?;
    if let Some(p) = prev {
        align::align(&ids, &mut coords, &p.ids, &p.coords, params.dims);
    }
    let layout = Layout {
        method: params.method,
        dims: params.dims,
        ids,
        coords,
        params: params.clone(),
        computed_at: crate::store::now_ms(),
        placed_incrementally: 0,
    };
    let stored = layout.to_stored(model)?;
    // Kept in the history too, so the time scrubber can show the points where they were.
    let snapshot = crate::store::LayoutSnapshot {
        method: stored.method.clone(),
        dims: stored.dims,
        computed_at: stored.computed_at,
        ids: stored.ids.clone(),
        coords: stored.coords.clone(),
    };
    h.store().transaction(|tx| {
        tx.put_layout(&stored)?;
        tx.keep_layout_snapshot(&snapshot)
    })?;
    Ok(layout)
}

/// The cached layout of `method` in `dims` dimensions, with memories added since placed
/// without a recomputation and removed ones dropped; computed in full if none is cached
/// (then the flag is true).
pub(crate) fn layout(
    h: &Handles<'_>,
    method: ProjectionMethod,
    dims: usize,
    job: &Job,
) -> Result<(Layout, bool)> {
    let cached = h.store().read().get_layout(method.as_str(), dims)?;
    let Some(cached) = cached else {
        return Ok((project(h, &ProjectionParams::new(method, dims), job)?, true));
    };
    let params: ProjectionParams = serde_json::from_str(&cached.params)?;
    let d = h.embedder().dim();
    let pca_model = match method {
        ProjectionMethod::Pca => match cached
            .model
            .as_deref()
            .and_then(|m| pca::Pca::from_model(m, d, dims))
        {
            Some(p) => Some(p),
            None => return Ok((project(h, &params, job)?, true)),
        },
        ProjectionMethod::Tsne | ProjectionMethod::Umap => None,
    };
    let visible: HashSet<i64> = h
        .store()
        .read()
        .filter_ids(&MemoryFilter::default())?
        .into_iter()
        .collect();
    let mut ids = Vec::with_capacity(visible.len());
    let mut coords = Vec::with_capacity(visible.len() * dims);
    for (r, id) in cached.ids.iter().enumerate() {
        if visible.contains(id) {
            ids.push(*id);
            coords.extend_from_slice(&cached.coords[r * dims..(r + 1) * dims]);
        }
    }
    let placed: HashSet<i64> = ids.iter().copied().collect();
    let mut fresh: Vec<i64> = visible
        .iter()
        .copied()
        .filter(|id| !placed.contains(id))
        .collect();
    fresh.sort_unstable();
    let removed = cached.ids.len() - ids.len();
    let mut added = 0;
    job.report("place", 0, fresh.len() as u64);
    for chunk in fresh.chunks(256) {
        job.cancel.check()?;
        // The index read lock is taken per chunk so writers are never held up for long.
        let index = h.index_read()?;
        let mut vectors = Vec::with_capacity(chunk.len() * d);
        let mut chunk_ids = Vec::with_capacity(chunk.len());
        for &id in chunk {
            if let Some(v) = index.vector(id) {
                chunk_ids.push(id);
                vectors.extend_from_slice(v);
            }
        }
        let new_coords = match &pca_model {
            Some(p) => p.transform(&vectors),
            None => {
                let row_of: std::collections::HashMap<i64, usize> =
                    ids.iter().enumerate().map(|(r, &id)| (id, r)).collect();
                let mut out = Vec::with_capacity(chunk_ids.len() * dims);
                let rows = ids.len();
                for (k, v) in vectors.chunks_exact(d).enumerate() {
                    let pass = |id: i64| row_of.contains_key(&id);
                    let (near, _) = index.search(v, landmarks::PLACE_NEIGHBOURS, Some(&pass), None);
                    let nn: Vec<(&[f32], f32)> = near
                        .iter()
                        .map(|&(id, s)| {
                            let r = row_of[&id];
                            (&coords[r * dims..(r + 1) * dims], s)
                        })
                        .collect();
                    let start = landmarks::weighted_mean(nn.iter().copied(), dims);
                    if method == ProjectionMethod::Umap {
                        out.extend(start);
                        continue;
                    }
                    // Repulsion sample: evenly strided rows, offset per point (deterministic).
                    let stride = (rows / tsne::REFINE_SAMPLE).max(1);
                    let others: Vec<&[f32]> = (0..rows.min(tsne::REFINE_SAMPLE))
                        .map(|i| ((i * stride + k) % rows) * dims)
                        .map(|o| &coords[o..o + dims])
                        .collect();
                    out.extend(tsne::refine(&start, &nn, &others, tsne::REFINE_STEPS));
                }
                out
            }
        };
        drop(index);
        ids.extend(&chunk_ids);
        coords.extend(new_coords);
        added += chunk_ids.len();
        job.report("place", added as u64, fresh.len() as u64);
    }
    let layout = Layout {
        method,
        dims,
        ids,
        coords,
        params,
        computed_at: cached.computed_at,
        placed_incrementally: cached.placed_incrementally + added,
    };
    if added > 0 || removed > 0 {
        let stored = layout.to_stored(cached.model)?;
        h.store().transaction(|tx| tx.put_layout(&stored))?;
    }
    Ok((layout, false))
}
