//! Tests of Somna's patch (the gradients' denominators, the tail positions of each epoch):
//! three well-separated groups must come out as three groups, each point beside its own.

use ndarray::Array2;
use rand::prelude::*;
use umap_rs::{GraphParams, OptimizationParams, Umap, UmapConfig};

const DIM: usize = 8;
const PER_GROUP: usize = 100;
const K: usize = 15;

/// Three groups of points around far-apart centres, and each point's group.
fn groups(seed: u64) -> (Array2<f32>, Vec<usize>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let centres: Vec<Vec<f32>> = (0..3)
        .map(|_| (0..DIM).map(|_| rng.random_range(-10.0..10.0)).collect())
        .collect();
    let mut x = Array2::<f32>::zeros((3 * PER_GROUP, DIM));
    let mut label = Vec::new();
    for i in 0..3 * PER_GROUP {
        let g = i % 3;
        for d in 0..DIM {
            x[(i, d)] = centres[g][d] + rng.random_range(-1.0..1.0);
        }
        label.push(g);
    }
    (x, label)
}

/// Exact k nearest rows by Euclidean distance, the row itself first.
fn knn(x: &Array2<f32>) -> (Array2<u32>, Array2<f32>) {
    let n = x.nrows();
    let mut idx = Array2::<u32>::zeros((n, K));
    let mut dist = Array2::<f32>::zeros((n, K));
    for i in 0..n {
        let mut all: Vec<(f32, usize)> = (0..n)
            .map(|j| {
                let d2: f32 = (0..DIM).map(|d| (x[(i, d)] - x[(j, d)]).powi(2)).sum();
                (if i == j { -1.0 } else { d2.sqrt() }, j)
            })
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (c, &(d, j)) in all.iter().take(K).enumerate() {
            idx[(i, c)] = j as u32;
            dist[(i, c)] = d.max(0.0);
        }
    }
    (idx, dist)
}

fn layout(seed: u64) -> (Array2<f32>, Vec<usize>) {
    let (x, label) = groups(seed);
    let (idx, dist) = knn(&x);
    let mut rng = StdRng::seed_from_u64(seed + 1);
    let init = Array2::from_shape_fn((x.nrows(), 2), |_| rng.random_range(0.0..10.0));
    let config = UmapConfig {
        n_components: 2,
        graph: GraphParams {
            n_neighbors: K,
            ..Default::default()
        },
        optimization: OptimizationParams {
            n_epochs: Some(200),
            ..Default::default()
        },
        ..Default::default()
    };
    let fitted = Umap::new(config).fit(x.view(), idx.view(), dist.view(), init.view());
    (fitted.into_embedding(), label)
}

#[test]
fn every_point_lands_beside_its_own_group() {
    let (y, label) = layout(7);
    let n = y.nrows();
    let d2 = |i: usize, j: usize| (y[(i, 0)] - y[(j, 0)]).powi(2) + (y[(i, 1)] - y[(j, 1)]).powi(2);
    let beside_own = (0..n)
        .filter(|&i| {
            let nearest = (0..n)
                .filter(|&j| j != i)
                .min_by(|&a, &b| d2(i, a).total_cmp(&d2(i, b)))
                .unwrap();
            label[nearest] == label[i]
        })
        .count();
    assert!(beside_own >= n * 99 / 100, "{beside_own} of {n}");
}

#[test]
fn groups_are_tight_and_far_apart() {
    let (y, label) = layout(11);
    let n = y.nrows();
    let (mut within, mut between) = ((0.0f64, 0usize), (0.0f64, 0usize));
    for i in 0..n {
        for j in i + 1..n {
            let d = ((y[(i, 0)] - y[(j, 0)]).powi(2) + (y[(i, 1)] - y[(j, 1)]).powi(2)).sqrt();
            let slot = if label[i] == label[j] { &mut within } else { &mut between };
            slot.0 += d as f64;
            slot.1 += 1;
        }
    }
    let (within, between) = (within.0 / within.1 as f64, between.0 / between.1 as f64);
    assert!(between > 4.0 * within, "mean distance within {within}, between {between}");
}
