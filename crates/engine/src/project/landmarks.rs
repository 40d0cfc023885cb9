//! Landmarks: the seeded sample of points a neighbour-embedding method (t-SNE, UMAP) lays
//! out, and the placement of every other point at the similarity-weighted mean of its
//! nearest landmarks. The methods' cost then follows the landmark count, not the store.

use super::knn::nearest_by_dot;
use crate::events::Job;
use crate::Result;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;

/// Landmarks (or, later, placed points) a new point is placed among.
pub const PLACE_NEIGHBOURS: usize = 10;

/// A seeded sample of the rows of an n×d matrix, in row order, with their vectors.
pub struct Landmarks {
    /// Sampled row numbers, ascending.
    pub rows: Vec<usize>,
    /// Their vectors, row-major (`rows.len() × d`).
    pub x: Vec<f32>,
}

impl Landmarks {
    /// `count` rows of `x` (at least one, at most all) drawn with `seed`.
    pub fn choose(x: &[f32], d: usize, count: usize, seed: u64) -> Self {
        let n = x.len() / d;
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        order.shuffle(&mut rng);
        let mut rows = order[..count.clamp(1, n.max(1)).min(n)].to_vec();
        rows.sort_unstable();
        let x = rows
            .iter()
            .flat_map(|&i| x[i * d..(i + 1) * d].iter().copied())
            .collect();
        Self { rows, x }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Coordinates of all n rows of `x`: the landmarks at `ly` (their layout, in landmark
    /// order), every other row at the weighted mean of its nearest landmarks.
    pub fn place_all(
        &self,
        x: &[f32],
        d: usize,
        ly: &[f32],
        dims: usize,
        job: &Job,
    ) -> Result<Vec<f32>> {
        self.place_all_with(x, d, ly, dims, PLACE_NEIGHBOURS, job, |_, nn| {
            weighted_mean(
                nn.iter().map(|&(r, s)| (&ly[r * dims..(r + 1) * dims], s)),
                dims,
            )
        })
    }

    /// As [`Landmarks::place_all`], with `place(row, nearest)` giving the position of a
    /// row of `x` from its `k` nearest landmarks (landmark number, cosine), best first.
    #[allow(clippy::too_many_arguments)]
    pub fn place_all_with(
        &self,
        x: &[f32],
        d: usize,
        ly: &[f32],
        dims: usize,
        k: usize,
        job: &Job,
        place: impl Fn(usize, &[(usize, f32)]) -> Vec<f32> + Sync,
    ) -> Result<Vec<f32>> {
        let n = x.len() / d;
        let mut coords = vec![0f32; n * dims];
        let mut is_landmark = vec![false; n];
        for (r, &i) in self.rows.iter().enumerate() {
            coords[i * dims..(i + 1) * dims].copy_from_slice(&ly[r * dims..(r + 1) * dims]);
            is_landmark[i] = true;
        }
        if self.len() == n {
            return Ok(coords);
        }
        let rest: Vec<usize> = (0..n).filter(|&i| !is_landmark[i]).collect();
        let rx: Vec<f32> = rest
            .iter()
            .flat_map(|&i| x[i * d..(i + 1) * d].iter().copied())
            .collect();
        let near = nearest_by_dot(&rx, &self.x, d, k, false, job, "place")?;
        let placed: Vec<Vec<f32>> = rest
            .par_iter()
            .zip(&near)
            .map(|(&i, nn)| place(i, nn))
            .collect();
        for (&i, p) in rest.iter().zip(placed) {
            coords[i * dims..(i + 1) * dims].copy_from_slice(&p);
        }
        Ok(coords)
    }
}

/// Mean of neighbour positions weighted by a kernel on their cosine similarity: the nearest
/// neighbour dominates, farther ones refine (weights fall by e every 0.05 of similarity).
pub fn weighted_mean<'a>(
    neighbours: impl Iterator<Item = (&'a [f32], f32)>,
    dims: usize,
) -> Vec<f32> {
    let nn: Vec<(&[f32], f32)> = neighbours.collect();
    let best = nn.iter().map(|p| p.1).fold(f32::NEG_INFINITY, f32::max);
    let mut out = vec![0f32; dims];
    let mut total = 0f32;
    for (pos, sim) in nn {
        let w = ((sim - best) / 0.05).exp();
        total += w;
        for j in 0..dims {
            out[j] += w * pos[j];
        }
    }
    if total > 0.0 {
        out.iter_mut().for_each(|v| *v /= total);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_sample_in_row_order_and_the_rest_placed_by_their_nearest_landmarks() {
        // Six points on two far-apart axes; rows 0–2 near (1, 0), rows 3–5 near (0, 1).
        let x = [
            1.0, 0.0, 0.99, 0.14, 0.98, -0.2, 0.0, 1.0, 0.1, 0.99, -0.14, 0.99,
        ];
        let lm = Landmarks::choose(&x, 2, 4, 5);
        assert_eq!(lm.len(), 4);
        assert!(lm.rows.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Landmarks::choose(&x, 2, 4, 5).rows, lm.rows);
        assert_eq!(Landmarks::choose(&x, 2, 99, 5).len(), 6);
        // Landmarks laid out by which axis they are near: x-ish at -10, y-ish at +10.
        let ly: Vec<f32> = lm
            .rows
            .iter()
            .map(|&i| if i < 3 { -10.0 } else { 10.0 })
            .collect();
        let all = lm.place_all(&x, 2, &ly, 1, &Job::default()).unwrap();
        for (i, &c) in all.iter().enumerate() {
            assert_eq!(c.signum(), if i < 3 { -1.0 } else { 1.0 }, "row {i} at {c}");
        }
    }

    #[test]
    fn the_nearest_neighbour_dominates_the_mean() {
        let (a, b) = ([0.0f32, 0.0], [10.0f32, 0.0]);
        let m = weighted_mean([(&a[..], 0.9), (&b[..], 0.5)].into_iter(), 2);
        assert!(m[0] < 0.01, "{m:?}");
        let even = weighted_mean([(&a[..], 0.8), (&b[..], 0.8)].into_iter(), 2);
        assert_eq!(even, vec![5.0, 0.0]);
    }
}
