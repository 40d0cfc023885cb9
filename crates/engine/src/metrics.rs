//! Ranking metrics (seed 003): recall@k, precision@k, NDCG@k with binary or graded
//! relevance, intra-list diversity; and the trustworthiness of a projection.

use std::collections::HashSet;

/// Fraction of `relevant` found in the first `k` of `ranked`.
pub fn recall_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|r| relevant.contains(*r))
        .count();
    found as f64 / relevant.len() as f64
}

/// 1 when every relevant item is in the first `k`.
pub fn all_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if recall_at_k(ranked, relevant, k) >= 1.0 - 1e-12 {
        1.0
    } else {
        0.0
    }
}

/// Fraction of the first `k` that is relevant.
pub fn precision_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    ranked
        .iter()
        .take(k)
        .filter(|r| relevant.contains(*r))
        .count() as f64
        / k as f64
}

/// Normalised discounted cumulative gain at `k`, binary gains.
pub fn ndcg_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, r)| relevant.contains(*r))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(k))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    if ideal > 0.0 {
        dcg / ideal
    } else {
        0.0
    }
}

/// NDCG@k with graded relevance, the seed's form: gains (2^rel − 1) / log2(rank + 1), the
/// ideal being the same relevances sorted best first. `relevances` are in ranked order.
pub fn graded_ndcg_at_k(relevances: &[f64], k: usize) -> f64 {
    let dcg = |rels: &[f64]| -> f64 {
        rels.iter()
            .take(k)
            .enumerate()
            .map(|(i, r)| (2f64.powf(*r) - 1.0) / (i as f64 + 2.0).log2())
            .sum()
    };
    let mut ideal = relevances.to_vec();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let best = dcg(&ideal);
    if best > 0.0 {
        dcg(relevances) / best
    } else {
        0.0
    }
}

/// Intra-list diversity: the mean pairwise cosine distance (1 − cos) of a selection.
pub fn intra_list_diversity(vectors: &[&[f32]]) -> f64 {
    let norm = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let mut total = 0.0;
    let mut pairs = 0usize;
    for (i, a) in vectors.iter().enumerate() {
        for b in &vectors[i + 1..] {
            let dot: f64 = a
                .iter()
                .zip(b.iter())
                .map(|(x, y)| *x as f64 * *y as f64)
                .sum();
            let denom = norm(a) * norm(b);
            let cos = if denom > 0.0 { dot / denom } else { 0.0 };
            total += 1.0 - cos;
            pairs += 1;
        }
    }
    if pairs == 0 {
        0.0
    } else {
        total / pairs as f64
    }
}

