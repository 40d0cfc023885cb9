//! Benchmarks of projection and clustering (`somna bench --only pca,tsne,kmeans,stability`):
//! Somna's PCA, t-SNE and k-means against linfa's on the same vectors, and the stability of
//! layouts when 5% new points arrive.

use crate::cluster::kmeans::{self, KMeansParams};
use crate::events::Job;
use crate::metrics::trustworthiness;
use crate::project::align::{align, median_movement};
use crate::project::knn::nearest_by_dot;
use crate::project::landmarks::{weighted_mean, PLACE_NEIGHBOURS};
use crate::project::pca::Pca;
use crate::project::tsne;
use crate::project::{compute, ProjectionMethod, ProjectionParams};
use crate::{Error, Result};
use linfa::traits::Fit;
use linfa::DatasetBase;
use ndarray::Array2;
use serde::Serialize;
use std::time::Instant;

#[derive(Debug, Clone, Serialize)]
pub struct PcaBench {
    pub n: usize,
    pub dims: usize,
    /// Median of `runs` (fit and transform, seconds).
    pub seconds: f64,
    pub runs: Vec<f64>,
    pub explained_variance_ratio: Vec<f64>,
    /// linfa-reduction `Pca` (f64 SVD) on the same data, when run.
    pub linfa_seconds: Option<f64>,
}

