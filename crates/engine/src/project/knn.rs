//! Exact k nearest rows by dot product, computed as chunked f32 matrix products
//! (queries × baseᵀ, a chunk of query rows at a time): for placing points near a few
//! thousand landmarks and for quality metrics on samples. Never an n × n matrix.

use crate::events::Job;
use crate::Result;
use ndarray::ArrayView2;

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
    let mut out = Vec::with_capacity(nq);
    for (c, rows) in queries.chunks(CHUNK * d).enumerate() {
        job.cancel.check()?;
        let q = ArrayView2::from_shape((rows.len() / d, d), rows).expect("query shape");
        let sims = q.dot(&b.t());
        for (i, row) in sims.rows().into_iter().enumerate() {
            let me = c * CHUNK + i;
            let mut best: Vec<(usize, f32)> = row
                .iter()
                .copied()
                .enumerate()
                .filter(|(j, _)| !(skip_self && *j == me))
                .collect();
            let cmp = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            if best.len() > k {
                best.select_nth_unstable_by(k, cmp);
                best.truncate(k);
            }
            best.sort_by(cmp);
            out.push(best);
        }
        job.report(stage, out.len() as u64, nq as u64);
    }
    Ok(out)
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
}
