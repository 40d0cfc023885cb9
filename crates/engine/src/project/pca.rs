//! PCA by the covariance matrix: Xᵀ X accumulated in row chunks as f32 matrix products
//! (matrixmultiply), then a symmetric eigendecomposition (linfa-linalg) of the d×d result.
//! For n ≫ d this is what scikit-learn's `covariance_eigh` solver does; linfa-reduction's
//! `Pca` takes an SVD of the whole n×d matrix in f64, which is several times slower.

use crate::events::Job;
use crate::{Error, Result};
use linfa_linalg::eigh::{EigSort, EighInto};
use ndarray::{Array2, ArrayView2};

/// Rows per matrix product; also the granularity of progress and cancellation.
const CHUNK: usize = 8192;

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
        let mut mean = vec![0f64; d];
        for row in x.chunks_exact(d) {
            for (m, v) in mean.iter_mut().zip(row) {
                *m += *v as f64;
            }
        }
        mean.iter_mut().for_each(|m| *m /= n as f64);
        let mean32: Vec<f32> = mean.iter().map(|m| *m as f32).collect();
        let mut cov = Array2::<f64>::zeros((d, d));
        let mut centred = Vec::with_capacity(CHUNK.min(n) * d);
        for (c, rows) in x.chunks(CHUNK * d).enumerate() {
            job.cancel.check()?;
            centre(rows, &mean32, &mut centred);
            let block = ArrayView2::from_shape((rows.len() / d, d), &centred).expect("shape");
            let part = block.t().dot(&block);
            cov.zip_mut_with(&part, |a, b| *a += *b as f64);
            job.report("pca", ((c + 1) * CHUNK).min(n) as u64, n as u64);
        }
        cov.mapv_inplace(|v| v / (n.max(2) - 1) as f64);
        let total: f64 = cov.diag().sum();
        let (vals, vecs) = cov
            .eigh_into()
            .map_err(|e| Error::InvalidInput(format!("PCA eigendecomposition failed: {e}")))?
            .sort_eig_desc();
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
        let n = x.len() / d;
        let comps = ArrayView2::from_shape((self.dims, d), &self.components).expect("shape");
        let mut out = Vec::with_capacity(n * self.dims);
        let mut centred = Vec::with_capacity(CHUNK.min(n) * d);
        for rows in x.chunks(CHUNK * d) {
            centre(rows, &self.mean, &mut centred);
            let block = ArrayView2::from_shape((rows.len() / d, d), &centred).expect("shape");
            out.extend(block.dot(&comps.t()).iter());
        }
        out
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

/// `out` = the rows of `rows` minus `mean`.
fn centre(rows: &[f32], mean: &[f32], out: &mut Vec<f32>) {
    out.clear();
    for row in rows.chunks_exact(mean.len()) {
        out.extend(row.iter().zip(mean).map(|(v, m)| v - m));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
