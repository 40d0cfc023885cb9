//! UMAP on a seeded sample of landmark points, as t-SNE runs: exact nearest neighbours
//! among the landmarks (blocked matrix products), PCA initialisation, umap-rs for the fuzzy
//! simplicial set and the negative-sampling SGD (a port of umap-learn's, patched in
//! `third_party/umap-rs`). Every other point is then placed as umap-learn's `transform`
//! places new data: memberships to its nearest landmarks, a start at their weighted mean,
//! and a short SGD of that point alone against the fixed landmarks.
//!
//! The landmarks' SGD runs on every core without locks (Hogwild, as umap-learn does when it
//! runs in parallel), so two runs with the same seed agree in their landmarks, graph and
//! start but not in every last coordinate; the placement is seeded per point.

use super::knn::{approx_nearest_by_dot, nearest_by_dot};
use super::landmarks::Landmarks;
use super::pca::Pca;
use super::ProjectionParams;
use crate::events::Job;
use crate::{Error, Result};
use ndarray_umap::Array2;
use rand::{Rng, SeedableRng};
use umap_rs::{EuclideanMetric, GraphParams, ManifoldParams, OptimizationParams, UmapConfig};

/// Landmarks by default: every memory up to a million (the neighbour graph is found by
/// cells above `EXACT_LIMIT`, so a full layout costs less than placing the rest would).
pub const LANDMARKS: usize = 1_000_000;
/// Up to this many points the neighbour graph is exact; above it, by cells.
const EXACT_LIMIT: usize = 20_000;
/// Cells a point's neighbours are sought in, above `EXACT_LIMIT`.
const PROBE: usize = 8;
/// Neighbours in the graph, counting the point itself (umap-learn's `n_neighbors`).
pub const NEIGHBOURS: usize = 15;
/// umap-learn's default `min_dist`.
const MIN_DIST: f32 = 0.1;
/// Epochs between progress reports and cancellation checks.
const EPOCH_CHUNK: usize = 10;

/// Epochs for `n` points: `iterations` when given, else umap-learn's rule (500 up to 10K
/// points, 200 above).
pub fn epochs(n: usize, iterations: usize) -> usize {
    match iterations {
        0 if n <= 10_000 => 500,
        0 => 200,
        e => e,
    }
}

/// UMAP of the n×d row-major unit vectors `x` with `params` (dims, iterations as epochs,
/// landmarks, seed). Fewer landmarks than a neighbourhood needs get their PCA layout.
pub fn umap(x: &[f32], d: usize, params: &ProjectionParams, job: &Job) -> Result<Vec<f32>> {
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let chosen = Landmarks::choose(x, d, params.landmarks, params.seed);
    let (ly, curve) = lay_out(&chosen.x, d, params, job)?;
    let dims = params.dims;
    match curve {
        // Too few landmarks for a graph: their PCA layout, the rest by the weighted mean.
        None => chosen.place_all(x, d, &ly, dims, job),
        Some(curve) => chosen.place_all_with(x, d, &ly, dims, NEIGHBOURS, job, |row, nn| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(params.seed ^ row as u64);
            place(nn, &ly, dims, curve, &mut rng)
        }),
    }
}

/// The UMAP kernel's curve `1 / (1 + a·d^(2b))` as (a, b), fitted to `min_dist`.
type Curve = (f32, f32);

/// Epochs a placed point is optimised for (umap-learn's `transform` on large data).
const PLACE_EPOCHS: usize = 30;
/// Negative samples per positive one (umap-learn's default).
const NEGATIVES: usize = 5;

