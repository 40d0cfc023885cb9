//! PCA by the covariance matrix: Xᵀ X accumulated in row chunks, the chunks on every core and
//! only the triangle on and above the diagonal (`syrk.rs`); then the top eigenvectors of the
//! d×d result by subspace iteration (full eigendecomposition by linfa-linalg when that does
//! not converge). For n ≫ d this is what scikit-learn's `covariance_eigh` solver does;
//! linfa-reduction's `Pca` takes an SVD of the whole n×d matrix in f64, several times slower.

use super::syrk::add_upper;
use crate::embed::dot;
use crate::events::Job;
use crate::{Error, Result};
use linfa_linalg::eigh::{EigSort, EighInto};
use ndarray::{Array2, Axis, Slice};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows per chunk of the scatter (summed in f32 within it) and of the projection; also the
/// granularity of progress and cancellation.
const CHUNK: usize = 4096;
/// Extra vectors in the subspace iteration's block (a block of 32 for 3 components):
/// convergence goes as (θ_{k+p+1}/θ_k)^steps. On the bench's 100K vectors a block of 19 took
/// 28 steps, this one 4.
const OVERSAMPLE: usize = 29;
const MAX_SUBSPACE_STEPS: usize = 200;
/// A Ritz pair is converged when ‖C v − θ v‖ ≤ this × θ₁: the vector's angle to the true
/// one is about this over the relative gap to the next eigenvalue, far below what a layout
/// shows; the eigenvalues (explained variance) are exact to its square.
const RITZ_TOLERANCE: f64 = 1e-6;

/// A fitted PCA: the mean and the top components (rows of `components`, unit length).
#[derive(Debug, Clone, PartialEq)]
pub struct Pca {
    pub mean: Vec<f32>,
    /// dims × d, row-major.
    pub components: Vec<f32>,
    pub dims: usize,
    /// Share of the total variance each component explains.
    pub explained_variance_ratio: Vec<f64>,
}

impl Pca {
    /// Fits `dims` components to the n×d row-major `x`.
    pub fn fit(x: &[f32], d: usize, dims: usize, job: &Job) -> Result<Self> {
        let n = x.len() / d;
        if n == 0 || dims == 0 || dims > d {
            return Err(Error::InvalidInput(format!(
                "PCA of {n} points of dimension {d} to {dims} dimensions"
            )));
        }
        let (mean32, mut cov) = mean_and_scatter(x, d, job)?;
        cov.mapv_inplace(|v| v / (n.max(2) - 1) as f64);
        let total: f64 = cov.diag().sum();
        let (vals, vecs) = top_eigen(cov, dims)?;
        let mut components = Vec::with_capacity(dims * d);
        for k in 0..dims {
            let col = vecs.column(k);
            // Deterministic sign: the largest-magnitude loading is positive.
            let pivot = col
                .iter()
                .copied()
                .fold(0f64, |a, v| if v.abs() > a.abs() { v } else { a });
            let sign = if pivot < 0.0 { -1.0 } else { 1.0 };
            components.extend(col.iter().map(|v| (v * sign) as f32));
        }
        let explained_variance_ratio = (0..dims)
            .map(|k| {
                if total > 0.0 {
                    vals[k].max(0.0) / total
                } else {
                    0.0
                }
            })
            .collect();
        Ok(Self {
            mean: mean32,
            components,
            dims,
            explained_variance_ratio,
        })
    }

    /// Projects the row-major rows of `x` (dimension `mean.len()`) onto the components.
    pub fn transform(&self, x: &[f32]) -> Vec<f32> {
        let d = self.mean.len();
        let shift: Vec<f32> = self
            .components
            .chunks_exact(d)
            .map(|c| c.iter().zip(&self.mean).map(|(a, b)| a * b).sum())
            .collect();
        x.par_chunks(CHUNK * d)
            .flat_map_iter(|rows| {
                // (x − μ)·c = x·c − μ·c: no centred copy of the rows. A product with 2 or 3
                // columns wastes most of a matrix kernel; one dot product per output does not.
                let mut y = Vec::with_capacity(rows.len() / d * self.dims);
                for row in rows.chunks_exact(d) {
                    for (c, s) in self.components.chunks_exact(d).zip(&shift) {
                        y.push(dot(row, c) - s);
                    }
                }
                y
            })
            .collect()
    }

    /// Serialised as mean then components (what the layout cache stores).
    pub fn to_model(&self) -> Vec<f32> {
        let mut v = self.mean.clone();
        v.extend(&self.components);
        v
    }

