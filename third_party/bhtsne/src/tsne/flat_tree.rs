//! The Barnes-Hut tree for 2 and 3 output dimensions in flat arrays (Somna patch 7).
//!
//! `SPTree` keeps each node in its own allocation (a `Vec` of children, a `Vec` centre of
//! mass) and walks it by recursion. This tree holds the same cells (a node's box is split
//! at its centre into 2^D children, half-widths halved, the root's box as `SPTree::new`
//! makes it) in arrays in depth-first order: a node's first child is the next node, and
//! `next` says where its subtree ends, so the walk is a loop that either descends
//! (`node + 1`) or skips the subtree (`next[node]`). Empty children are never made. A
//! leaf holds one point, or several equal ones; the points are stored in leaf order, and
//! the walk visits points in that order, so neighbouring points walk the same nodes.
//!
//! The summary test is `SPTree`'s: a node stands for its points when its largest
//! half-width squared is below θ² times the squared distance to its centre of mass.

use num_traits::Float;
use rayon::prelude::*;

/// Deeper than this a cell is a leaf even with several distinct points (their boxes are
/// then 2^-48 of the root's: closer than any layout resolves).
const MAX_DEPTH: u32 = 48;

pub struct FlatTree<T, const D: usize> {
    /// Per node, in depth-first order: centre of mass, number of points, largest
    /// half-width squared, the node after its subtree, and (for a leaf) its points' range
    /// in `order`/`pos` (empty for an inner node).
    com: Vec<[T; D]>,
    count: Vec<T>,
    width_sq: Vec<T>,
    next: Vec<u32>,
    leaf: Vec<(u32, u32)>,
    /// Point indices in leaf order, and their coordinates in the same order.
    order: Vec<u32>,
    pos: Vec<[T; D]>,
}

