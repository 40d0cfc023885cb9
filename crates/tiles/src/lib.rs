//! Matrix products on Intel AMX tiles (Sapphire Rapids and later) for the encoder's linear
//! layers, at about 16 bits of precision with f32 accumulation.
//!
//! AMX multiplies 16×32 bf16 tiles into 16×16 f32 accumulators: 16 times the multiply-adds
//! per cycle of AVX-512 in f32. bf16 keeps 8 bits of an f32's 24: the encoder in plain bf16
//! came within cosine 0.99998 of sentence-transformers' vectors but only 0.99999 of the f32
//! encoder's, short of the 0.999999 the parity test holds them to. So each f32 is split into
//! a high bf16 and a low one (what the high one leaves), `x ≈ hi + lo` to about 16 bits, and
//! each product is `hi·hi + hi·lo + lo·hi` (the `lo·lo` term, 2⁻¹⁶ of the product or less,
//! is left out). Products agree with f64 to 2e-5 of their terms' sum (the tests), and the
//! encoder's vectors stay within cosine 1 − 1e-10 of sentence-transformers' (1 − 1.1e-12
//! with f32 products).
//!
//! [`Packed::product_bf16`] is the plain bf16 product, `hi·hi` alone: a third of the tile
//! products and half the weight bytes read. A search's query embedding, whose twelve-odd
//! rows make each product a stream of the weights from memory, takes it (see
//! `BertEmbedder::embed_one`). A CPU without AMX but with AVX-512 BF16 (AMD Zen 4 and
//! later) runs the plain bf16 product with `vdpbf16ps` on the same weight layout
//! (`avx512.rs`, [`Packed::new_bf16`]); [`bf16_available`] says whether either can.
//!
//! Linux grants a process the tiles' 8 KiB of register state only on request
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM)`); [`available`] asks once and answers false when the
//! CPU lacks AMX, the kernel refuses, or `SOMNA_AMX=0` is set, and the encoder then keeps
//! candle's matmul. Stable Rust has no AMX intrinsics, so the tile instructions are inline
//! assembly; they touch only the tile registers and the memory handed to them. With
//! somna-fts5, one of the two crates of the workspace with unsafe code.

use std::sync::OnceLock;

mod avx512;

/// bf16 values in a tile row: 64 bytes.
const TILE_K: usize = 32;
/// Rows of a tile, and columns of an accumulator tile.
const TILE_ROWS: usize = 16;
/// Rows and columns of the output block one pass computes: 2×2 accumulator tiles.
const BLOCK: usize = 2 * TILE_ROWS;

/// Whether the products can run on AMX tiles here: asked once per process.
pub fn available() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("SOMNA_AMX").map_or(true, |v| v.trim() != "0") && detect())
}

/// Whether [`Packed::product_bf16`] can run here: on AMX tiles ([`available`]), or with
/// AVX-512 BF16 (the CPU has it and `SOMNA_AVX512_BF16=0` is not set).
pub fn bf16_available() -> bool {
    available() || avx512::available()
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> bool {
    use std::arch::x86_64::__cpuid_count;
    if __cpuid_count(0, 0).eax < 7 {
        return false;
    }
    let edx = __cpuid_count(7, 0).edx;
    let (amx_bf16, amx_tile) = (edx & (1 << 22) != 0, edx & (1 << 24) != 0);
    if !(amx_bf16 && amx_tile) {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with this request only changes the process's permitted xsave state.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> bool {
    false
}

/// `x` rounded to the nearest bf16, ties to even (the values here are finite).
fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// `x` as a high bf16 and the bf16 nearest to what it leaves.
fn split(x: f32) -> (u16, u16) {
    let hi = to_bf16(x);
    (hi, to_bf16(x - from_bf16(hi)))
}

/// A weight matrix (k, n), split and laid out once for the tiles: for each 16 columns,
/// k/2 rows of 64 bytes, each holding rows `2p` and `2p + 1` of those columns interleaved
/// (the pairs AMX's dot product takes).
pub struct Packed {
    k: usize,
    n: usize,
    hi: Vec<u16>,
    lo: Vec<u16>,
}

impl Packed {
    /// `w` row-major (k, n). None unless k is a multiple of 32 and n of 32 (all of
    /// MiniLM's layers are).
    pub fn new(w: &[f32], k: usize, n: usize) -> Option<Self> {
        Self::laid_out(w, k, n, true)
    }

    /// `w` row-major (k, n) rounded to bf16 and laid out as [`Packed::new`] lays out its high
    /// halves, for [`Packed::product_bf16`] alone (half the memory). Shapes as for `new`.
    pub fn new_bf16(w: &[f32], k: usize, n: usize) -> Option<Self> {
        Self::laid_out(w, k, n, false)
    }

    fn laid_out(w: &[f32], k: usize, n: usize, with_low: bool) -> Option<Self> {
        if k == 0
            || n == 0
            || !k.is_multiple_of(TILE_K)
            || !n.is_multiple_of(BLOCK)
            || w.len() != k * n
        {
            return None;
        }
        let mut hi = vec![0u16; k * n];
        let mut lo = if with_low {
            vec![0u16; k * n]
        } else {
            Vec::new()
        };
        for (row, values) in w.chunks_exact(n).enumerate() {
            for (col, &v) in values.iter().enumerate() {
                let at = (col / TILE_ROWS) * k * TILE_ROWS
                    + (row / 2) * 2 * TILE_ROWS
                    + (col % TILE_ROWS) * 2
                    + row % 2;
                let (h, l) = split(v);
                hi[at] = h;
                if with_low {
                    lo[at] = l;
                }
            }
        }
        Some(Self { k, n, hi, lo })
    }

    pub fn inputs(&self) -> usize {
        self.k
    }

    pub fn outputs(&self) -> usize {
        self.n
    }

    /// `a · W` for `a` row-major (m, k): (m, n) row-major. Call only where [`available`], on
    /// a weight from [`Packed::new`].
    pub fn product(&self, a: &[f32], m: usize) -> Vec<f32> {
        assert!(!self.lo.is_empty(), "a split product of a bf16-only weight");
        let rows = self.rows_for(a, m);
        let (a_hi, a_lo) = split_rows(a, rows, self.k);
        self.multiply(&a_hi, Some(&a_lo), m, rows)
    }

    /// `a · W` in plain bf16 (each value rounded to its high bf16, products summed in f32):
    /// about 8 bits of precision instead of [`Packed::product`]'s 16, for a third of the tile
    /// products and half the bytes of W. `a` row-major (m, k); (m, n) row-major. Call only
    /// where [`bf16_available`]: on AMX tiles where [`available`], else with AVX-512 BF16.
    pub fn product_bf16(&self, a: &[f32], m: usize) -> Vec<f32> {
        if available() {
            let rows = self.rows_for(a, m);
            let a_hi = bf16_rows(a, rows, self.k);
            return self.multiply(&a_hi, None, m, rows);
        }
        assert_eq!(a.len(), m * self.k, "a {m}×{} matrix", self.k);
        assert!(
            avx512::available(),
            "bf16 products where the CPU has neither AMX nor AVX-512 BF16"
        );
        let (k, n) = (self.k, self.n);
        let rows = m.div_ceil(avx512::ROWS) * avx512::ROWS;
        let a = avx512::bf16_rows(a, rows, k);
        // Not zeroed first: the kernel stores every element.
        let mut c = Vec::<f32>::with_capacity(rows * n);
        // SAFETY: `avx512::available()` holds (asserted above); the kernel checks the sizes.
        unsafe {
            avx512::product(
                &a,
                &self.hi,
                &mut c.spare_capacity_mut()[..rows * n],
                rows,
                k,
                n,
            )
        };
        // SAFETY: the kernel stored all rows × n elements: every 12 × 32 block.
        unsafe { c.set_len(rows * n) };
        c.truncate(m * n);
        c
    }

    /// The rows the kernel computes for an (m, k) `a`: m rounded up to the block.
    fn rows_for(&self, a: &[f32], m: usize) -> usize {
        assert_eq!(a.len(), m * self.k, "a {m}×{} matrix", self.k);
        assert!(
            available(),
            "AMX products where the CPU or kernel has no AMX"
        );
        m.div_ceil(BLOCK) * BLOCK
    }

    /// `a · W` from `a`'s tiles (`a_lo` the low halves, or `None` for plain bf16).
    fn multiply(&self, a_hi: &[u16], a_lo: Option<&[u16]>, m: usize, rows: usize) -> Vec<f32> {
        let (k, n) = (self.k, self.n);
        let (a_lo, b_lo): (&[u16], &[u16]) = match a_lo {
            Some(a_lo) => (a_lo, &self.lo),
            None => (&[], &[]),
        };
        // Not zeroed first: the kernel stores every element.
        let mut c = Vec::<f32>::with_capacity(rows * n);
        let out = &mut c.spare_capacity_mut()[..rows * n];
        // SAFETY: `available()` holds (`rows_for`); every tile read or written lies inside
        // these buffers (rows and k are multiples of the tiles' sizes, n of the block's), and
        // without low halves the kernel reads only `a_hi` and `self.hi`.
        unsafe { tiles::product(a_hi, a_lo, &self.hi, b_lo, out, rows, k, n) };
        // SAFETY: the kernel stored all rows × n elements: four accumulator tiles for every
        // 32 × 32 block.
        unsafe { c.set_len(rows * n) };
        c.truncate(m * n);
        c
    }
}

/// Calls `put(at, values)` for every 32 values of `a` (m, k) row-major, `at` their place
/// when laid out tile by tile: for each 16 rows, k/32 tiles of 16 × 32 values, each tile's
/// 1 KiB contiguous (a tile row is then one cache line and a tile 16 lines in a row, where
/// rows of the matrix lie k·2 bytes apart).
fn lay_out(a: &[f32], k: usize, mut put: impl FnMut(usize, &[f32])) {
    let tiles_per_row = k / TILE_K;
    for (r, row) in a.chunks_exact(k).enumerate() {
        let first = (r / TILE_ROWS) * tiles_per_row * TILE_ROWS * TILE_K + (r % TILE_ROWS) * TILE_K;
        for (t, values) in row.chunks_exact(TILE_K).enumerate() {
            put(first + t * TILE_ROWS * TILE_K, values);
        }
    }
}

/// `a` (m, k) row-major, split into high and low bf16 and laid out tile by tile
/// ([`lay_out`]). Rows from m to `rows` are zero.
fn split_rows(a: &[f32], rows: usize, k: usize) -> (Vec<u16>, Vec<u16>) {
    let (mut hi, mut lo) = (vec![0u16; rows * k], vec![0u16; rows * k]);
    lay_out(a, k, |at, values| {
        let (h, l) = (&mut hi[at..at + TILE_K], &mut lo[at..at + TILE_K]);
        for ((h, l), &v) in h.iter_mut().zip(l.iter_mut()).zip(values) {
            (*h, *l) = split(v);
        }
    });
    (hi, lo)
}

/// `a` (m, k) rounded to bf16 and laid out as [`split_rows`] lays out its high halves.
fn bf16_rows(a: &[f32], rows: usize, k: usize) -> Vec<u16> {
    let mut hi = vec![0u16; rows * k];
    lay_out(a, k, |at, values| {
        for (h, &v) in hi[at..at + TILE_K].iter_mut().zip(values) {
            *h = to_bf16(v);
        }
    });
    hi
}

#[cfg(target_arch = "x86_64")]
mod tiles {
    use super::{BLOCK, TILE_K, TILE_ROWS};
    use std::arch::asm;
    use std::mem::MaybeUninit;

    /// Palette 1, eight tiles of 16 rows × 64 bytes.
    #[repr(C, align(64))]
    struct Config([u8; 64]);

    fn config() -> Config {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..8 {
            c[16 + 2 * t..18 + 2 * t].copy_from_slice(&64u16.to_le_bytes());
            c[48 + t] = TILE_ROWS as u8;
        }
        Config(c)
    }

    /// Rows of A whose tiles one sweep over the columns keeps in L2: 128 rows of k = 1536
    /// are 768 KiB of high and low halves, beside one 32-column panel of B (192 KiB).
    const CHUNK: usize = 4 * BLOCK;

    /// One step of 32 along k for the 2×2 accumulators tmm0–3: `hi·lo`, `hi·hi`, then
    /// `lo·hi`, each of A's and B's tiles loaded once (eight loads for twelve products).
    /// `a0`, `a1` and `b0`, `b1` are element offsets of the tiles of the two 16-row blocks
    /// of A and of the two 16-column panels of B.
    ///
    /// # Safety
    /// The tile configuration is loaded and every tile at these offsets lies inside the slices.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn step(
        a_hi: &[u16],
        a_lo: &[u16],
        b_hi: &[u16],
        b_lo: &[u16],
        a0: usize,
        a1: usize,
        b0: usize,
        b1: usize,
    ) {
        // SAFETY: the caller's contract; the tiles are read, nothing else is touched.
        unsafe {
            asm!(
                "tileloadd tmm4, [{ah0} + {s}]",
                "tileloadd tmm5, [{ah1} + {s}]",
                "tileloadd tmm6, [{bl0} + {s}]",
                "tileloadd tmm7, [{bl1} + {s}]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                "tileloadd tmm6, [{bh0} + {s}]",
                "tileloadd tmm7, [{bh1} + {s}]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                "tileloadd tmm4, [{al0} + {s}]",
                "tileloadd tmm5, [{al1} + {s}]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                ah0 = in(reg) a_hi.as_ptr().add(a0),
                ah1 = in(reg) a_hi.as_ptr().add(a1),
                al0 = in(reg) a_lo.as_ptr().add(a0),
                al1 = in(reg) a_lo.as_ptr().add(a1),
                bh0 = in(reg) b_hi.as_ptr().add(b0),
                bh1 = in(reg) b_hi.as_ptr().add(b1),
                bl0 = in(reg) b_lo.as_ptr().add(b0),
                bl1 = in(reg) b_lo.as_ptr().add(b1),
                s = in(reg) 64usize,
                options(nostack, readonly)
            );
        }
    }

    /// One step of 32 along k in plain bf16: `hi·hi` alone, four loads for four products.
    ///
    /// # Safety
    /// As for [`step`].
    #[inline(always)]
    unsafe fn step_bf16(a_hi: &[u16], b_hi: &[u16], a0: usize, a1: usize, b0: usize, b1: usize) {
        // SAFETY: the caller's contract; the tiles are read, nothing else is touched.
        unsafe {
            asm!(
                "tileloadd tmm4, [{ah0} + {s}]",
                "tileloadd tmm5, [{ah1} + {s}]",
                "tileloadd tmm6, [{bh0} + {s}]",
                "tileloadd tmm7, [{bh1} + {s}]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                ah0 = in(reg) a_hi.as_ptr().add(a0),
                ah1 = in(reg) a_hi.as_ptr().add(a1),
                bh0 = in(reg) b_hi.as_ptr().add(b0),
                bh1 = in(reg) b_hi.as_ptr().add(b1),
                s = in(reg) 64usize,
                options(nostack, readonly)
            );
        }
    }

    /// `c = (a_hi + a_lo) · (b_hi + b_lo)` less the `lo·lo` term; with both low halves
    /// empty, `c = a_hi · b_hi` (plain bf16). `a_*` as [`super::split_rows`] lays them out,
    /// `b_*` as [`super::Packed`], `c` row-major (rows, n).
    ///
    /// # Safety
    /// AMX must be usable by this process; rows and k multiples of 32, n of 32; the slices
    /// of those sizes (the low halves may both be empty).
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn product(
        a_hi: &[u16],
        a_lo: &[u16],
        b_hi: &[u16],
        b_lo: &[u16],
        c: &mut [MaybeUninit<f32>],
        rows: usize,
        k: usize,
        n: usize,
    ) {
        // Checked in every build: the tiles below read and write by these sizes alone.
        assert!(rows.is_multiple_of(BLOCK) && k.is_multiple_of(TILE_K) && n.is_multiple_of(BLOCK));
        let split = !(a_lo.is_empty() && b_lo.is_empty());
        assert!(a_hi.len() == rows * k && (!split || a_lo.len() == rows * k));
        assert!(b_hi.len() == k * n && (!split || b_lo.len() == k * n) && c.len() == rows * n);
        let cfg = config();
        // C's rows are n f32 apart (every other tile's rows are 64 bytes apart).
        let stride_c = n * 4;
        // Elements from one 16-column panel of B to the next, and from one 16 rows of A.
        let (panel, a_rows) = (k * TILE_ROWS, TILE_ROWS * k);
        // SAFETY: the caller grants AMX; the sizes were checked above, so every tile loaded
        // from A (rows/16 × k/32 tiles of 1 KiB) and B (n/16 panels of k/2 rows of 64 bytes)
        // and every accumulator stored to C (rows × n f32) lies inside its slice; `cfg` lives
        // until the end, and the tiles are released before returning.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
            for chunk in (0..rows).step_by(CHUNK) {
                for col in (0..n).step_by(BLOCK) {
                    let b0 = (col / TILE_ROWS) * panel;
                    for row in (chunk..rows.min(chunk + CHUNK)).step_by(BLOCK) {
                        asm!(
                            "tilezero tmm0",
                            "tilezero tmm1",
                            "tilezero tmm2",
                            "tilezero tmm3",
                            options(nostack, nomem)
                        );
                        for kb in (0..k).step_by(TILE_K) {
                            let a0 = row * k + kb * TILE_ROWS;
                            let b = b0 + kb * TILE_ROWS;
                            if split {
                                step(a_hi, a_lo, b_hi, b_lo, a0, a0 + a_rows, b, b + panel);
                            } else {
                                step_bf16(a_hi, b_hi, a0, a0 + a_rows, b, b + panel);
                            }
                        }
                        let c0 = c.as_mut_ptr().cast::<f32>().add(row * n + col);
                        let c2 = c0.add(TILE_ROWS * n);
                        asm!(
                            "tilestored [{c0} + {sc}], tmm0",
                            "tilestored [{c1} + {sc}], tmm1",
                            "tilestored [{c2} + {sc}], tmm2",
                            "tilestored [{c3} + {sc}], tmm3",
                            c0 = in(reg) c0,
                            c1 = in(reg) c0.add(TILE_ROWS),
                            c2 = in(reg) c2,
                            c3 = in(reg) c2.add(TILE_ROWS),
                            sc = in(reg) stride_c,
                            options(nostack)
                        );
                    }
                }
            }
            asm!("tilerelease", options(nostack, nomem));
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tiles {
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn product(
        _: &[u16],
        _: &[u16],
        _: &[u16],
        _: &[u16],
        _: &mut [std::mem::MaybeUninit<f32>],
        _: usize,
        _: usize,
        _: usize,
    ) {
        unreachable!("AMX is x86_64 only; available() is false elsewhere")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..rows * cols)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 4.0
            })
            .collect()
    }

    #[test]
    fn a_split_keeps_sixteen_bits_of_each_value() {
        for x in [1.0f32, -2.718_281_7, 1e-3, 123_456.78, 0.1, -7.7e-5] {
            let (hi, lo) = split(x);
            let back = from_bf16(hi) + from_bf16(lo);
            assert!(
                (back - x).abs() <= x.abs() * 2f32.powi(-16),
                "{x} came back {back}"
            );
        }
        assert_eq!(to_bf16(1.0), 0x3F80);
        // Ties go to the even neighbour: 1 + 2^-8 lies halfway between two bf16 values.
        assert_eq!(to_bf16(1.0 + 2f32.powi(-8)), 0x3F80);
        assert_eq!(to_bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3F82);
    }

    #[test]
    fn shapes_the_tiles_cannot_take_are_refused() {
        assert!(Packed::new(&[0.0; 30 * 64], 30, 64).is_none());
        assert!(Packed::new(&[0.0; 32 * 48], 32, 48).is_none());
        assert!(Packed::new(&[0.0; 10], 32, 32).is_none());
        assert!(Packed::new(&[0.0; 32 * 32], 32, 32).is_some());
    }

    /// The shapes the tests multiply: a query's rows, a batch's, one not a multiple of 32.
    const SHAPES: [(usize, usize, usize); 4] = [
        (1, 384, 1152),
        (12, 384, 384),
        (45, 1536, 384),
        (77, 64, 96),
    ];

    /// The largest error of `product` over every element of an (m, k)·(k, n) product, as a
    /// share of the sum of its terms' magnitudes (f64 reference).
    fn worst_error(
        m: usize,
        k: usize,
        n: usize,
        packing: fn(&[f32], usize, usize) -> Option<Packed>,
        product: impl Fn(&Packed, &[f32]) -> Vec<f32>,
    ) -> f64 {
        let (a, w) = (matrix(m, k, 1 + m as u64), matrix(k, n, 99 + n as u64));
        let packed = packing(&w, k, n).unwrap();
        let c = product(&packed, &a);
        assert_eq!(c.len(), m * n);
        let mut worst = 0f64;
        for i in 0..m {
            for j in 0..n {
                let exact: f64 = (0..k)
                    .map(|t| f64::from(a[i * k + t]) * f64::from(w[t * n + j]))
                    .sum();
                let scale: f64 = (0..k)
                    .map(|t| (f64::from(a[i * k + t]) * f64::from(w[t * n + j])).abs())
                    .sum();
                worst = worst.max((f64::from(c[i * n + j]) - exact).abs() / scale);
            }
        }
        worst
    }

    /// Where the CPU has no AMX (or it is turned off), the products must not be offered.
    fn amx_or_refused() -> bool {
        if !available() {
            assert!(!detect() || std::env::var("SOMNA_AMX").is_ok_and(|v| v.trim() == "0"));
        }
        available()
    }

    /// On a CPU with AMX (the machines Somna is measured on have it) the products must agree
    /// with f64 to about f32's accuracy less eight bits; elsewhere they must not be offered.
    #[test]
    fn products_agree_with_f64_where_the_cpu_has_amx() {
        if !amx_or_refused() {
            return;
        }
        for (m, k, n) in SHAPES {
            let worst = worst_error(m, k, n, Packed::new, |p, a| p.product(a, m));
            assert!(worst < 2e-5, "{m}×{k}×{n}: relative error {worst:e}");
        }
    }

    /// The plain bf16 product keeps about 8 bits: each term is off by at most 2⁻⁸ of itself
    /// (both factors rounded to 8 bits). It must also be the cheaper product, not the split
    /// one under another name: its error is well above the split product's bound. Both
    /// kernels run it (AMX where available, else AVX-512 BF16), from either packing.
    #[test]
    fn bf16_products_agree_with_f64_to_eight_bits_where_the_cpu_has_them() {
        if !bf16_available() {
            assert!(!available() && !avx512::available());
            return;
        }
        for (m, k, n) in SHAPES {
            for packing in [Packed::new, Packed::new_bf16] {
                let worst = worst_error(m, k, n, packing, |p, a| p.product_bf16(a, m));
                assert!(
                    worst < 2f64.powi(-8),
                    "{m}×{k}×{n}: relative error {worst:e}"
                );
                assert!(
                    worst > 2e-5,
                    "{m}×{k}×{n}: relative error {worst:e}, as precise as the split product"
                );
            }
        }
    }

    /// The kernels multiply exactly the bf16-rounded values, each element of A with the
    /// element of W it meets in the product (a layout slip pairs the wrong ones and fails by
    /// far more): against f64 on the rounded values they are off only by f32 accumulation.
    #[test]
    fn bf16_products_are_the_products_of_the_rounded_values() {
        if !bf16_available() {
            return;
        }
        let round = |v: &[f32]| -> Vec<f32> { v.iter().map(|&x| from_bf16(to_bf16(x))).collect() };
        for (m, k, n) in SHAPES.into_iter().chain([(13, 64, 64), (24, 32, 32)]) {
            let (a, w) = (matrix(m, k, 7 + m as u64), matrix(k, n, 3 + n as u64));
            let c = Packed::new_bf16(&w, k, n).unwrap().product_bf16(&a, m);
            let (a, w) = (round(&a), round(&w));
            for i in 0..m {
                for j in 0..n {
                    let terms = (0..k).map(|t| f64::from(a[i * k + t]) * f64::from(w[t * n + j]));
                    let exact: f64 = terms.clone().sum();
                    let scale: f64 = terms.map(f64::abs).sum();
                    let err = (f64::from(c[i * n + j]) - exact).abs() / scale;
                    assert!(
                        err < 1e-6,
                        "{m}×{k}×{n} at ({i}, {j}): relative error {err:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_bf16_only_weight_has_no_low_halves() {
        let w = matrix(64, 32, 5);
        let (full, plain) = (
            Packed::new(&w, 64, 32).unwrap(),
            Packed::new_bf16(&w, 64, 32).unwrap(),
        );
        assert_eq!(full.hi, plain.hi);
        assert!(plain.lo.is_empty() && full.lo.len() == 64 * 32);
    }
}