    pub fn from_model(model: &[f32], d: usize, dims: usize) -> Option<Self> {
        (model.len() == d * (dims + 1)).then(|| Self {
            mean: model[..d].to_vec(),
            components: model[d..].to_vec(),
            dims,
            explained_variance_ratio: Vec::new(),
        })
    }
}

/// Rows per chunk of the scatter pass: near `CHUNK`, and a multiple of the cores in count,
/// so that no core is left with the last chunk alone.
fn balanced_chunk(n: usize) -> usize {
    let cores = rayon::current_num_threads().max(1);
    let chunks = n.div_ceil(CHUNK * cores).max(1) * cores;
    n.div_ceil(chunks).max(1)
}

/// The column means of the n×d rows `x` and the scatter matrix Σ (x − mean)(x − mean)ᵀ
/// (d×d, f64), in one pass over `x`. The scatter is Xᵀ X − n·mean·meanᵀ (as scikit-learn's
/// `covariance_eigh`): each chunk's Xᵀ X is an f32 product on its own core, summed in f64,
/// with the chunk's column sums taken while it is in cache; only the triangle on and above
/// the diagonal is computed ([`add_upper`]) and mirrored at the end. Rows far from the
/// origin relative to their spread lose precision this way; embeddings are unit vectors.
fn mean_and_scatter(x: &[f32], d: usize, job: &Job) -> Result<(Vec<f32>, Array2<f64>)> {
    let n = x.len() / d;
    let done = AtomicUsize::new(0);
    type Sums = (Vec<f64>, Array2<f64>);
    let zero = || -> Sums { (vec![0f64; d], Array2::<f64>::zeros((d, d))) };
    let (sum, upper) = x
        .par_chunks(balanced_chunk(n) * d)
        .map(|rows| -> Result<(Vec<f32>, Array2<f32>)> {
            job.cancel.check()?;
            let mut out = Array2::<f32>::zeros((d, d));
            add_upper(rows, d, out.as_slice_mut().expect("standard layout"));
            let mut sums = vec![0f32; d];
            for row in rows.chunks_exact(d) {
                sums.iter_mut().zip(row).for_each(|(s, v)| *s += v);
            }
            let rows_done = done.fetch_add(rows.len() / d, Ordering::Relaxed) + rows.len() / d;
            job.report("pca", rows_done as u64, n as u64);
            Ok((sums, out))
        })
        .try_fold(zero, |(mut sum, mut acc), part| -> Result<Sums> {
            let (sums, product) = part?;
            sum.iter_mut().zip(sums).for_each(|(a, b)| *a += b as f64);
            acc.zip_mut_with(&product, |a, b| *a += *b as f64);
            Ok((sum, acc))
        })
        .try_reduce(zero, |(mut s, a), (t, b)| -> Result<Sums> {
            s.iter_mut().zip(t).for_each(|(p, q)| *p += q);
            Ok((s, a + b))
        })?;
    let mean: Vec<f32> = sum.iter().map(|s| (s / n as f64) as f32).collect();
    // Σ (x − μ)(x − μ)ᵀ = Xᵀ X − n μ μᵀ; below the diagonal was not computed: mirror the
    // upper triangle.
    let mut full = upper;
    for i in 0..d {
        for j in i..d {
            full[[i, j]] -= n as f64 * mean[i] as f64 * mean[j] as f64;
        }
        for j in 0..i {
            full[[i, j]] = full[[j, i]];
        }
    }
    Ok((mean, full))
}

/// The `k` largest eigenvalues (descending) of the symmetric d×d `c` and their eigenvectors
/// (columns of a d×k matrix). Subspace iteration on a block of `k` + `OVERSAMPLE` vectors
/// with a Rayleigh–Ritz step, which costs d²·(k + p) per step instead of the full
/// eigendecomposition's d³ (0.28 s at d = 384); converged when every wanted Ritz pair's
/// residual ‖C v − θ v‖ is below `RITZ_TOLERANCE` × θ₁. A spectrum too flat to converge in
/// `MAX_SUBSPACE_STEPS` falls back to the full decomposition.
fn top_eigen(c: Array2<f64>, k: usize) -> Result<(Vec<f64>, Array2<f64>)> {
    if let Some(found) = subspace_top(&c, k)? {
        return Ok(found);
    }
    let (vals, vecs) = eigh_sorted(c)?;
    Ok((
        vals[..k].to_vec(),
        vecs.slice_axis(Axis(1), Slice::from(0..k)).to_owned(),
    ))
}