impl<T: Float + Send + Sync, const D: usize> FlatTree<T, D> {
    /// The tree of the `n` points in `y` (row-major, `D` columns).
    pub fn new(y: &[T], n: usize) -> Self {
        assert!(D <= 3, "FlatTree holds at most 8 children per node");
        let pts: Vec<[T; D]> = (0..n)
            .map(|i| {
                let mut p = [T::zero(); D];
                p.copy_from_slice(&y[i * D..(i + 1) * D]);
                p
            })
            .collect();
        // The root box as `SPTree::new` makes it: centred on the mean, each half-width the
        // larger distance from the mean to the extremes, plus 1e-5.
        let mut mean = [T::zero(); D];
        let mut lo = [T::max_value(); D];
        let mut hi = [-T::max_value(); D];
        for p in &pts {
            for k in 0..D {
                mean[k] = mean[k] + p[k];
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let eps = T::from(1e-5).unwrap();
        let mut half = [T::zero(); D];
        for k in 0..D {
            mean[k] = mean[k] / T::from(n.max(1)).unwrap();
            half[k] = (hi[k] - mean[k]).max(mean[k] - lo[k]) + eps;
        }
        let nodes = 2 * n + 1;
        let mut tree = Self {
            com: Vec::with_capacity(nodes),
            count: Vec::with_capacity(nodes),
            width_sq: Vec::with_capacity(nodes),
            next: Vec::with_capacity(nodes),
            leaf: Vec::with_capacity(nodes),
            order: (0..n as u32).collect(),
            pos: Vec::new(),
        };
        if n > 0 {
            let mut order = std::mem::take(&mut tree.order);
            let mut scratch = vec![0u32; n];
            tree.build(&pts, &mut order, &mut scratch, 0, mean, half, 0);
            tree.order = order;
        }
        tree.pos = tree.order.iter().map(|&i| pts[i as usize]).collect();
        tree
    }

    /// Appends the node of the points `idx` (at `offset` in the final order) in the box
    /// `centre ± half`, then its children.
    #[allow(clippy::too_many_arguments)]
    fn build(
        &mut self,
        pts: &[[T; D]],
        idx: &mut [u32],
        scratch: &mut [u32],
        offset: usize,
        centre: [T; D],
        half: [T; D],
        depth: u32,
    ) {
        let node = self.com.len();
        let mut com = [T::zero(); D];
        for &i in idx.iter() {
            for k in 0..D {
                com[k] = com[k] + pts[i as usize][k];
            }
        }
        let len = T::from(idx.len()).unwrap();
        for c in com.iter_mut() {
            *c = *c / len;
        }
        let widest = half.iter().fold(T::zero(), |m, &w| m.max(w));
        self.com.push(com);
        self.count.push(len);
        self.width_sq.push(widest * widest);
        self.next.push(0);
        self.leaf.push((0, 0));
        let first = pts[idx[0] as usize];
        let all_equal = idx.iter().all(|&i| pts[i as usize] == first);
        if idx.len() == 1 || all_equal || depth >= MAX_DEPTH {
            self.leaf[node] = (offset as u32, (offset + idx.len()) as u32);
        } else {
            // Counting sort of the points by the child box they fall in (bit k set: above
            // the centre in dimension k).
            let code = |i: u32| {
                let p = &pts[i as usize];
                (0..D).fold(0usize, |c, k| c | (usize::from(p[k] > centre[k]) << k))
            };
            // On the stack: this runs for every inner node of every iteration's tree (D is 2
            // or 3, so at most 8 children).
            let mut starts = [0usize; 9];
            for &i in idx.iter() {
                starts[code(i) + 1] += 1;
            }
            for c in 0..(1 << D) {
                starts[c + 1] += starts[c];
            }
            let mut fill = starts;
            for &i in idx.iter() {
                let c = code(i);
                scratch[fill[c]] = i;
                fill[c] += 1;
            }
            idx.copy_from_slice(scratch);
            let quarter = T::from(0.5).unwrap();
            for c in 0..(1 << D) {
                let (s, e) = (starts[c], starts[c + 1]);
                if s == e {
                    continue;
                }
                let mut child_centre = centre;
                let mut child_half = half;
                for k in 0..D {
                    child_half[k] = half[k] * quarter;
                    child_centre[k] = if c >> k & 1 == 1 {
                        centre[k] + child_half[k]
                    } else {
                        centre[k] - child_half[k]
                    };
                }
                self.build(
                    pts,
                    &mut idx[s..e],
                    &mut scratch[s..e],
                    offset + s,
                    child_centre,
                    child_half,
                    depth + 1,
                );
            }
        }
        self.next[node] = self.com.len() as u32;
    }

    /// The repulsive force on point `i` at `p` (unnormalised, added to `f`) and its share
    /// of the normalisation sum.
    fn repulsion(&self, i: u32, p: &[T; D], theta_sq: T, f: &mut [T; D]) -> T {
        let mut sum_q = T::zero();
        let mut node = 0usize;
        let nodes = self.com.len();
        while node < nodes {
            let (s, e) = self.leaf[node];
            if s != e {
                for j in s as usize..e as usize {
                    if self.order[j] == i {
                        continue;
                    }
                    let q = &self.pos[j];
                    let mut d2 = T::zero();
                    for k in 0..D {
                        let b = p[k] - q[k];
                        d2 = d2 + b * b;
                    }
                    let w = T::one() / (T::one() + d2);
                    sum_q = sum_q + w;
                    let m = w * w;
                    for k in 0..D {
                        f[k] = f[k] + m * (p[k] - q[k]);
                    }
                }
                node = self.next[node] as usize;
                continue;
            }
            let c = &self.com[node];
            let mut d2 = T::zero();
            for k in 0..D {
                let b = p[k] - c[k];
                d2 = d2 + b * b;
            }
            if self.width_sq[node] < theta_sq * d2 {
                let w = T::one() / (T::one() + d2);
                let m = self.count[node] * w;
                sum_q = sum_q + m;
                let m = m * w;
                for k in 0..D {
                    f[k] = f[k] + m * (p[k] - c[k]);
                }
                node = self.next[node] as usize;
            } else {
                node += 1;
            }
        }
        sum_q
    }

    /// Every point's repulsive force into `neg_f` (row-major, `D` columns) and its share
    /// of the normalisation sum into `q_parts`, in parallel, points taken in leaf order.
    pub fn non_edge_forces(&self, theta: T, neg_f: &mut [T], q_parts: &mut [T]) {
        let theta_sq = theta * theta;
        let out: Vec<([T; D], T)> = self
            .pos
            .par_iter()
            .zip(self.order.par_iter())
            .map(|(p, &i)| {
                let mut f = [T::zero(); D];
                let q = self.repulsion(i, p, theta_sq, &mut f);
                (f, q)
            })
            .collect();
        for ((f, q), &i) in out.into_iter().zip(&self.order) {
            let i = i as usize;
            neg_f[i * D..(i + 1) * D].copy_from_slice(&f);
            q_parts[i] = q;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FlatTree;

    fn points(n: usize, d: usize) -> Vec<f64> {
        // Spread over a few clusters, with two exact duplicates.
        let mut y: Vec<f64> = (0..n * d)
            .map(|i| {
                let cluster = (i / d) % 5;
                cluster as f64 * 3.0 + ((i * 7919 % 1009) as f64 / 1009.0 - 0.5)
            })
            .collect();
        let (a, b) = (3 * d, 10 * d);
        for k in 0..d {
            y[b + k] = y[a + k];
        }
        y
    }

    fn exact(y: &[f64], n: usize, d: usize) -> (Vec<f64>, f64) {
        let mut f = vec![0.0; n * d];
        let mut z = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let d2: f64 = (0..d).map(|k| (y[i * d + k] - y[j * d + k]).powi(2)).sum();
                let w = 1.0 / (1.0 + d2);
                z += w;
                for k in 0..d {
                    f[i * d + k] += w * w * (y[i * d + k] - y[j * d + k]);
                }
            }
        }
        (f, z)
    }

    fn check<const D: usize>() {
        let n = 300;
        let y = points(n, D);
        let tree = FlatTree::<f64, D>::new(&y, n);
        // θ = 0: every node opens, so the forces are exact (the duplicates each other's
        // neighbour at distance 0).
        let (mut f, mut q) = (vec![0.0; n * D], vec![0.0; n]);
        tree.non_edge_forces(0.0, &mut f, &mut q);
        let (ef, ez) = exact(&y, n, D);
        let z: f64 = q.iter().sum();
        assert!((z - ez).abs() < 1e-9 * ez, "{} vs {}", z, ez);
        for (a, b) in f.iter().zip(&ef) {
            assert!((a - b).abs() < 1e-9, "{} vs {}", a, b);
        }
        // θ = 0.25: each point's normalisation share within 1% of the exact one and its
        // force within 5% of the exact force's length (a wrong count or centre of mass
        // in a summary is off by far more; at θ = 0.5 the worst share is 16% off here,
        // as with SPTree).
        let (mut f, mut q) = (vec![0.0; n * D], vec![0.0; n]);
        tree.non_edge_forces(0.25, &mut f, &mut q);
        for i in 0..n {
            let qi = q_exact::<D>(&y, n, i);
            assert!((q[i] - qi).abs() < 0.01 * qi, "point {}: {} vs {}", i, q[i], qi);
            let (a, b) = (&f[i * D..(i + 1) * D], &ef[i * D..(i + 1) * D]);
            let err: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
            let len: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!(err < 0.05 * len + 1e-6, "point {}: {:?} vs {:?}", i, a, b);
        }
    }

    fn q_exact<const D: usize>(y: &[f64], n: usize, i: usize) -> f64 {
        (0..n)
            .filter(|j| *j != i)
            .map(|j| {
                let d2: f64 = (0..D).map(|k| (y[i * D + k] - y[j * D + k]).powi(2)).sum();
                1.0 / (1.0 + d2)
            })
            .sum()
    }

    #[test]
    fn exact_at_theta_zero_and_close_at_theta_half_in_2d() {
        check::<2>();
    }

    #[test]
    fn exact_at_theta_zero_and_close_at_theta_half_in_3d() {
        check::<3>();
    }
}
