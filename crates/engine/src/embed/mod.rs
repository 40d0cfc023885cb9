//! Sentence embeddings: the [`Embedder`] interface, the candle BERT implementation, the
//! model files, and the batching queue.

mod bert;
mod bias;
mod cache;
mod encoder;
mod gelu;
mod hashing;
pub mod model;
mod queue;
pub mod recent;

pub use bert::{BertEmbedder, EncoderKind, BATCH_SIZE, MAX_TOKENS};
pub use cache::CachedEmbedder;
#[cfg(any(test, feature = "testing"))]
pub use hashing::CountingEmbedder;
pub use hashing::HashEmbedder;
pub use model::ModelDir;
pub use queue::EmbedQueue;
pub use recent::{Recent, RecentEmbedder};

use crate::Result;

/// Turns texts into L2-normalised vectors of `dim()` floats.
pub trait Embedder: Send + Sync {
    fn dim(&self) -> usize;
    fn model_id(&self) -> &str;
    /// One vector per text, in input order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// One text's vector, computed for the lowest latency (a search's query).
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        self.embed(&[text])?
            .pop()
            .ok_or_else(|| crate::Error::Embedding("no vector for the text".into()))
    }
    /// Tokens `text` costs in a context window (no truncation, no special tokens).
    fn count_tokens(&self, text: &str) -> usize;
}

/// Makes candle read the CPU count once per process. candle asks for it on every matrix
/// product and, unless `RAYON_NUM_THREADS` is set, counts physical cores by reading and
/// parsing /proc/cpuinfo each time: about 50 µs, 36 times per query embedding (6 layers,
/// 6 products each). This sets `RAYON_NUM_THREADS` to that same count when it is unset.
///
/// Changing the environment is only sound while no other thread reads it: binaries call
/// this first thing in `main`, before any thread starts.
pub fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = candle_core::utils::get_num_threads();
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    }
}

/// Whether Somna's encoder runs its linear layers on AMX tiles in this process (the CPU
/// and kernel grant them and `SOMNA_AMX=0` is not set), not on candle's f32 matmul.
pub fn products_on_amx() -> bool {
    somna_tiles::available()
}

/// Whether the encoder's products run in bf16 in this process: on AMX tiles (split in two
/// bf16 for what the store keeps, plain for a search's query), or with AVX-512 BF16 (plain
/// bf16 throughout; the CPU has it and `SOMNA_AVX512_BF16=0` is not set).
pub fn products_in_bf16() -> bool {
    somna_tiles::bf16_available()
}

/// Cosine similarity of two L2-normalised vectors (their dot product).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Independent partial sums: one running sum is a single dependency chain the compiler
    // may not reorder; 32 lanes fill several vector registers at once, so the additions
    // overlap (MMR at k = 200 computes 20,000 of these 384-d products a search).
    const LANES: usize = 32;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length (no-op for the zero vector).
pub fn normalize(v: &mut [f32]) {
    let n = dot(v, v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_plain_sum_at_every_length() {
        for n in [0usize, 1, 7, 8, 9, 383, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 53 % 13) as f32 - 6.0) / 5.0).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            assert!((dot(&a, &b) as f64 - plain).abs() < 1e-4, "length {n}");
        }
        assert_eq!(
            dot(&[1.0, 2.0, 3.0], &[4.0, 5.0]),
            14.0,
            "the shorter length counts"
        );
    }
}
