//! Tests of Somna's patch (the search walk, inline neighbour entries, the dot product):
//! answers are checked against brute force, with and without a filter, and across a dump
//! and reload.

use anndists::dist::{DistDot, Distance};
use hnsw_rs::prelude::*;
use rand::prelude::*;

const DIM: usize = 48;

/// Clustered unit vectors (shrunk a hair so 1 - a·b stays non-negative), reproducible.
fn vectors(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let centres: Vec<Vec<f32>> = (0..20)
        .map(|_| (0..DIM).map(|_| rng.random_range(-1.0..1.0)).collect())
        .collect();
    (0..n)
        .map(|_| {
            let c = &centres[rng.random_range(0..centres.len())];
            let mut v: Vec<f32> = c.iter().map(|x| x + rng.random_range(-0.6..0.6)).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt() * 1.0001;
            v.iter_mut().for_each(|x| *x /= norm);
            v
        })
        .collect()
}

fn exact(base: &[Vec<f32>], q: &[f32], k: usize, pass: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut scored: Vec<(f32, usize)> = base
        .iter()
        .enumerate()
        .filter(|(i, _)| pass(*i))
        .map(|(i, v)| (DistDot.eval(q, v), i))
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.into_iter().take(k).map(|s| s.1).collect()
}

fn built(base: &[Vec<f32>]) -> Hnsw<'static, f32, DistDot> {
    let hnsw = Hnsw::new(16, base.len(), 16, 100, DistDot);
    let refs: Vec<(&[f32], usize)> = base.iter().enumerate().map(|(i, v)| (&v[..], i)).collect();
    hnsw.parallel_insert_slice(&refs);
    hnsw
}

fn recall(found: &[Vec<usize>], truth: &[Vec<usize>]) -> f64 {
    let hits: usize = found
        .iter()
        .zip(truth)
        .map(|(f, t)| f.iter().filter(|id| t.contains(id)).count())
        .sum();
    hits as f64 / truth.iter().map(Vec::len).sum::<usize>() as f64
}

#[test]
fn searches_find_the_exact_nearest_neighbours() {
    let base = vectors(3000, 1);
    let queries = vectors(100, 2);
    let hnsw = built(&base);
    assert_eq!(hnsw.get_nb_point(), base.len());
    let truth: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| exact(&base, q, 10, |_| true))
        .collect();
    let found: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| {
            let hits = hnsw.search(q, 10, 64);
            assert_eq!(hits.len(), 10);
            assert!(
                hits.windows(2).all(|w| w[0].distance <= w[1].distance),
                "nearest first"
            );
            hits.iter().map(|n| n.d_id).collect()
        })
        .collect();
    // hnsw_rs 0.3.5 unpatched: 0.950 on this data at ef 64; the patched walk: 0.949–0.952.
    let r = recall(&found, &truth);
    assert!(r >= 0.93, "recall@10 {r}");
}

#[test]
fn a_filtered_search_returns_k_accepted_points_nearest_first() {
    let base = vectors(3000, 3);
    let queries = vectors(60, 4);
    let hnsw = built(&base);
    // One point in ten is accepted: the walk has to pass through rejected points.
    let accept = |id: &usize| id % 10 == 3;
    let truth: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| exact(&base, q, 10, |i| accept(&i)))
        .collect();
    let found: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| {
            let hits = hnsw.search_filter(q, 10, 64, Some(&accept));
            assert_eq!(hits.len(), 10, "k accepted points");
            assert!(hits.iter().all(|n| accept(&n.d_id)), "only accepted points");
            assert!(hits.windows(2).all(|w| w[0].distance <= w[1].distance));
            hits.iter().map(|n| n.d_id).collect()
        })
        .collect();
    let r = recall(&found, &truth);
    assert!(r >= 0.95, "filtered recall@10 {r}");
}

#[test]
fn a_filter_that_accepts_nothing_returns_nothing() {
    let base = vectors(500, 5);
    let hnsw = built(&base);
    let none = |_: &usize| false;
    assert!(hnsw.search_filter(&base[0], 10, 32, Some(&none)).is_empty());
}

#[test]
fn a_reloaded_index_answers_the_same_and_keeps_growing() {
    let base = vectors(2000, 6);
    let hnsw = built(&base[..1500]);
    let dir = tempfile::tempdir().unwrap();
    let name = hnsw.file_dump(dir.path(), "somna").unwrap();
    let before: Vec<Vec<usize>> = base[1500..1600]
        .iter()
        .map(|q| hnsw.search(q, 10, 64).iter().map(|n| n.d_id).collect())
        .collect();
    let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir.path(), &name)));
    let reloaded: Hnsw<'static, f32, DistDot> = io.load_hnsw().unwrap();
    let after: Vec<Vec<usize>> = base[1500..1600]
        .iter()
        .map(|q| reloaded.search(q, 10, 64).iter().map(|n| n.d_id).collect())
        .collect();
    assert_eq!(before, after);
    // Points added after the reload get ranks after the loaded ones and are found.
    for (i, v) in base.iter().enumerate().skip(1500) {
        reloaded.insert_slice((v, i));
    }
    assert_eq!(reloaded.get_nb_point(), base.len());
    let truth: Vec<Vec<usize>> = base[1500..1600]
        .iter()
        .map(|q| exact(&base, q, 10, |_| true))
        .collect();
    let found: Vec<Vec<usize>> = base[1500..1600]
        .iter()
        .map(|q| reloaded.search(q, 10, 64).iter().map(|n| n.d_id).collect())
        .collect();
    let r = recall(&found, &truth);
    assert!(r >= 0.93, "recall@10 after reload and inserts {r}");
}