/// umap-learn's `transform` for one point among fixed landmarks: memberships to its nearest
/// landmarks (the fuzzy set of its neighbourhood), a start at their membership-weighted
/// mean, then SGD that pulls it toward them by the UMAP kernel `1 / (1 + a·d^(2b))` and
/// pushes it from landmarks drawn at random. Only the point moves.
fn place(
    nn: &[(usize, f32)],
    ly: &[f32],
    dims: usize,
    (a, b): Curve,
    rng: &mut impl Rng,
) -> Vec<f32> {
    let l = ly.len() / dims;
    let at = |r: usize| &ly[r * dims..(r + 1) * dims];
    let dist: Vec<f32> = nn
        .iter()
        .map(|&(_, s)| (2.0 - 2.0 * s).max(0.0).sqrt())
        .collect();
    let w = memberships(&dist);
    let total: f32 = w.iter().sum();
    let mut y = vec![0f32; dims];
    for (&(r, _), &wj) in nn.iter().zip(&w) {
        for (yk, pk) in y.iter_mut().zip(at(r)) {
            *yk += wj / total * pk;
        }
    }
    let mut next: Vec<f32> = w.iter().map(|&wj| 1.0 / wj.max(1e-12)).collect();
    let clip = |v: f32| v.clamp(-4.0, 4.0);
    for epoch in 0..PLACE_EPOCHS {
        let alpha = 1.0 - epoch as f32 / PLACE_EPOCHS as f32;
        for (j, &(r, _)) in nn.iter().enumerate() {
            if next[j] > (epoch + 1) as f32 {
                continue;
            }
            next[j] += 1.0 / w[j].max(1e-12);
            let step = |y: &mut [f32], other: &[f32], attract: bool| {
                let d2: f32 = y.iter().zip(other).map(|(p, q)| (p - q).powi(2)).sum();
                let coeff = if attract {
                    if d2 <= 0.0 {
                        return;
                    }
                    -2.0 * a * b * d2.powf(b - 1.0) / (a * d2.powf(b) + 1.0)
                } else {
                    2.0 * b / ((0.001 + d2) * (a * d2.powf(b) + 1.0))
                };
                for (p, q) in y.iter_mut().zip(other) {
                    *p += clip(coeff * (*p - q)) * alpha;
                }
            };
            step(&mut y, at(r), true);
            for _ in 0..NEGATIVES {
                let other = rng.gen_range(0..l);
                if other != r {
                    step(&mut y, at(other), false);
                }
            }
        }
    }
    y
}

/// UMAP's fuzzy memberships of a point's neighbours from their ascending distances: 1 for
/// the nearest, `exp(−(d − ρ)/σ)` for the others, σ found by bisection so that they sum to
/// log2(k) (umap-learn's `smooth_knn_dist` with local connectivity 1).
fn memberships(dist: &[f32]) -> Vec<f32> {
    let rho = dist.iter().copied().find(|&v| v > 0.0).unwrap_or(0.0);
    let target = (dist.len() as f32).log2();
    let sum = |sigma: f32| -> f32 {
        dist.iter()
            .map(|&v| (-(v - rho).max(0.0) / sigma).exp())
            .sum()
    };
    let (mut lo, mut hi) = (0f32, f32::INFINITY);
    let mut sigma = 1f32;
    for _ in 0..64 {
        let s = sum(sigma);
        if (s - target).abs() < 1e-5 {
            break;
        }
        if s > target {
            hi = sigma;
            sigma = (lo + hi) / 2.0;
        } else {
            lo = sigma;
            sigma = if hi.is_finite() {
                (lo + hi) / 2.0
            } else {
                sigma * 2.0
            };
        }
    }
    let mean = dist.iter().sum::<f32>() / dist.len().max(1) as f32;
    let sigma = sigma.max(1e-3 * mean).max(f32::MIN_POSITIVE);
    dist.iter()
        .map(|&v| (-(v - rho).max(0.0) / sigma).exp())
        .collect()
}

