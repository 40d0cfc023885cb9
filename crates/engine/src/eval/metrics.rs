//! Ranking metrics (seed 003): recall@k, precision@k, NDCG@k with binary relevance.

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
}
