//! Plain bf16 products on AVX-512 BF16 (`vdpbf16ps`), for CPUs that have it without AMX
//! (AMD Zen 4 and later, Intel Cooper Lake).
//!
//! `vdpbf16ps` multiplies 32 bf16 pairs into 16 f32 accumulators: twice the multiply-adds of
//! an f32 FMA of the same width, from half the bytes. A batch's products ran 1.7 times as
//! many sentences a second as candle's f32 matmul on a Zen 4 core, and a search's query (a
//! dozen rows, which stream every weight from memory once) took half the time (README,
//! "Speed"). The weights are [`super::Packed`]'s high halves, laid out as
//! for the tiles: each 16 columns hold k/2 rows of 64 bytes, rows `2p` and `2p + 1`
//! interleaved, which is the pair layout `vdpbf16ps` takes. A's rows stay row-major in bf16,
//! where each pair of a row is one 32-bit broadcast.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

/// Rows of A one block multiplies: 12 rows × 32 columns are 24 accumulators in registers (of
/// 32), beside two vectors of B and a broadcast of A.
pub(super) const ROWS: usize = 12;
/// Columns of a block: two 16-column panels of B.
const COLS: usize = 32;
/// Rows of A one sweep over B's columns keeps in L2: 120 rows of k = 1536 in bf16 are 360 KiB.
const CHUNK: usize = 10 * ROWS;

/// Whether this CPU has AVX-512 BF16 and `SOMNA_AVX512_BF16=0` is not set: asked once.
pub(super) fn available() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("SOMNA_AVX512_BF16").map_or(true, |v| v.trim() != "0") && detect()
    })
}

#[cfg(target_arch = "x86_64")]
fn detect() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bf16")
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> bool {
    false
}

/// `a` (m, k) row-major rounded to bf16, row-major, with rows m to `rows` zero.
pub(super) fn bf16_rows(a: &[f32], rows: usize, k: usize) -> Vec<u16> {
    let mut out = vec![0u16; rows * k];
    for (o, &v) in out.iter_mut().zip(a) {
        *o = super::to_bf16(v);
    }
    out
}

/// `c = a · b` in bf16 with f32 accumulation: `a` (rows, k) row-major from [`bf16_rows`], `b`
/// [`super::Packed`]'s high halves, `c` (rows, n) row-major. Every element of `c` is stored.
///
/// # Safety
/// [`available`] must hold.
pub(super) unsafe fn product(
    a: &[u16],
    b: &[u16],
    c: &mut [MaybeUninit<f32>],
    rows: usize,
    k: usize,
    n: usize,
) {
    // Checked in every build: the loads and stores below go by these sizes alone.
    assert!(rows.is_multiple_of(ROWS) && k.is_multiple_of(2) && n.is_multiple_of(COLS));
    assert!(a.len() == rows * k && b.len() == k * n && c.len() == rows * n);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller grants AVX-512 BF16; the sizes were checked above.
    unsafe {
        x86::product(a, b, c, rows, k, n)
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("AVX-512 is x86_64 only; available() is false elsewhere")
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{CHUNK, COLS, ROWS};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// # Safety
    /// AVX-512 BF16 is available and the sizes are as [`super::product`] checks them.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(super) unsafe fn product(
        a: &[u16],
        b: &[u16],
        c: &mut [MaybeUninit<f32>],
        rows: usize,
        k: usize,
        n: usize,
    ) {
        // A 16-column panel of B: k/2 rows of 32 bf16.
        let panel = k * 16;
        for chunk in (0..rows).step_by(CHUNK) {
            for col in (0..n).step_by(COLS) {
                for row in (chunk..rows.min(chunk + CHUNK)).step_by(ROWS) {
                    // SAFETY: rows row..row + ROWS of A (row + ROWS ≤ rows), the two panels
                    // of columns col..col + 32 of B (col + 32 ≤ n) and the same rows and
                    // columns of C lie inside the slices, whose sizes the caller checked.
                    unsafe {
                        block(
                            a.as_ptr().add(row * k),
                            b.as_ptr().add((col / 16) * panel),
                            b.as_ptr().add((col / 16 + 1) * panel),
                            c.as_mut_ptr().add(row * n + col).cast::<f32>(),
                            k,
                            n,
                        )
                    }
                }
            }
        }
    }

    /// C's 12 × 32 block at `c` (rows n apart) from A's 12 rows at `a` (k apart) and B's
    /// two panels at `b0`, `b1`: for each pair of k, each row's pair broadcast against the
    /// panels' 64-byte rows.
    ///
    /// # Safety
    /// AVX-512 BF16 is available; `a` holds 12 rows of k, `b0` and `b1` k/2 rows of 32, and
    /// `c` 12 rows of at least 32 f32, n apart.
    #[target_feature(enable = "avx512f,avx512bf16")]
    #[inline]
    unsafe fn block(
        a: *const u16,
        b0: *const u16,
        b1: *const u16,
        c: *mut f32,
        k: usize,
        n: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); 2]; ROWS];
        for p in 0..k / 2 {
            // SAFETY: p < k/2, so each load reads a panel row and each broadcast a pair of a
            // row, inside what the caller grants; the casts only reinterpret 512 bits.
            unsafe {
                let w0: __m512bh = std::mem::transmute(_mm512_loadu_si512(b0.add(p * 32).cast()));
                let w1: __m512bh = std::mem::transmute(_mm512_loadu_si512(b1.add(p * 32).cast()));
                for (r, acc) in acc.iter_mut().enumerate() {
                    let pair = a.add(r * k + 2 * p).cast::<i32>().read_unaligned();
                    let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(pair));
                    acc[0] = _mm512_dpbf16_ps(acc[0], x, w0);
                    acc[1] = _mm512_dpbf16_ps(acc[1], x, w1);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            // SAFETY: row r of the block, 32 f32 at c + r·n, inside what the caller grants.
            unsafe {
                _mm512_storeu_ps(c.add(r * n), acc[0]);
                _mm512_storeu_ps(c.add(r * n + 16), acc[1]);
            }
        }
    }
}