#[test]
fn the_dot_distance_matches_a_plain_sum_at_every_length() {
    let mut rng = StdRng::seed_from_u64(7);
    for len in 0..140 {
        let a: Vec<f32> = (0..len).map(|_| rng.random_range(-0.08..0.08)).collect();
        let b: Vec<f32> = (0..len).map(|_| rng.random_range(-0.08..0.08)).collect();
        let plain = 1.0 - a.iter().zip(&b).map(|(x, y)| x * y).sum::<f32>();
        let d = DistDot.eval(&a, &b);
        assert!(
            (d - plain.max(0.0)).abs() < 1e-5,
            "len {len}: {d} vs {plain}"
        );
    }
}

#[test]
fn neighbour_lists_are_bounded_pruned_and_only_in_the_points_own_layers() {
    let base = vectors(3000, 8);
    // M = 4, so that lists overflow often: up to 8 neighbours in layer 0, 4 above
    let m = 4;
    let hnsw = Hnsw::new(m, base.len(), 16, 100, DistDot);
    let refs: Vec<(&[f32], usize)> = base.iter().enumerate().map(|(i, v)| (&v[..], i)).collect();
    hnsw.parallel_insert_slice(&refs);
    let (mut layer0_total, mut layer0_lists) = (0, 0);
    let indexation = hnsw.get_point_indexation();
    for p in indexation {
        let level = p.get_point_id().0 as usize;
        let lists = indexation.get_neighborhood_id(&p);
        assert_eq!(
            lists.len(),
            16,
            "a list per layer, as the dump format has them"
        );
        for (l, list) in lists.iter().enumerate() {
            let bound = if l == 0 { 2 * m } else { m };
            assert!(list.len() <= bound, "layer {l}: {} neighbours", list.len());
            assert!(
                l <= level || list.is_empty(),
                "a list in layer {l} above the point's {level}"
            );
            assert!(
                list.windows(2).all(|w| w[0].distance <= w[1].distance),
                "nearest first"
            );
        }
        layer0_total += lists[0].len();
        layer0_lists += 1;
    }
    // A full list is pruned by the selection heuristic (hnswlib's rule), not cut to its
    // nearest entries, so lists stay short of their bound: a mean of 5.9 of 8 on this data,
    // where the patch before this rule (which kept the nearest) gave 7.6.
    let mean = layer0_total as f64 / layer0_lists as f64;
    assert!(mean < 6.8, "mean layer-0 list length {mean}");
}

#[test]
fn a_dot_product_above_one_is_distance_zero_not_a_panic() {
    // Rounding can take the self-product of a unit vector a hair above 1; the patch before
    // this one asserted it was at most 1.000002. Here it is 1.0027.
    let v = vec![0.0511_f32; 384];
    assert_eq!(DistDot.eval(&v, &v), 0.0);
    assert_eq!(DistDot.eval(&[1.5], &[1.5]), 0.0);
}

#[test]
fn owned_insertions_return_the_points_holding_the_vectors_in_order() {
    let base = vectors(1500, 9);
    let hnsw = Hnsw::<f32, DistDot>::new(16, base.len(), 16, 100, DistDot);
    let first = hnsw.insert_owned(base[0].clone(), 0);
    assert_eq!(first.get_v(), &base[0][..]);
    let rest: Vec<(Vec<f32>, usize)> = base
        .iter()
        .cloned()
        .enumerate()
        .skip(1)
        .map(|(i, v)| (v, i))
        .collect();
    let points = hnsw.parallel_insert_owned(rest);
    assert_eq!(points.len(), base.len() - 1);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p.get_origin_id(), i + 1);
        assert_eq!(
            p.get_v(),
            &base[i + 1][..],
            "the vector as given, not a rounded copy"
        );
    }
    assert_eq!(hnsw.get_nb_point(), base.len());
    let truth: Vec<Vec<usize>> = base[..100]
        .iter()
        .map(|q| exact(&base, q, 10, |_| true))
        .collect();
    let found: Vec<Vec<usize>> = base[..100]
        .iter()
        .map(|q| hnsw.search(q, 10, 64).iter().map(|n| n.d_id).collect())
        .collect();
    let r = recall(&found, &truth);
    assert!(r >= 0.93, "recall@10 {r}");
}
