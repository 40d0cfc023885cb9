//! Context building: MMR re-ranking for diversity, exact 0-1 knapsack packing under a
//! token budget, and the attention weights over what was packed (seed 003).

use super::assemble::Assembled;
use crate::embed::dot;

/// What the pack stage chose.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Packed {
    /// Ids of the packed memories, in MMR order.
    pub context: Vec<i64>,
    pub used_tokens: usize,
}

/// The pack stage: the subset of the MMR-ordered hits worth most (MMR score, ties broken
/// by relevance) within `budget` tokens; marks them packed with their attention weights.
pub(crate) fn pack(a: &mut Assembled, qvec: &[f32], budget: usize) -> Packed {
    let values: Vec<f64> = a
        .order
        .iter()
        .map(|&(i, s)| s.max(0.0) + 1e-6 * a.relevance[i])
        .collect();
    let tokens: Vec<usize> = a
        .order
        .iter()
        .map(|&(i, _)| a.hits[i].tokens.max(1))
        .collect();
    let chosen = knapsack(&values, &tokens, budget);
    let context: Vec<i64> = chosen
        .iter()
        .map(|&j| a.hits[a.order[j].0].memory.id)
        .collect();
    let packed_vecs: Vec<&[f32]> = chosen
        .iter()
        .map(|&j| a.vectors[a.order[j].0].as_slice())
        .collect();
    let weights = attention(qvec, &packed_vecs);
    for (&j, w) in chosen.iter().zip(weights) {
        let h = &mut a.hits[a.order[j].0];
        h.packed = true;
        h.attention = Some(w);
    }
    Packed {
        context,
        used_tokens: chosen.iter().map(|&j| tokens[j]).sum(),
    }
}

/// Maximal marginal relevance: repeatedly takes the candidate maximising
/// λ·relevance − (1−λ)·max similarity to those already taken. Returns (index, mmr score)
/// in selection order.
pub fn mmr(relevance: &[f64], vectors: &[&[f32]], lambda: f64) -> Vec<(usize, f64)> {
    let n = relevance.len();
    let sims = similarities(vectors);
    let mut taken = Vec::with_capacity(n);
    let mut max_sim = vec![f64::NEG_INFINITY; n];
    let mut used = vec![false; n];
    for _ in 0..n {
        let mut best: Option<(usize, f64)> = None;
        for i in (0..n).filter(|&i| !used[i]) {
            let penalty = if taken.is_empty() { 0.0 } else { max_sim[i] };
            let score = lambda * relevance[i] - (1.0 - lambda) * penalty;
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((i, score));
            }
        }
        let Some((pick, score)) = best else { break };
        used[pick] = true;
        taken.push((pick, score));
        for i in (0..n).filter(|&i| !used[i]) {
            max_sim[i] = max_sim[i].max(sims[i * n + pick] as f64);
        }
    }
    taken
}

/// Every pairwise dot product of `vectors`, row-major (n × n): one matrix product on the
/// CPU matrix kernels candle uses for the encoder, instead of n²/2 separate products
/// (k = 200 hits: 0.2 ms instead of 1.3 ms). Vectors of unequal length fall back to
/// [`dot`] pair by pair.
fn similarities(vectors: &[&[f32]]) -> Vec<f32> {
    let n = vectors.len();
    let d = vectors.first().map_or(0, |v| v.len());
    if n > 0 && d > 0 && vectors.iter().all(|v| v.len() == d) {
        let flat: Vec<f32> = vectors.iter().flat_map(|v| v.iter().copied()).collect();
        let product = candle_core::Tensor::from_vec(flat, (n, d), &candle_core::Device::Cpu)
            .and_then(|m| m.matmul(&m.t()?))
            .and_then(|g| g.flatten_all()?.to_vec1::<f32>());
        if let Ok(g) = product {
            return g;
        }
    }
    let mut g = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            g[i * n + j] = dot(vectors[i], vectors[j]);
        }
    }
    g
}

/// Exact 0-1 knapsack by dynamic programming: the subset of items maximising total value
/// with total weight ≤ `capacity`. Returns the chosen indices in input order.
pub fn knapsack(values: &[f64], weights: &[usize], capacity: usize) -> Vec<usize> {
    let n = values.len();
    // Only items worth something are ever taken; when they all fit, they are the optimum,
    // and otherwise no capacity beyond their total weight is of use.
    let worth: Vec<usize> = (0..n).filter(|&i| values[i] > 0.0).collect();
    let total: usize = worth.iter().map(|&i| weights[i]).sum();
    if total <= capacity {
        return worth;
    }
    let capacity = capacity.min(total);
    let mut best = vec![0.0f64; capacity + 1];
    // take[i][w]: item i is taken in the optimum for capacity w over items 0..=i.
    let mut take = vec![false; n * (capacity + 1)];
    for i in 0..n {
        let (v, wt) = (values[i].max(0.0), weights[i]);
        if wt > capacity {
            continue;
        }
        for w in (wt..=capacity).rev() {
            let with = best[w - wt] + v;
            if with > best[w] {
                best[w] = with;
                take[i * (capacity + 1) + w] = true;
            }
        }
    }
    let mut chosen = Vec::new();
    let mut w = capacity;
    for i in (0..n).rev() {
        if take[i * (capacity + 1) + w] {
            chosen.push(i);
            w -= weights[i];
        }
    }
    chosen.reverse();
    chosen
}