/// The UMAP layout of the rows of `lx` (all of them: the landmarks) and the kernel's
/// curve (a, b); PCA and no curve for too few rows to have neighbourhoods.
fn lay_out(
    lx: &[f32],
    d: usize,
    params: &ProjectionParams,
    job: &Job,
) -> Result<(Vec<f32>, Option<Curve>)> {
    let l = lx.len() / d;
    let dims = params.dims;
    let init = Pca::fit(lx, d, dims.min(d), job)?.transform(lx);
    if l <= NEIGHBOURS {
        return Ok((init, None));
    }
    let (indices, distances) = neighbour_graph(lx, d, params.seed, job)?;
    let total = epochs(l, params.iterations);
    let config = UmapConfig {
        n_components: dims,
        manifold: ManifoldParams {
            min_dist: MIN_DIST,
            ..Default::default()
        },
        graph: GraphParams {
            n_neighbors: NEIGHBOURS,
            ..Default::default()
        },
        optimization: OptimizationParams {
            n_epochs: Some(total),
            ..Default::default()
        },
    };
    let data = Array2::from_shape_vec((l, d), lx.to_vec()).map_err(shape)?;
    let init = Array2::from_shape_vec((l, dims), init).map_err(shape)?;
    job.report("umap graph", 0, 1);
    let manifold = umap_rs::Umap::new(config.clone()).learn_manifold(
        data.view(),
        indices.view(),
        distances.view(),
    );
    drop(data);
    job.report("umap graph", 1, 1);
    let curve = manifold.curve_params();
    let mut opt = umap_rs::Optimizer::new(
        manifold,
        init,
        total,
        &config,
        umap_rs::MetricType::Euclidean,
    );
    job.report("umap", 0, total as u64);
    while opt.remaining_epochs() > 0 {
        job.cancel.check()?;
        opt.step_epochs(EPOCH_CHUNK.min(opt.remaining_epochs()), &EuclideanMetric);
        job.report("umap", opt.current_epoch() as u64, total as u64);
    }
    let y = opt.embedding();
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput(
            "UMAP diverged (non-finite coordinates)".into(),
        ));
    }
    Ok((y.iter().copied().collect(), Some(curve)))
}

/// Each row's `NEIGHBOURS` nearest rows, itself first at distance 0, with Euclidean
/// distances between the unit vectors (√(2 − 2·cos)), as umap-rs takes them: exact up to
/// `EXACT_LIMIT` rows, else by cells (recall@15 above 0.9 in the tests).
fn neighbour_graph(
    lx: &[f32],
    d: usize,
    seed: u64,
    job: &Job,
) -> Result<(Array2<u32>, Array2<f32>)> {
    let l = lx.len() / d;
    let stage = "umap neighbours";
    let near = if l <= EXACT_LIMIT {
        nearest_by_dot(lx, lx, d, NEIGHBOURS - 1, true, job, stage)?
    } else {
        approx_nearest_by_dot(lx, d, NEIGHBOURS - 1, PROBE, seed, job, stage)?
    };
    let mut indices = Array2::<u32>::zeros((l, NEIGHBOURS));
    let mut distances = Array2::<f32>::zeros((l, NEIGHBOURS));
    for (i, row) in near.iter().enumerate() {
        indices[(i, 0)] = i as u32;
        for (j, &(r, dot)) in row.iter().enumerate() {
            indices[(i, j + 1)] = r as u32;
            distances[(i, j + 1)] = (2.0 - 2.0 * dot).max(0.0).sqrt();
        }
    }
    Ok((indices, distances))
}

