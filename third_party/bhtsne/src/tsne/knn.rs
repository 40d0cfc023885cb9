//! Somna patch: exact k-nearest neighbours for the input similarities, in parallel.
//!
//! 0.4.1 searched a vantage-point tree point by point on one thread. At the dimensions of
//! sentence embeddings (384) such a tree prunes almost nothing, so the search compared
//! nearly every pair one at a time: 42% of a 4,000-point run and most of a 10,000-point
//! one. Here blocks of rows are multiplied against all points at once
//! (‖a − b‖² = ‖a‖² + ‖b‖² − 2 a·b), each block on its own thread, and every row keeps its
//! k nearest by a partial sort. The result is the same exact neighbours.

use ndarray::{ArrayView2, Axis};
use num_traits::{Float, NumCast};
use rayon::prelude::*;

/// Rows per block: 64 × n distances of f64 per thread.
const BLOCK: usize = 64;

/// For each of the `n` rows of the row-major n×d `x`: the indices of its `k` nearest other
/// rows and their squared Euclidean distances, nearest first (ties by index). Returns
/// (indices, squared distances), each n×k row-major.
pub fn exact_knn<T>(x: &[T], n: usize, d: usize, k: usize) -> (Vec<usize>, Vec<f64>)
where
    T: Float + NumCast + Send + Sync,
{
    assert!(k < n, "k = {} neighbours needs more than {} points", k, n);
    let xf: Vec<f64> = x[..n * d]
        .iter()
        .map(|v| v.to_f64().expect("a finite input value"))
        .collect();
    let all = ArrayView2::from_shape((n, d), &xf).expect("x holds n rows of d values");
    let norms: Vec<f64> = all.rows().into_iter().map(|r| r.dot(&r)).collect();
    let mut idx = vec![0usize; n * k];
    let mut dist = vec![0f64; n * k];
    idx.par_chunks_mut(BLOCK * k)
        .zip(dist.par_chunks_mut(BLOCK * k))
        .enumerate()
        .for_each(|(b, (idx_b, dist_b))| {
            let r0 = b * BLOCK;
            let rows = idx_b.len() / k;
            let block = all.slice_axis(Axis(0), (r0..r0 + rows).into());
            let gram = block.dot(&all.t()); // rows × n
            let mut cand: Vec<(f64, usize)> = Vec::with_capacity(n);
            for (r, g) in gram.rows().into_iter().enumerate() {
                let i = r0 + r;
                cand.clear();
                cand.extend(
                    g.iter()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(j, &dot)| ((norms[i] + norms[j] - 2.0 * dot).max(0.0), j)),
                );
                let order = |a: &(f64, usize), b: &(f64, usize)| {
                    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
                };
                cand.select_nth_unstable_by(k - 1, order);
                cand[..k].sort_unstable_by(order);
                for (m, &(d2, j)) in cand[..k].iter().enumerate() {
                    idx_b[r * k + m] = j;
                    dist_b[r * k + m] = d2;
                }
            }
        });
    (idx, dist)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_brute_force_scan() {
        // A deterministic cloud with a duplicate pair (each other's nearest, at distance 0).
        let (n, d, k) = (150, 7, 9);
        let mut x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919 % 1013) as f64 / 1013.0 - 0.5) * ((i % 5) as f64 + 1.0))
            .collect();
        let row3: Vec<f64> = x[3 * d..4 * d].to_vec();
        x[10 * d..11 * d].copy_from_slice(&row3);
        let (idx, dist) = exact_knn(&x, n, d, k);
        for i in 0..n {
            let mut all: Vec<(f64, usize)> = (0..n)
                .filter(|&j| j != i)
                .map(|j| {
                    let d2 = (0..d).map(|t| (x[i * d + t] - x[j * d + t]).powi(2)).sum::<f64>();
                    (d2, j)
                })
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for m in 0..k {
                assert!((dist[i * k + m] - all[m].0).abs() < 1e-9, "row {}, neighbour {}", i, m);
                // Indices agree wherever the distance is not tied within rounding.
                let apart_next = m + 1 < k && (all[m + 1].0 - all[m].0).abs() > 1e-9;
                let apart_prev = m == 0 || (all[m].0 - all[m - 1].0).abs() > 1e-9;
                if apart_next && apart_prev {
                    assert_eq!(idx[i * k + m], all[m].1, "row {}, neighbour {}", i, m);
                }
            }
            assert!(!idx[i * k..(i + 1) * k].contains(&i), "a point is not its own neighbour");
        }
        assert_eq!(idx[3 * k], 10);
        assert_eq!(idx[10 * k], 3);
        assert_eq!(dist[3 * k], 0.0);
    }
}