pub fn bench_pca(x: &[f32], d: usize, dims: usize, with_linfa: bool) -> Result<PcaBench> {
    let n = x.len() / d;
    // Three fits (the first warms up the thread pool and the allocator); the median counts.
    let mut runs = Vec::with_capacity(3);
    let mut pca = None;
    for _ in 0..3 {
        let t = Instant::now();
        let fit = Pca::fit(x, d, dims, &Job::default())?;
        let _ = fit.transform(x);
        runs.push(t.elapsed().as_secs_f64());
        pca = Some(fit);
    }
    let pca = pca.expect("three fits");
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let seconds = sorted[1];
    let linfa_seconds = if with_linfa {
        let t = Instant::now();
        let a = Array2::from_shape_vec((n, d), x.iter().map(|v| *v as f64).collect())
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let ds = DatasetBase::from(a);
        let model = linfa_reduction::Pca::params(dims)
            .fit(&ds)
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let _ = linfa::traits::Predict::predict(&model, ds.records());
        Some(t.elapsed().as_secs_f64())
    } else {
        None
    };
    Ok(PcaBench {
        n,
        dims,
        seconds,
        runs,
        explained_variance_ratio: pca.explained_variance_ratio,
        linfa_seconds,
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct TsneBench {
    pub n: usize,
    /// Points t-SNE itself laid out (n: all of them); the rest were placed beside them.
    pub landmarks: usize,
    pub dims: usize,
    pub perplexity: f64,
    pub iterations: usize,
    pub seconds: f64,
    /// Of the first `TRUST_SAMPLE` points' layout (all of them below that).
    pub trustworthiness10: f64,
}

/// Points trustworthiness is measured on: the first of each layout (it is O(n²)).
pub const TRUST_SAMPLE: usize = 10_000;

/// t-SNE of `x` with `landmarks` of its points (all of them: every point a landmark),
/// timed, with trustworthiness@10 of the first `TRUST_SAMPLE` points.
pub fn bench_tsne(
    x: &[f32],
    d: usize,
    dims: usize,
    perplexity: f64,
    (iterations, landmarks): (usize, usize),
    job: &Job,
) -> Result<TsneBench> {
    let n = x.len() / d;
    let t = Instant::now();
    let params = ProjectionParams {
        method: ProjectionMethod::Tsne,
        dims,
        perplexity,
        iterations,
        landmarks: landmarks.min(n),
        seed: 42,
    };
    let run = tsne::tsne(x, d, &params, job)?;
    let seconds = t.elapsed().as_secs_f64();
    let m = n.min(TRUST_SAMPLE);
    Ok(TsneBench {
        n,
        landmarks: run.landmarks,
        dims,
        perplexity,
        iterations,
        seconds,
        trustworthiness10: trustworthiness(&x[..m * d], d, &run.coords[..m * dims], dims, 10),
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct KMeansRun {
    pub n: usize,
    pub k: usize,
    pub seconds: f64,
    pub inertia: f64,
    pub iterations: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct KMeansBench {
    pub somna: KMeansRun,
    /// Somna and linfa-clustering `KMeans` (1 run, 20 iterations max) on the first
    /// `linfa_n` points, when run.
    pub same_n_somna: Option<KMeansRun>,
    pub linfa: Option<KMeansRun>,
}

fn somna_kmeans(x: &[f32], d: usize, k: usize, max_iterations: usize) -> Result<KMeansRun> {
    let t = Instant::now();
    let params = KMeansParams {
        max_iterations,
        ..KMeansParams::new(k)
    };
    let fit = kmeans::fit(x, d, &params, &Job::default())?;
    Ok(KMeansRun {
        n: x.len() / d,
        k,
        seconds: t.elapsed().as_secs_f64(),
        inertia: fit.inertia,
        iterations: fit.iterations,
    })
}

pub fn bench_kmeans(x: &[f32], d: usize, k: usize, linfa_n: usize) -> Result<KMeansBench> {
    let somna = somna_kmeans(x, d, k, 50)?;
    let (same_n_somna, linfa) = if linfa_n > 0 {
        let sub = &x[..linfa_n.min(x.len() / d) * d];
        let n = sub.len() / d;
        let ours = somna_kmeans(sub, d, k, 20)?;
        let t = Instant::now();
        let a = Array2::from_shape_vec((n, d), sub.to_vec())
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let ds = DatasetBase::from(a);
        let model = linfa_clustering::KMeans::params(k)
            .n_runs(1)
            .max_n_iterations(20)
            .tolerance(1e-4)
            .fit(&ds)
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let seconds = t.elapsed().as_secs_f64();
        let linfa = KMeansRun {
            n,
            k,
            seconds,
            // linfa's inertia() is a mean: scale it to a sum like scikit-learn's.
            inertia: model.inertia() as f64 * n as f64,
            iterations: 0,
        };
        (Some(ours), Some(linfa))
    } else {
        (None, None)
    };
    Ok(KMeansBench {
        somna,
        same_n_somna,
        linfa,
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct StabilityBench {
    pub method: ProjectionMethod,
    pub old: usize,
    pub added: usize,
    /// Median movement of the old points, relative to the old layout's extent (bounding-box
    /// diagonal), after: incremental placement of the new points…
    pub incremental: f32,
    /// …a full recompute aligned to the old layout (Procrustes with scale)…
    pub recompute_aligned: f32,
    /// …and a full recompute (another seed for t-SNE) without alignment.
    pub recompute_naive: f32,
}

/// Layout of the first 95% of `x`, then the 5% added three ways.
pub fn bench_stability(
    x: &[f32],
    d: usize,
    params: &ProjectionParams,
    job: &Job,
) -> Result<StabilityBench> {
    let n = x.len() / d;
    let old = n * 95 / 100;
    let dims = params.dims;
    let ids: Vec<i64> = (0..n as i64).collect();
    let (base, model) = compute(params, &x[..old * d], d, job)?;
    let old_ids = &ids[..old];
    // Incremental: old points stay; new ones are placed.
    let mut inc = base.clone();
    let new_x = &x[old * d..];
    match (params.method, model) {
        (ProjectionMethod::Pca, Some(m)) => {
            let pca =
                Pca::from_model(&m, d, dims).ok_or_else(|| Error::InvalidInput("model".into()))?;
            inc.extend(pca.transform(new_x));
        }
        _ => {
            let near = nearest_by_dot(
                new_x,
                &x[..old * d],
                d,
                PLACE_NEIGHBOURS,
                false,
                job,
                "place",
            )?;
            for nn in near {
                inc.extend(weighted_mean(
                    nn.iter()
                        .map(|&(r, s)| (&base[r * dims..(r + 1) * dims], s)),
                    dims,
                ));
            }
        }
    }
    let incremental = median_movement(&ids, &inc, old_ids, &base, dims);
    let reseeded = ProjectionParams {
        seed: params.seed + 1,
        ..params.clone()
    };
    let (naive, _) = compute(&reseeded, x, d, job)?;
    let recompute_naive = median_movement(&ids, &naive, old_ids, &base, dims);
    let mut aligned = naive;
    align(&ids, &mut aligned, old_ids, &base, dims);
    let recompute_aligned = median_movement(&ids, &aligned, old_ids, &base, dims);
    Ok(StabilityBench {
        method: params.method,
        old,
        added: n - old,
        incremental,
        recompute_aligned,
        recompute_naive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::clustered_vectors;

    #[test]
    fn a_tsne_bench_with_fewer_landmarks_places_the_rest_and_says_so() {
        let (n, d) = (600, 16);
        let x = clustered_vectors(n, d, 6, 1.0, 3);
        let some = bench_tsne(&x, d, 2, 10.0, (250, 200), &Job::default()).unwrap();
        assert_eq!((some.n, some.landmarks), (n, 200));
        let all = bench_tsne(&x, d, 2, 10.0, (250, n), &Job::default()).unwrap();
        assert_eq!(all.landmarks, n);
        for t in [&some, &all] {
            assert!(
                t.trustworthiness10 > 0.5 && t.trustworthiness10 <= 1.0,
                "{t:?}"
            );
        }
    }
}