fn shape(e: ndarray_umap::ShapeError) -> Error {
    Error::InvalidInput(format!("UMAP input shape: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::trustworthiness;
    use crate::project::tsne::tests::blobs;
    use crate::project::ProjectionMethod;

    fn params(dims: usize, landmarks: usize) -> ProjectionParams {
        ProjectionParams {
            method: ProjectionMethod::Umap,
            dims,
            iterations: 0,
            landmarks,
            ..Default::default()
        }
    }

    #[test]
    fn keeps_neighbourhoods_and_separates_groups_in_2d_and_3d() {
        let d = 32;
        let (x, label) = blobs(900, 6, d, 3);
        for dims in [2, 3] {
            let y = umap(&x, d, &params(dims, 900), &Job::default()).unwrap();
            assert_eq!(y.len(), 900 * dims);
            assert!(y.iter().all(|v| v.is_finite()));
            let t = trustworthiness(&x, d, &y, dims, 10);
            assert!(t > 0.9, "{dims}D trustworthiness {t}");
            // Each point's nearest point in the layout is of its own group.
            let same = (0..900)
                .filter(|&i| {
                    let dist = |j: usize| -> f32 {
                        (0..dims)
                            .map(|k| (y[i * dims + k] - y[j * dims + k]).powi(2))
                            .sum()
                    };
                    let nearest = (0..900)
                        .filter(|&j| j != i)
                        .min_by(|&a, &b| dist(a).total_cmp(&dist(b)))
                        .unwrap();
                    label[nearest] == label[i]
                })
                .count();
            assert!(same > 880, "{dims}D: {same} of 900 beside their own group");
        }
    }

    #[test]
    fn lays_out_landmarks_and_places_the_rest_among_their_group() {
        let d = 32;
        let (x, _) = blobs(1200, 4, d, 9);
        let y = umap(&x, d, &params(2, 400), &Job::default()).unwrap();
        assert_eq!(y.len(), 1200 * 2);
        let t = trustworthiness(&x, d, &y, 2, 10);
        assert!(t > 0.85, "trustworthiness {t}");
    }

    #[test]
    fn the_graph_has_each_point_first_at_distance_zero() {
        let (x, _) = blobs(40, 2, 8, 1);
        let (idx, dist) = neighbour_graph(&x, 8, 1, &Job::default()).unwrap();
        for i in 0..40 {
            assert_eq!(idx[(i, 0)], i as u32);
            assert_eq!(dist[(i, 0)], 0.0);
            let row: Vec<f32> = dist.row(i).to_vec();
            assert!(row.windows(2).all(|w| w[0] <= w[1]), "ascending: {row:?}");
        }
    }

    #[test]
    fn tiny_inputs_get_pca_and_cancellation_stops_the_epochs() {
        let (x, _) = blobs(10, 2, 8, 1);
        let y = umap(&x, 8, &params(3, 10), &Job::default()).unwrap();
        assert_eq!(y.len(), 30);
        assert!(umap(&[], 8, &params(2, 10), &Job::default())
            .unwrap()
            .is_empty());

        let (x, _) = blobs(300, 3, 16, 1);
        let job = Job::default();
        let cancel = job.cancel.clone();
        let job = Job {
            progress: std::sync::Arc::new(move |e: crate::events::ProgressEvent| {
                if e.stage == "umap" && e.done >= 20 {
                    cancel.cancel();
                }
            }),
            cancel: job.cancel.clone(),
        };
        let err = umap(&x, 16, &params(2, 300), &job).unwrap_err();
        assert_eq!(err.code(), "cancelled");
    }

    #[test]
    fn memberships_are_one_for_the_nearest_and_sum_to_log2_k() {
        let dist = [0.1f32, 0.2, 0.25, 0.3, 0.5, 0.5, 0.6, 0.9];
        let w = memberships(&dist);
        assert_eq!(w[0], 1.0);
        assert!(w.windows(2).all(|p| p[0] >= p[1]), "{w:?}");
        let total: f32 = w.iter().sum();
        assert!((total - 3.0).abs() < 1e-3, "sum {total}");
        // Equal distances: all one.
        assert!(memberships(&[0.4; 5]).iter().all(|&v| v == 1.0));
    }

    #[test]
    fn a_placed_point_joins_its_neighbours_and_keeps_off_the_others() {
        // Landmarks 0–4 in a tight group at (0, 0); 5–39 in another far away at (20, 0).
        let mut ly = Vec::new();
        for i in 0..40 {
            let (cx, k) = if i < 5 { (0.0, i) } else { (20.0, i - 5) };
            ly.extend([cx + 0.1 * (k % 3) as f32, 0.1 * (k / 3) as f32]);
        }
        let nn: Vec<(usize, f32)> = (0..5).map(|r| (r, 0.95 - 0.01 * r as f32)).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let y = place(&nn, &ly, 2, (1.577, 0.895), &mut rng);
        assert!(y[0].abs() < 2.0 && y[1].abs() < 2.0, "placed at {y:?}");
        // The same seed, the same place.
        let mut again = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        assert_eq!(place(&nn, &ly, 2, (1.577, 0.895), &mut again), y);
    }

    #[test]
    fn epochs_follow_umap_learn_unless_given() {
        assert_eq!(epochs(10_000, 0), 500);
        assert_eq!(epochs(10_001, 0), 200);
        assert_eq!(epochs(50, 30), 30);
    }
}
