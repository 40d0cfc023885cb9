//! Orthogonal Procrustes alignment with scale: the rotation (or reflection), uniform scale
//! and translation that best map a new layout onto the previous one on their shared points,
//! applied to every point of the new layout, so points do not jump between frames.

use linfa_linalg::svd::SVD;
use ndarray::Array2;
use std::collections::HashMap;

/// Aligns `coords` (rows of `ids`, `dims` columns) to `prev` on the ids both contain.
/// Returns false (and leaves `coords` alone) when fewer than dims + 1 points are shared.
pub fn align(ids: &[i64], coords: &mut [f32], prev_ids: &[i64], prev: &[f32], dims: usize) -> bool {
    let prev_row: HashMap<i64, usize> = prev_ids
        .iter()
        .enumerate()
        .map(|(r, &id)| (id, r))
        .collect();
    let pairs: Vec<(usize, usize)> = ids
        .iter()
        .enumerate()
        .filter_map(|(r, id)| prev_row.get(id).map(|&p| (r, p)))
        .collect();
    if pairs.len() <= dims {
        return false;
    }
    let m = pairs.len() as f64;
    let mut mu_a = vec![0f64; dims];
    let mut mu_b = vec![0f64; dims];
    for &(r, p) in &pairs {
        for j in 0..dims {
            mu_a[j] += coords[r * dims + j] as f64 / m;
            mu_b[j] += prev[p * dims + j] as f64 / m;
        }
    }
    // Cross-covariance M = Aᵀ B of the centred shared points, and ‖A‖².
    let mut cross = Array2::<f64>::zeros((dims, dims));
    let mut norm_a = 0f64;
    for &(r, p) in &pairs {
        for i in 0..dims {
            let a = coords[r * dims + i] as f64 - mu_a[i];
            norm_a += a * a;
            for j in 0..dims {
                cross[[i, j]] += a * (prev[p * dims + j] as f64 - mu_b[j]);
            }
        }
    }
    if norm_a <= f64::EPSILON {
        return false;
    }
    let Ok((Some(u), sigma, Some(vt))) = cross.svd(true, true) else {
        return false;
    };
    let rot = u.dot(&vt);
    let scale = sigma.sum() / norm_a;
    for row in coords.chunks_exact_mut(dims) {
        let centred: Vec<f64> = (0..dims).map(|i| row[i] as f64 - mu_a[i]).collect();
        for j in 0..dims {
            let v: f64 = (0..dims).map(|i| centred[i] * rot[[i, j]]).sum();
            row[j] = (scale * v + mu_b[j]) as f32;
        }
    }
    true
}

/// Extent of a layout: the diagonal of its bounding box.
pub fn extent(coords: &[f32], dims: usize) -> f32 {
    let mut lo = vec![f32::INFINITY; dims];
    let mut hi = vec![f32::NEG_INFINITY; dims];
    for row in coords.chunks_exact(dims) {
        for j in 0..dims {
            lo[j] = lo[j].min(row[j]);
            hi[j] = hi[j].max(row[j]);
        }
    }
    (0..dims)
        .map(|j| (hi[j] - lo[j]).max(0.0).powi(2))
        .sum::<f32>()
        .sqrt()
}

/// Median distance a shared point moved between two layouts, divided by `prev`'s extent.
pub fn median_movement(
    ids: &[i64],
    coords: &[f32],
    prev_ids: &[i64],
    prev: &[f32],
    dims: usize,
) -> f32 {
    let row: HashMap<i64, usize> = ids.iter().enumerate().map(|(r, &id)| (id, r)).collect();
    let mut moves: Vec<f32> = prev_ids
        .iter()
        .enumerate()
        .filter_map(|(p, id)| {
            row.get(id).map(|&r| {
                (0..dims)
                    .map(|j| (coords[r * dims + j] - prev[p * dims + j]).powi(2))
                    .sum::<f32>()
                    .sqrt()
            })
        })
        .collect();
    if moves.is_empty() {
        return 0.0;
    }
    moves.sort_by(f32::total_cmp);
    moves[moves.len() / 2] / extent(prev, dims).max(f32::EPSILON)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoes_rotation_scale_reflection_and_translation() {
        let prev: Vec<f32> = vec![0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 3.0, 1.0, -1.0, -2.0];
        let ids: Vec<i64> = (1..=5).collect();
        // New layout: prev rotated by 90°, mirrored, scaled ×3 and shifted, plus a new point.
        let mut new: Vec<f32> = prev
            .chunks_exact(2)
            .flat_map(|p| [3.0 * p[1] + 10.0, 3.0 * p[0] - 4.0])
            .collect();
        new.extend([10.0, -4.0]);
        let mut new_ids = ids.clone();
        new_ids.push(99);
        assert!(median_movement(&new_ids, &new, &ids, &prev, 2) > 0.5);
        assert!(align(&new_ids, &mut new, &ids, &prev, 2));
        for (a, b) in new[..10].iter().zip(&prev) {
            assert!((a - b).abs() < 1e-4, "{new:?}");
        }
        // The extra point (the image of the origin) lands at the origin too.
        assert!(new[10].abs() < 1e-4 && new[11].abs() < 1e-4);
        assert!(median_movement(&new_ids, &new, &ids, &prev, 2) < 1e-4);
    }

    #[test]
    fn too_few_shared_points_leave_the_layout_alone() {
        let mut c = vec![1.0, 2.0, 3.0, 4.0];
        assert!(!align(&[1, 2], &mut c, &[2, 3], &[0.0, 0.0, 1.0, 1.0], 2));
        assert_eq!(c, vec![1.0, 2.0, 3.0, 4.0]);
    }
}