/// softmax(q·m / √d) over the packed memories' vectors.
pub fn attention(query: &[f32], vectors: &[&[f32]]) -> Vec<f64> {
    if vectors.is_empty() {
        return Vec::new();
    }
    let scale = (query.len() as f64).sqrt();
    let logits: Vec<f64> = vectors
        .iter()
        .map(|v| dot(query, v) as f64 / scale)
        .collect();
    let max = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knapsack_is_exact() {
        // Greedy by value density would take item 0 (6/5) and then nothing fits: 6.
        // The optimum is items 1 and 2: 5 + 5 = 10 within 8 tokens.
        assert_eq!(knapsack(&[6.0, 5.0, 5.0], &[5, 4, 4], 8), vec![1, 2]);
        assert_eq!(knapsack(&[1.0, 2.0], &[10, 20], 5), Vec::<usize>::new());
        assert_eq!(knapsack(&[1.0, 2.0, 3.0], &[1, 1, 1], 3), vec![0, 1, 2]);
        assert_eq!(
            knapsack(&[1.0, 0.0, 3.0], &[1, 1, 1], usize::MAX),
            vec![0, 2],
            "everything worth something fits: no table for a huge budget"
        );
    }

    #[test]
    fn knapsack_matches_brute_force_on_random_cases() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..200 {
            let n = rng.gen_range(1..10);
            let values: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..1.0)).collect();
            let weights: Vec<usize> = (0..n).map(|_| rng.gen_range(1..20)).collect();
            let cap = rng.gen_range(0..60);
            let got: f64 = knapsack(&values, &weights, cap)
                .iter()
                .map(|&i| values[i])
                .sum();
            let mut best: f64 = 0.0;
            for mask in 0u32..(1 << n) {
                let (mut v, mut w) = (0.0, 0);
                for i in 0..n {
                    if mask & (1 << i) != 0 {
                        v += values[i];
                        w += weights[i];
                    }
                }
                if w <= cap {
                    best = best.max(v);
                }
            }
            assert!((got - best).abs() < 1e-9, "{got} vs {best}");
        }
    }

    #[test]
    fn mmr_prefers_diversity_after_the_first_pick() {
        let a = [1.0f32, 0.0];
        let a2 = [0.999f32, 0.0447];
        let b = [0.0f32, 1.0];
        let order = mmr(&[0.9, 0.89, 0.5], &[&a, &a2, &b], 0.5);
        assert_eq!(order[0].0, 0);
        assert_eq!(
            order[1].0, 2,
            "the near-duplicate of the first pick comes last"
        );
    }

    #[test]
    fn pack_marks_what_fits_the_budget_in_mmr_order() {
        use super::super::fixture::memory;
        use super::super::{Hit, Origin, Signals};
        let hit = |id: i64, tokens: usize| Hit {
            memory: memory(id, "x", "Ada"),
            rank: Some(id as usize),
            origin: Origin::Vector,
            signals: Signals::default(),
            score: 1.0,
            mmr_score: None,
            mmr_rank: None,
            tokens,
            packed: false,
            attention: None,
            reasons: vec![],
        };
        let mut a = Assembled {
            hits: vec![hit(1, 6), hit(2, 5), hit(3, 5)],
            near_misses: vec![],
            connected: vec![],
            vectors: vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.6, 0.8]],
            relevance: vec![1.0, 0.9, 0.8],
            order: vec![(0, 0.9), (2, 0.5), (1, 0.45)],
        };
        // 6 + 5 > 10: hit 1 alone is worth 0.9, hits 3 and 2 together 0.95.
        let p = pack(&mut a, &[1.0, 0.0], 10);
        assert_eq!(
            p,
            Packed {
                context: vec![3, 2],
                used_tokens: 10
            }
        );
        assert!(!a.hits[0].packed && a.hits[1].packed && a.hits[2].packed);
        let total: f64 = a.hits.iter().filter_map(|h| h.attention).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!(
            a.hits[2].attention > a.hits[1].attention,
            "3 is nearer the query"
        );
        assert_eq!(pack(&mut a, &[1.0, 0.0], 0).context, Vec::<i64>::new());
    }

    #[test]
    fn similarities_are_the_pairwise_dot_products() {
        let (a, b, c) = ([1.0f32, 0.0, 2.0], [0.5f32, 1.0, 0.0], [0.0f32, 3.0, 1.0]);
        let g = similarities(&[&a, &b, &c]);
        let want = [5.0, 0.5, 2.0, 0.5, 1.25, 3.0, 2.0, 3.0, 10.0];
        assert!(
            g.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-6),
            "{g:?}"
        );
        let ragged = similarities(&[&a, &[1.0f32, 1.0]]);
        assert_eq!(
            ragged,
            vec![5.0, 1.0, 1.0, 2.0],
            "unequal lengths: pair by pair"
        );
        assert!(similarities(&[]).is_empty());
    }

    #[test]
    fn attention_is_a_distribution() {
        let w = attention(&[1.0, 0.0], &[&[1.0, 0.0], &[0.0, 1.0]]);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12 && w[0] > w[1]);
    }
}