/// Trustworthiness@k of a projection (Venna & Kaski; scikit-learn's definition): 1 minus a
/// penalty for every point among a point's k nearest in the layout that is not among its
/// k nearest in the original space, by how far down the original ranking it is. Exact and
/// O(n²) in time (O(n) memory per row): meant for samples of up to ~10K points.
/// `high` is n×d, `low` n×dims, both row-major; distances are Euclidean.
pub fn trustworthiness(high: &[f32], d: usize, low: &[f32], dims: usize, k: usize) -> f64 {
    let n = high.len() / d;
    if n < 3 || k == 0 || 2 * n < 3 * k + 2 {
        return 1.0;
    }
    let sq = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>();
    let high_norms: Vec<f32> = high.chunks_exact(d).map(sq).collect();
    let hv = ndarray::ArrayView2::from_shape((n, d), high).expect("shape");
    let mut penalty = 0f64;
    const CHUNK: usize = 512;
    for start in (0..n).step_by(CHUNK) {
        let end = (start + CHUNK).min(n);
        let block = ndarray::ArrayView2::from_shape((end - start, d), &high[start * d..end * d])
            .expect("shape");
        let dots = block.dot(&hv.t());
        for i in start..end {
            let row = dots.row(i - start);
            // Squared original distances from i (self excluded by +inf).
            let dist: Vec<f32> = (0..n)
                .map(|j| {
                    if j == i {
                        f32::INFINITY
                    } else {
                        high_norms[i] + high_norms[j] - 2.0 * row[j]
                    }
                })
                .collect();
            let li = &low[i * dims..(i + 1) * dims];
            let mut low_d: Vec<(f32, usize)> = (0..n)
                .filter(|&j| j != i)
                .map(|j| {
                    let lj = &low[j * dims..(j + 1) * dims];
                    (
                        li.iter()
                            .zip(lj)
                            .map(|(a, b)| (a - b) * (a - b))
                            .sum::<f32>(),
                        j,
                    )
                })
                .collect();
            low_d.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for &(_, j) in &low_d[..k] {
                // Rank of j among i's original neighbours, 1 = nearest.
                let rank = dist
                    .iter()
                    .enumerate()
                    .filter(|&(m, dm)| *dm < dist[j] || (*dm == dist[j] && m < j))
                    .count()
                    + 1;
                if rank > k {
                    penalty += (rank - k) as f64;
                }
            }
        }
    }
    let (n, k) = (n as f64, k as f64);
    1.0 - 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0)) * penalty
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn metrics_on_a_known_ranking() {
        let ranked = s(&["a", "x", "b", "y"]);
        let rel: HashSet<String> = s(&["a", "b", "c"]).into_iter().collect();
        assert!((recall_at_k(&ranked, &rel, 2) - 1.0 / 3.0).abs() < 1e-12);
        assert!((recall_at_k(&ranked, &rel, 4) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(all_at_k(&ranked, &rel, 4), 0.0);
        assert_eq!(precision_at_k(&ranked, &rel, 2), 0.5);
        let expected = (1.0 + 1.0 / 4f64.log2()) / (1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2());
        assert!((ndcg_at_k(&ranked, &rel, 10) - expected).abs() < 1e-12);
        let perfect = s(&["a", "b", "c"]);
        assert!((ndcg_at_k(&perfect, &rel, 10) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn graded_ndcg_and_diversity() {
        assert!((graded_ndcg_at_k(&[3.0, 2.0, 0.0], 3) - 1.0).abs() < 1e-12);
        let swapped = graded_ndcg_at_k(&[2.0, 3.0, 0.0], 3);
        let ideal = 7.0 + 3.0 / 3f64.log2();
        assert!((swapped - (3.0 + 7.0 / 3f64.log2()) / ideal).abs() < 1e-12);
        assert_eq!(graded_ndcg_at_k(&[0.0, 0.0], 2), 0.0);
        let (a, b, c) = ([1.0f32, 0.0], [0.0f32, 1.0], [-1.0f32, 0.0]);
        // Pairwise distances 1, 2, 1 → mean 4/3.
        assert!((intra_list_diversity(&[&a, &b, &c]) - 4.0 / 3.0).abs() < 1e-9);
        assert_eq!(intra_list_diversity(&[&a]), 0.0);
    }

    #[test]
    fn trustworthiness_is_one_for_an_isometry_and_low_for_a_scramble() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let n = 600;
        let high: Vec<f32> = (0..n * 3).map(|_| rng.gen_range(-1.0..1.0)).collect();
        // The same points, rotated in the plane of the first two axes: same neighbours.
        let rotated: Vec<f32> = high
            .chunks_exact(3)
            .flat_map(|p| [0.6 * p[0] - 0.8 * p[1], 0.8 * p[0] + 0.6 * p[1], p[2]])
            .collect();
        assert!((trustworthiness(&high, 3, &rotated, 3, 10) - 1.0).abs() < 1e-9);
        // Dropping the third axis keeps most structure; random positions keep none.
        let flat: Vec<f32> = high.chunks_exact(3).flat_map(|p| [p[0], p[1]]).collect();
        let t_flat = trustworthiness(&high, 3, &flat, 2, 10);
        let random: Vec<f32> = (0..n * 2).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let t_random = trustworthiness(&high, 3, &random, 2, 10);
        assert!(t_flat > 0.8 && t_flat < 1.0, "{t_flat}");
        assert!(t_random < 0.6, "{t_random}");
    }
}
