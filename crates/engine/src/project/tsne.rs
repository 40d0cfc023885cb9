//! Barnes-Hut t-SNE (bhtsne, the engine under linfa-tsne, patched in `third_party/bhtsne`)
//! on a seeded sample of landmark points; every other point is placed at the
//! similarity-weighted mean of its nearest landmarks. t-SNE's input similarities need exact
//! neighbours, an n² search (parallel since the bhtsne patch, but still quadratic), so t-SNE
//! itself only ever sees the landmarks.

use super::landmarks::Landmarks;
use super::pca::Pca;
use super::ProjectionParams;
use crate::events::Job;
use crate::{Error, Result};
/// Barnes-Hut accuracy as bhtsne measures it: a cell stands for its points when its
/// largest half-width is below θ times its distance. In 3D, 0.25: the same test as
/// openTSNE's and scikit-learn's default (0.5 on full widths). In 2D, 0.5 (0.4.1's
/// default, twice as coarse): openTSNE's 2D runs FFT interpolation, not Barnes-Hut, and
/// on the 10K bench the coarser test kept more neighbourhoods (trustworthiness@10 0.930
/// against 0.925 at 0.25: README, "t-SNE with openTSNE's steps and a flat tree").
fn bhtsne_theta(dims: usize) -> f64 {
    if dims >= 3 {
        0.25
    } else {
        0.5
    }
}
/// openTSNE's step rule: a learning rate of n / exaggeration (n/12 in the early phase, n
/// after) with each point's step clipped to length 5, a momentum of 0.8 throughout, and
/// gains that settle at 0.05. bhtsne's own (a fixed 200, momentum 0.5 early) moves a
/// 10K-point layout 50 times more slowly once the exaggeration ends.
const STEPS: bhtsne::Steps<f64> = bhtsne::Steps {
    learning_rate: None,
    max_step_norm: Some(5.0),
    early_momentum: 0.8,
    gain_decay: bhtsne::GainDecay::Additive,
};

pub struct TsneRun {
    pub coords: Vec<f32>,
    pub landmarks: usize,
}

/// t-SNE of the n×d row-major unit vectors `x` with `params` (dims, perplexity,
/// iterations, landmarks, seed).
pub fn tsne(x: &[f32], d: usize, params: &ProjectionParams, job: &Job) -> Result<TsneRun> {
    let (dims, perplexity, iterations, landmarks, seed) = (
        params.dims,
        params.perplexity,
        params.iterations,
        params.landmarks,
        params.seed,
    );
    let n = x.len() / d;
    if n == 0 {
        return Ok(TsneRun {
            coords: Vec::new(),
            landmarks: 0,
        });
    }
    let chosen = Landmarks::choose(x, d, landmarks, seed);
    let l = chosen.len();
    let lx = &chosen.x;
    // Perplexity must leave 3·perplexity neighbours; tiny inputs get PCA.
    let perp = perplexity.min(((l as f64) - 1.0) / 3.0 - 1.0);
    let init = Pca::fit(lx, d, dims.min(d), job)?.transform(lx);
    let ly: Vec<f32> = if perp < 2.0 {
        init
    } else {
        // PCA initialisation, scaled (as openTSNE does) so that the first component's
        // standard deviation is 1e-4. The components are centred.
        let sd = (init
            .iter()
            .step_by(dims.min(d))
            .map(|v| (*v as f64).powi(2))
            .sum::<f64>()
            / l as f64)
            .sqrt();
        let mut y: Vec<f64> = init
            .iter()
            .map(|v| *v as f64 / sd.max(1e-12) * 1e-4)
            .collect();
        let mut data: Vec<f64> = lx.iter().map(|v| *v as f64).collect();
        let stop_lying = (iterations / 4).min(250) as u64;
        let cancel = job.cancel.clone();
        let total = iterations as u64;
        job.report("tsne", 0, total);
        bhtsne::run_with_progress(
            &mut data,
            l,
            d,
            &mut y,
            dims,
            perp,
            bhtsne_theta(dims),
            true,
            total,
            stop_lying,
            stop_lying,
            STEPS,
            &mut |it| {
                if (it + 1) % 10 == 0 {
                    job.report("tsne", it + 1, total);
                }
                !cancel.is_cancelled()
            },
        );
        job.cancel.check()?;
        if y.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(
                "t-SNE diverged (non-finite coordinates)".into(),
            ));
        }
        y.iter().map(|v| *v as f32).collect()
    };
    let coords = chosen.place_all(x, d, &ly, dims, job)?;
    Ok(TsneRun {
        coords,
        landmarks: l,
    })
}

/// Gradient steps of [`refine`] and the size of its repulsion sample.
pub const REFINE_STEPS: usize = 30;
pub const REFINE_SAMPLE: usize = 48;

