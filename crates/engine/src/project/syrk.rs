//! The upper triangle of Xᵀ X for a block of row-major rows (a symmetric rank-k update, BLAS's
//! `syrk`), in f32 with the CPU's vector instructions chosen at run time (pulp).
//!
//! PCA's scatter matrix is this product summed over chunks of rows. A general matrix product
//! (matrixmultiply) computes the whole square, or, split into bands above the diagonal, packs
//! its right-hand operand again for every band: on 100K×384 rows, 8 bands did 56% of the
//! products and spent 29% of their time packing operands (perf). This kernel reads the rows where they are,
//! in register tiles of `TILE_I` columns × 2 vectors, and skips every tile below the diagonal.

use pulp::{Arch, Simd, WithSimd};

/// Columns of a tile that are broadcast, one at a time, from each row.
const TILE_I: usize = 6;
/// Rows per pass over the tiles: the cache lines a tile reads stay in L1 for the next tiles
/// of the same rows. On 100K×384 rows 32 took 0.10 s, 64 0.11 s, 128 and 256 0.13 s, 8 0.14 s.
const ROW_BLOCK: usize = 32;

/// Adds the upper triangle (j ≥ i) of Xᵀ X of the row-major `rows` (each of `d` values) to
/// the row-major d×d `out`; entries below the diagonal are left as they were, except in the
/// few tiles that straddle it, where they get their products too.
pub fn add_upper(rows: &[f32], d: usize, out: &mut [f32]) {
    assert_eq!(out.len(), d * d, "output is d×d");
    Arch::new().dispatch(Upper { rows, d, out });
}

struct Upper<'a> {
    rows: &'a [f32],
    d: usize,
    out: &'a mut [f32],
}

impl WithSimd for Upper<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let Upper { rows, d, out } = self;
        let lanes = S::F32_LANES;
        let width = 2 * lanes;
        let full_j = d - d % width;
        let full_i = d - d % TILE_I;
        // Each block of columns j0..j0 + width takes the whole tiles whose first column i0
        // is before its last (on or above the diagonal): up to `reach(j0)` rows of the result.
        let reach = |j0: usize| (j0 + width).div_ceil(TILE_I).min(full_i / TILE_I) * TILE_I;
        for block in rows.chunks(ROW_BLOCK * d) {
            for j0 in (0..full_j).step_by(width) {
                for i0 in (0..reach(j0)).step_by(TILE_I) {
                    tile(simd, block, d, i0, j0, out);
                }
            }
        }
        // What the tiles did not reach: the last columns, and the rows of a block's columns
        // past the last whole tile. Plain dot products down the rows, summed in f64 (one
        // long sum each, where the tiles sum `ROW_BLOCK` rows at a time).
        for j in 0..d {
            let from = if j < full_j { reach(j - j % width) } else { 0 };
            for i in from..=j {
                let s: f64 = rows
                    .chunks_exact(d)
                    .map(|row| row[i] as f64 * row[j] as f64)
                    .sum();
                out[i * d + j] += s as f32;
            }
        }
    }
}

/// out[i0..i0 + TILE_I][j0..j0 + 2 vectors] += Σ over `block`'s rows of row[i]·row[j].
#[inline(always)]
fn tile<S: Simd>(simd: S, block: &[f32], d: usize, i0: usize, j0: usize, out: &mut [f32]) {
    let lanes = S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; 2]; TILE_I];
    for row in block.chunks_exact(d) {
        let (b, _) = S::as_simd_f32s(&row[j0..j0 + 2 * lanes]);
        let (b0, b1) = (b[0], b[1]);
        let a = &row[i0..i0 + TILE_I];
        for (t, acc) in acc.iter_mut().enumerate() {
            let s = simd.splat_f32s(a[t]);
            acc[0] = simd.mul_add_f32s(s, b0, acc[0]);
            acc[1] = simd.mul_add_f32s(s, b1, acc[1]);
        }
    }
    for (t, acc) in acc.iter().enumerate() {
        let o = (i0 + t) * d + j0;
        let (dst, _) = S::as_mut_simd_f32s(&mut out[o..o + 2 * lanes]);
        dst[0] = simd.add_f32s(dst[0], acc[0]);
        dst[1] = simd.add_f32s(dst[1], acc[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn plain_upper(rows: &[f32], d: usize) -> Vec<f64> {
        let mut want = vec![0f64; d * d];
        for row in rows.chunks_exact(d) {
            for i in 0..d {
                for j in i..d {
                    want[i * d + j] += row[i] as f64 * row[j] as f64;
                }
            }
        }
        want
    }

    #[test]
    fn the_upper_triangle_equals_plain_products_for_any_width() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        // Widths below one tile, between tiles, and a multiple of every tile; row counts
        // below, at and past a row block.
        for (d, n) in [(5, 3), (13, 70), (40, 130), (48, 64), (384, 150)] {
            let rows: Vec<f32> = (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let mut out = vec![0f32; d * d];
            add_upper(&rows, d, &mut out);
            // Also with one lane (a CPU without vector instructions pulp knows).
            let mut scalar = vec![0f32; d * d];
            Upper {
                rows: &rows,
                d,
                out: &mut scalar,
            }
            .with_simd(pulp::Scalar);
            let want = plain_upper(&rows, d);
            for i in 0..d {
                for j in i..d {
                    let one = scalar[i * d + j] as f64;
                    assert!(
                        (one - want[i * d + j]).abs() < 1e-4 * n as f64,
                        "one lane, d {d}"
                    );
                    let (got, want) = (out[i * d + j] as f64, want[i * d + j]);
                    assert!(
                        (got - want).abs() < 1e-4 * n as f64,
                        "d {d} ({i}, {j}): {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn adds_to_what_is_there() {
        let rows = [1.0f32, 2.0, 3.0, 4.0];
        let mut out = vec![1.0f32; 4];
        add_upper(&rows, 2, &mut out);
        // Xᵀ X = [[10, 14], [14, 20]]; the lower entry is not computed.
        assert_eq!(out, vec![11.0, 15.0, 1.0, 21.0]);
    }
}