/// The subspace iteration of `top_eigen`; `None` when it has not converged (or the block
/// would be more than half of d, where the full decomposition is as cheap).
fn subspace_top(c: &Array2<f64>, k: usize) -> Result<Option<(Vec<f64>, Array2<f64>)>> {
    let d = c.nrows();
    let q = k + OVERSAMPLE;
    if 2 * q >= d {
        return Ok(None);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    let mut basis = Array2::<f64>::from_shape_fn((d, q), |_| rng.gen_range(-1.0..1.0));
    orthonormalise(&mut basis);
    for step in 1..=MAX_SUBSPACE_STEPS {
        let z = c.dot(&basis);
        if step % 2 == 0 {
            // Rayleigh–Ritz: the best approximations within span(basis).
            let (theta, w) = eigh_sorted(basis.t().dot(&z))?;
            let ritz = basis.dot(&w);
            let cz = z.dot(&w);
            let scale = theta[0].abs().max(f64::MIN_POSITIVE);
            let converged = (0..k).all(|i| {
                let r: f64 = cz
                    .column(i)
                    .iter()
                    .zip(ritz.column(i))
                    .map(|(a, b)| (a - theta[i] * b).powi(2))
                    .sum();
                r.sqrt() <= RITZ_TOLERANCE * scale
            });
            if converged {
                let vecs = ritz.slice_axis(Axis(1), Slice::from(0..k)).to_owned();
                return Ok(Some((theta[..k].to_vec(), vecs)));
            }
        }
        basis = z;
        orthonormalise(&mut basis);
    }
    Ok(None)
}

/// Every eigenpair of the symmetric `m`, largest eigenvalue first.
fn eigh_sorted(m: Array2<f64>) -> Result<(Vec<f64>, Array2<f64>)> {
    let (vals, vecs) = m
        .eigh_into()
        .map_err(|e| Error::InvalidInput(format!("PCA eigendecomposition failed: {e}")))?
        .sort_eig_desc();
    Ok((vals.to_vec(), vecs))
}

/// Modified Gram–Schmidt on the columns of `m`, twice (enough for orthogonality to working
/// precision). A column that vanishes is left at zero.
fn orthonormalise(m: &mut Array2<f64>) {
    for _ in 0..2 {
        for j in 0..m.ncols() {
            for i in 0..j {
                let dot = m.column(i).dot(&m.column(j));
                let prev = m.column(i).to_owned();
                m.column_mut(j).scaled_add(-dot, &prev);
            }
            let norm = m.column(j).dot(&m.column(j)).sqrt();
            if norm > 0.0 {
                m.column_mut(j).mapv_inplace(|v| v / norm);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ArrayView2;
    use rand::{Rng, SeedableRng};

    /// Points spread mostly along two known orthogonal directions.
    fn planar(n: usize, d: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut a = vec![0f32; d];
        let mut b = vec![0f32; d];
        a[0] = 0.6;
        a[1] = 0.8;
        b[2] = 1.0;
        let mut x = Vec::with_capacity(n * d);
        for _ in 0..n {
            let (s, t): (f32, f32) = (rng.gen_range(-10.0..10.0), rng.gen_range(-3.0..3.0));
            for j in 0..d {
                x.push(5.0 + s * a[j] + t * b[j] + rng.gen_range(-0.01..0.01));
            }
        }
        (x, a, b)
    }

    #[test]
    fn finds_the_directions_of_largest_variance() {
        let d = 8;
        // More rows than one chunk, so the accumulation across chunks is exercised.
        let (x, a, b) = planar(CHUNK + 500, d);
        let pca = Pca::fit(&x, d, 2, &Job::default()).unwrap();
        let c0 = &pca.components[..d];
        let c1 = &pca.components[d..];
        let dot = |u: &[f32], v: &[f32]| u.iter().zip(v).map(|(p, q)| p * q).sum::<f32>();
        assert!(dot(c0, &a).abs() > 0.999, "{c0:?}");
        assert!(dot(c1, &b).abs() > 0.999, "{c1:?}");
        assert!((pca.mean[0] - 5.0).abs() < 0.2);
        // Uniform on [-10,10] vs [-3,3]: variance ratio 100/9.
        let r = &pca.explained_variance_ratio;
        assert!(r[0] > 0.88 && r[0] < 0.94 && r[1] > 0.06, "{r:?}");
        let y = pca.transform(&x[..d]);
        assert_eq!(y.len(), 2);
        let round = Pca::from_model(&pca.to_model(), d, 2).unwrap();
        assert_eq!(round.transform(&x[..3 * d]), pca.transform(&x[..3 * d]));
    }

    /// `out` = the rows of `rows` minus `mean`.
    fn centre(rows: &[f32], mean: &[f32], out: &mut Vec<f32>) {
        out.clear();
        for row in rows.chunks_exact(mean.len()) {
            out.extend(row.iter().zip(mean).map(|(v, m)| v - m));
        }
    }

    /// A symmetric d×d matrix with the eigenvalues `vals` on random orthonormal vectors.
    fn with_spectrum(vals: &[f64], seed: u64) -> Array2<f64> {
        let d = vals.len();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut v = Array2::<f64>::from_shape_fn((d, d), |_| rng.gen_range(-1.0..1.0));
        orthonormalise(&mut v);
        let scaled = &v * &ndarray::Array1::from(vals.to_vec());
        scaled.dot(&v.t())
    }

    #[test]
    fn subspace_iteration_finds_the_full_decompositions_top_pairs() {
        let d: i32 = 96;
        // A decaying spectrum (the iteration converges) and a flat one with two close leaders
        // (it may not: the full decomposition answers then). Either way the answer is exact.
        let decaying: Vec<f64> = (0..d).map(|i| 10.0 * 0.9f64.powi(i)).collect();
        let flat: Vec<f64> = (0..d)
            .map(|i| {
                if i < 2 {
                    2.0 - 1e-7 * i as f64
                } else {
                    1.0 + 1e-3 * (i % 7) as f64
                }
            })
            .collect();
        for (vals, seed) in [(decaying, 1), (flat, 2)] {
            let c = with_spectrum(&vals, seed);
            let fast = subspace_top(&c, 3).unwrap();
            // The decaying spectrum must take the fast path (else this test checks nothing of it).
            assert_eq!(
                fast.is_some(),
                seed == 1,
                "subspace iteration on spectrum {seed}"
            );
            let (top, vecs) = top_eigen(c.clone(), 3).unwrap();
            let (all, full) = eigh_sorted(c.clone()).unwrap();
            for i in 0..3 {
                assert!(
                    (top[i] - all[i]).abs() < 1e-8 * all[0],
                    "{top:?} vs {:?}",
                    &all[..3]
                );
                // Each vector is an eigenvector of c for its value.
                let v = vecs.column(i);
                let r = &c.dot(&v) - &(&v * top[i]);
                assert!(r.dot(&r).sqrt() <= 1e-6 * all[0], "residual of pair {i}");
            }
            // Distinct leaders: the same directions up to sign.
            if all[0] - all[1] > 1e-3 {
                assert!(vecs.column(0).dot(&full.column(0)).abs() > 1.0 - 1e-8);
            }
        }
    }

    #[test]
    fn the_blocked_scatter_equals_the_plain_product() {
        let d = 37; // two tiles' width and a remainder
        let n = 2 * CHUNK + 77;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let x: Vec<f32> = (0..n * d).map(|_| rng.gen_range(-1.0..1.0) + 0.5).collect();
        let (m, s) = mean_and_scatter(&x, d, &Job::default()).unwrap();
        for (j, got) in m.iter().enumerate() {
            let want = (0..n).map(|i| x[i * d + j] as f64).sum::<f64>() / n as f64;
            assert!(
                (*got as f64 - want).abs() < 1e-6,
                "mean {j}: {got} vs {want}"
            );
        }
        let mut centred = Vec::new();
        centre(&x, &m, &mut centred);
        let a = ArrayView2::from_shape((n, d), &centred)
            .unwrap()
            .mapv(|v| v as f64);
        let want = a.t().dot(&a);
        // The products are summed in f32 before the mean is taken off: their error is
        // relative to the uncentred sums Σ xᵢxⱼ (here up to n · 1.5²), not to the centred
        // result. Leaving out n·μμᵀ (n/4 here) or a block of rows would be far outside.
        let bound = 1e-6 * n as f64 * 1.5f64.powi(2);
        for (got, want) in s.iter().zip(want.iter()) {
            assert!((got - want).abs() < bound, "{got} vs {want}");
        }
    }

    #[test]
    fn refuses_more_components_than_dimensions_and_cancels() {
        let (x, _, _) = planar(50, 4);
        assert_eq!(
            Pca::fit(&x, 4, 5, &Job::default()).unwrap_err().code(),
            "invalid_input"
        );
        let job = Job::default();
        job.cancel.cancel();
        assert_eq!(Pca::fit(&x, 4, 2, &job).unwrap_err().code(), "cancelled");
    }
}