/// A short local optimisation of a newly placed point (seed 003: place at the weighted mean
/// of the neighbours, then refine): gradient descent on KL(P‖Q) for this one point while
/// every other point stays fixed. P is the point's affinity to its embedding neighbours
/// (the kernel of [`weighted_mean`]); Q is the Student-t kernel over the neighbours and a
/// sample of other points, which supplies the repulsion that keeps a new point from
/// landing on top of an unrelated one.
pub fn refine(
    start: &[f32],
    neighbours: &[(&[f32], f32)],
    others: &[&[f32]],
    steps: usize,
) -> Vec<f32> {
    let dims = start.len();
    let best = neighbours
        .iter()
        .map(|p| p.1)
        .fold(f32::NEG_INFINITY, f32::max);
    let mut p: Vec<f32> = neighbours
        .iter()
        .map(|&(_, sim)| ((sim - best) / 0.05).exp())
        .collect();
    let total: f32 = p.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return start.to_vec();
    }
    p.iter_mut().for_each(|v| *v /= total);
    let points: Vec<(&[f32], f32)> = neighbours
        .iter()
        .zip(&p)
        .map(|(&(pos, _), &pj)| (pos, pj))
        .chain(others.iter().map(|&pos| (pos, 0.0)))
        .collect();
    let mut y = start.to_vec();
    let mut w = vec![0f32; points.len()];
    let mut grad = vec![0f32; dims];
    // The Hessian of the attraction is at most 4·Σ p·w ≤ 4, so 0.1 is a stable step.
    const RATE: f32 = 0.1;
    for _ in 0..steps {
        let mut z = 0f32;
        for (k, (pos, _)) in points.iter().enumerate() {
            let d2: f32 = (0..dims).map(|j| (y[j] - pos[j]).powi(2)).sum();
            w[k] = 1.0 / (1.0 + d2);
            z += w[k];
        }
        grad.iter_mut().for_each(|g| *g = 0.0);
        for (k, (pos, pk)) in points.iter().enumerate() {
            let coeff = 4.0 * (pk - w[k] / z) * w[k];
            for j in 0..dims {
                grad[j] += coeff * (y[j] - pos[j]);
            }
        }
        for j in 0..dims {
            y[j] -= RATE * grad[j];
        }
    }
    if y.iter().all(|v| v.is_finite()) {
        y
    } else {
        start.to_vec()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::project::landmarks::weighted_mean;
    use rand::SeedableRng;

    #[test]
    fn refine_keeps_a_new_point_by_its_neighbours_and_off_an_unrelated_one() {
        let (a, b) = ([0.0f32, 0.0], [2.0f32, 0.0]);
        let neighbours: Vec<(&[f32], f32)> = vec![(&a, 0.8), (&b, 0.8)];
        // An unrelated point sits right next to where the weighted mean puts the new one.
        let stranger = [1.0f32, 0.1];
        let start = weighted_mean(neighbours.iter().copied(), 2);
        assert_eq!(start, vec![1.0, 0.0]);
        let far = [[30.0f32, 30.0], [-30.0, 30.0], [0.0, -40.0]];
        let mut others: Vec<&[f32]> = vec![&stranger];
        others.extend(far.iter().map(|f| f.as_slice()));
        let y = refine(&start, &neighbours, &others, REFINE_STEPS);
        let dist = |p: &[f32], q: &[f32]| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt();
        assert!(dist(&y, &stranger) > 0.4, "pushed off the stranger: {y:?}");
        assert!(y[1] < 0.0, "away from the stranger's side: {y:?}");
        assert!(
            dist(&y, &a) < 2.0 && dist(&y, &b) < 2.0,
            "still between its neighbours: {y:?}"
        );
        // Without a stranger and with balanced neighbours the mean is already optimal.
        let alone = refine(&start, &neighbours, &[], REFINE_STEPS);
        assert!(dist(&alone, &start) < 1e-3, "{alone:?}");
    }

    use crate::metrics::trustworthiness;
    use crate::project::ProjectionMethod;
    use rand::Rng;

    fn params(dims: usize, iterations: usize, landmarks: usize, seed: u64) -> ProjectionParams {
        ProjectionParams {
            method: ProjectionMethod::Tsne,
            dims,
            perplexity: 30.0,
            iterations,
            landmarks,
            seed,
        }
    }

    /// `c` well-separated groups of unit vectors in 32 dimensions.
    pub(crate) fn blobs(n: usize, c: usize, d: usize, seed: u64) -> (Vec<f32>, Vec<usize>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let centres: Vec<Vec<f32>> = (0..c)
            .map(|_| (0..d).map(|_| rng.gen_range(-1.0..1.0)).collect())
            .collect();
        let mut x = Vec::with_capacity(n * d);
        let mut label = Vec::with_capacity(n);
        for i in 0..n {
            let mut v: Vec<f32> = centres[i % c]
                .iter()
                .map(|m| m + rng.gen_range(-0.15..0.15))
                .collect();
            crate::embed::normalize(&mut v);
            x.extend(v);
            label.push(i % c);
        }
        (x, label)
    }

    #[test]
    fn keeps_neighbourhoods_at_perplexity_30_and_places_the_rest() {
        let d = 32;
        let (x, _) = blobs(900, 6, d, 3);
        // 600 landmarks at perplexity 30: 0.4.1's perplexity search broke here (NaN).
        let run = tsne(&x, d, &params(2, 400, 600, 7), &Job::default()).unwrap();
        assert_eq!(run.landmarks, 600);
        assert_eq!(run.coords.len(), 900 * 2);
        assert!(run.coords.iter().all(|v| v.is_finite()));
        let t = trustworthiness(&x, d, &run.coords, 2, 10);
        assert!(t > 0.9, "trustworthiness {t}");
        // Same seed, same layout.
        let again = tsne(&x, d, &params(2, 400, 600, 7), &Job::default()).unwrap();
        assert_eq!(again.coords, run.coords);
    }

    #[test]
    fn cancellation_stops_the_optimisation() {
        let (x, _) = blobs(300, 3, 16, 1);
        let job = Job::default();
        let cancel = job.cancel.clone();
        let job = Job {
            progress: std::sync::Arc::new(move |e: crate::events::ProgressEvent| {
                if e.stage == "tsne" && e.done >= 20 {
                    cancel.cancel();
                }
            }),
            cancel: job.cancel.clone(),
        };
        let err = tsne(&x, 16, &params(3, 100_000, 300, 1), &job)
            .err()
            .unwrap();
        assert_eq!(err.code(), "cancelled");
    }
}
