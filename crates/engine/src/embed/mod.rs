//! Sentence embeddings: the [`Embedder`] interface, the candle BERT implementation, the
//! model files, and the batching queue.

mod bert;
mod encoder;
mod hashing;
pub mod model;
mod queue;

pub use bert::{BertEmbedder, EncoderKind, BATCH_SIZE, MAX_TOKENS};
pub use hashing::HashEmbedder;
pub use model::ModelDir;
pub use queue::EmbedQueue;

use crate::Result;

/// Turns texts into L2-normalised vectors of `dim()` floats.
pub trait Embedder: Send + Sync {
    fn dim(&self) -> usize;
    fn model_id(&self) -> &str;
    /// One vector per text, in input order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// Tokens `text` costs in a context window (no truncation, no special tokens).
    fn count_tokens(&self, text: &str) -> usize;
}

/// Cosine similarity of two L2-normalised vectors (their dot product).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scales `v` to unit length (no-op for the zero vector).
pub fn normalize(v: &mut [f32]) {
    let n = dot(v, v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}
