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

/// A row's nearest rows, best first, as (row, dot).
type Neighbours = Vec<(usize, f32)>;

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
) -> Result<Vec<Neighbours>> {
    let nq = queries.len() / d;
    let nb = base.len() / d;
    let b = ArrayView2::from_shape((nb, d), base).expect("base shape");
    let done = AtomicUsize::new(0);
    // Blocks of query rows on every core; each block's products and selections are its own.
    let blocks: Vec<Vec<Neighbours>> = queries
        .par_chunks(CHUNK * d)
        .enumerate()
        .map(|(c, rows)| {
            job.cancel.check()?;
            let q = ArrayView2::from_shape((rows.len() / d, d), rows).expect("query shape");
            let sims = q.dot(&b.t());
            let mut out = Vec::with_capacity(rows.len() / d);
            // One scratch row per block: each kept row holds k entries, not the base's n.
            let mut scratch: Vec<(usize, f32)> = Vec::with_capacity(nb);
            for (i, row) in sims.rows().into_iter().enumerate() {
                let me = c * CHUNK + i;
                scratch.clear();
                scratch.extend(
                    row.iter()
                        .copied()
                        .enumerate()
                        .filter(|(j, _)| !(skip_self && *j == me)),
                );
                out.push(top_k(&mut scratch, k));
            }
            let finished = done.fetch_add(out.len(), Ordering::Relaxed) + out.len();
            job.report(stage, finished as u64, nq as u64);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(blocks.into_iter().flatten().collect())
}

/// Approximate `k` nearest rows of every row of `x` by dot product (itself excluded), best
/// first, for neighbour graphs too large for the exact search. The rows are split into
/// cells around a seeded sample of √(probe·n) rows, each row in the cell of its most similar
/// sample row; a row's neighbours are sought among the rows of its own cell and of the
/// `probe − 1` cells whose sample rows are most similar to its cell's, one matrix product per
/// block of a cell's rows. Cost about 2·n·√(probe·n)·d instead of n²·d. A row whose cells
/// hold fewer than `k` others is searched exactly.
pub fn approx_nearest_by_dot(
    x: &[f32],
    d: usize,
    k: usize,
    probe: usize,
    seed: u64,
    job: &Job,
    stage: &'static str,
) -> Result<Vec<Neighbours>> {
    let n = x.len() / d;
    if n == 0 {
        return Ok(Vec::new());
    }
    let cells = (((probe.max(1) * n) as f64).sqrt() as usize).clamp(1, n);
    let centres = super::landmarks::Landmarks::choose(x, d, cells, seed);
    let home = nearest_by_dot(x, &centres.x, d, 1, false, job, stage)?;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); centres.len()];
    for (i, h) in home.iter().enumerate() {
        members[h[0].0].push(i);
    }
    drop(home);
    let near_cells = nearest_by_dot(
        &centres.x,
        &centres.x,
        d,
        probe.saturating_sub(1),
        true,
        job,
        stage,
    )?;
    let done = AtomicUsize::new(0);
    let found: Vec<Vec<(usize, Neighbours)>> = (0..centres.len())
        .into_par_iter()
        .map(|c| {
            job.cancel.check()?;
            let rows = &members[c];
            let candidates: Vec<usize> = std::iter::once(c)
                .chain(near_cells[c].iter().map(|p| p.0))
                .flat_map(|cell| members[cell].iter().copied())
                .collect();
            let gather = |ids: &[usize]| -> Vec<f32> {
                ids.iter()
                    .flat_map(|&i| x[i * d..(i + 1) * d].iter().copied())
                    .collect()
            };
            let base = gather(&candidates);
            let b = ArrayView2::from_shape((candidates.len(), d), &base[..]).expect("shape");
            let mut out = Vec::with_capacity(rows.len());
            let mut scratch: Vec<(usize, f32)> = Vec::with_capacity(candidates.len());
            for block in rows.chunks(CHUNK) {
                let q = gather(block);
                let q = ArrayView2::from_shape((block.len(), d), &q[..]).expect("shape");
                let sims = q.dot(&b.t());
                for (&row, sim) in block.iter().zip(sims.rows()) {
                    scratch.clear();
                    scratch.extend(
                        candidates
                            .iter()
                            .copied()
                            .zip(sim.iter().copied())
                            .filter(|&(j, _)| j != row),
                    );
                    out.push((row, top_k(&mut scratch, k)));
                }
            }
            let finished = done.fetch_add(rows.len(), Ordering::Relaxed) + rows.len();
            job.report(stage, finished as u64, n as u64);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let mut result: Vec<Neighbours> = vec![Vec::new(); n];
    for (row, best) in found.into_iter().flatten() {
        result[row] = best;
    }
    // Rows whose cells were too small: the exact search, all of them against every row at once.
    let short: Vec<usize> = (0..n).filter(|&i| result[i].len() < k.min(n - 1)).collect();
    let sx: Vec<f32> = short
        .iter()
        .flat_map(|&i| x[i * d..(i + 1) * d].iter().copied())
        .collect();
    let exact = nearest_by_dot(&sx, x, d, k + 1, false, job, stage)?;
    for (&i, row) in short.iter().zip(exact) {
        result[i] = row.into_iter().filter(|p| p.0 != i).take(k).collect();
    }
    Ok(result)
}

/// The `k` best of `scratch` (largest dot, ties by lower row), best first, as a row of its
/// own (`scratch` is reordered).
fn top_k(scratch: &mut [(usize, f32)], k: usize) -> Neighbours {
    let cmp = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scratch.len() > k {
        scratch.select_nth_unstable_by(k, cmp);
    }
    let mut best = scratch[..k.min(scratch.len())].to_vec();
    best.sort_by(cmp);
    best
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
    fn cells_find_most_of_the_exact_neighbours() {
        let d = 24;
        let (x, _) = crate::project::tsne::tests::blobs(3000, 30, d, 4);
        let job = Job::default();
        let exact = nearest_by_dot(&x, &x, d, 15, true, &job, "t").unwrap();
        let approx = approx_nearest_by_dot(&x, d, 15, 8, 1, &job, "t").unwrap();
        assert_eq!(approx.len(), 3000);
        let mut hits = 0;
        for (i, (e, a)) in exact.iter().zip(&approx).enumerate() {
            assert_eq!(a.len(), 15);
            assert!(a.iter().all(|p| p.0 != i), "row {i} lists itself");
            assert!(a.windows(2).all(|w| w[0].1 >= w[1].1));
            hits += a.iter().filter(|p| e.iter().any(|q| q.0 == p.0)).count();
        }
        let recall = hits as f64 / (3000.0 * 15.0);
        assert!(recall > 0.9, "recall@15 {recall}");
        // Tiny inputs: every row still gets its neighbours (the exact fallback).
        let small = approx_nearest_by_dot(&x[..20 * d], d, 15, 8, 1, &job, "t").unwrap();
        assert!(small.iter().all(|r| r.len() == 15));
        for (i, r) in small.iter().enumerate() {
            assert!(r.iter().all(|p| p.0 != i && p.0 < 20), "row {i}: {r:?}");
        }
        assert!(approx_nearest_by_dot(&[], d, 15, 8, 1, &job, "t")
            .unwrap()
            .is_empty());
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
