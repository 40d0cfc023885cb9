//! Exact k nearest rows by dot product, computed as chunked f32 matrix products
//! (queries × baseᵀ, a chunk of query rows at a time): for placing points near a few
//! thousand landmarks and for quality metrics on samples. Never an n × n matrix; blocks of
//! query rows run on every core.

use crate::events::Job;
use crate::Result;
use ndarray::ArrayView2;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const CHUNK: usize = 1024;

/// For every row of `queries`, the `k` rows of `base` with the largest dot product,
/// best first, as (row, dot). `skip_self` drops base row i for query row i (same data).
pub fn nearest_by_dot(
    queries: &[f32],
    base: &[f32],
    d: usize,
    k: usize,
    skip_self: bool,
    job: &Job,
    stage: &'static str,
) -> Result<Vec<Vec<(usize, f32)>>> {
    let nq = queries.len() / d;
    let nb = base.len() / d;
    let b = ArrayView2::from_shape((nb, d), base).expect("base shape");
    let done = AtomicUsize::new(0);
    // Blocks of query rows on every core; each block's products and selections are its own.
    let blocks: Vec<Vec<Vec<(usize, f32)>>> = queries
        .par_chunks(CHUNK * d)
        .enumerate()
        .map(|(c, rows)| {
            job.cancel.check()?;
            let q = ArrayView2::from_shape((rows.len() / d, d), rows).expect("query shape");
            let sims = q.dot(&b.t());
            let mut out = Vec::with_capacity(rows.len() / d);
            // One scratch row per block: each kept row holds k entries, not the base's n.
            let mut scratch: Vec<(usize, f32)> = Vec::with_capacity(nb);
            let cmp = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            for (i, row) in sims.rows().into_iter().enumerate() {
                let me = c * CHUNK + i;
                scratch.clear();
                scratch.extend(
                    row.iter()
                        .copied()
                        .enumerate()
                        .filter(|(j, _)| !(skip_self && *j == me)),
                );
                if scratch.len() > k {
                    scratch.select_nth_unstable_by(k, cmp);
                }
                let mut best = scratch[..k.min(scratch.len())].to_vec();
                best.sort_by(cmp);
                out.push(best);
            }
            let finished = done.fetch_add(out.len(), Ordering::Relaxed) + out.len();
            job.report(stage, finished as u64, nq as u64);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(blocks.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_most_similar_rows() {
        let base = [1.0, 0.0, 0.0, 1.0, 0.7, 0.7];
        let q = [0.9, 0.1, 0.0, -1.0];
        let nn = nearest_by_dot(&q, &base, 2, 2, false, &Job::default(), "t").unwrap();
        assert_eq!(nn[0].iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(nn[1][0].0, 0);
        let own = nearest_by_dot(&base, &base, 2, 1, true, &Job::default(), "t").unwrap();
        assert_eq!(own[0][0].0, 2);
    }

    #[test]
    fn rows_hold_k_entries_not_the_base_and_blocks_keep_their_order() {
        // More queries than a block, against a base far larger than k: each kept row must
        // not carry the base's length (100K rows × 20K landmarks once took 25 GB).
        let d = 4;
        let base: Vec<f32> = (0..3000 * d)
            .map(|i| ((i * 7919) % 101) as f32 / 101.0)
            .collect();
        let q = &base[..(CHUNK + 300) * d];
        let nn = nearest_by_dot(q, &base, d, 5, true, &Job::default(), "t").unwrap();
        assert_eq!(nn.len(), CHUNK + 300);
        assert!(nn.iter().all(|r| r.len() == 5 && r.capacity() <= 5));
        // Row i never lists itself, and its best is at least as similar as any other row.
        for (i, r) in nn.iter().enumerate().step_by(97) {
            assert!(r.iter().all(|p| p.0 != i));
            let dot = |j: usize| (0..d).map(|t| q[i * d + t] * base[j * d + t]).sum::<f32>();
            let best = (0..3000)
                .filter(|&j| j != i)
                .map(dot)
                .fold(f32::MIN, f32::max);
            assert!(
                (r[0].1 - best).abs() < 1e-5,
                "row {i}: {} vs {best}",
                r[0].1
            );
        }
    }
}
