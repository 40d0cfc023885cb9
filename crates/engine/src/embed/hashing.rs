//! A deterministic feature-hashing embedder: words and character trigrams hashed into
//! `dim` buckets, L2-normalised. Not semantic. It exists for fast tests of everything
//! around the model (store, index, ingestion, crash recovery) and for synthetic benchmarks.

use super::{normalize, Embedder};
use crate::Result;

pub struct HashEmbedder {
    pub dim: usize,
}

impl HashEmbedder {
    pub fn new(dim: usize) -> Self {
        Self { dim }
    }

    fn bucket(&self, s: &str) -> (usize, f32) {
        // FNV-1a: stable across runs and platforms.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        (
            (h % self.dim as u64) as usize,
            if h >> 63 == 0 { 1.0 } else { -1.0 },
        )
    }
}

impl Embedder for HashEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn model_id(&self) -> &str {
        "hashing"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; self.dim];
                let lower = t.to_lowercase();
                for w in lower
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let (i, s) = self.bucket(w);
                    v[i] += s;
                    let chars: Vec<char> = format!("#{w}#").chars().collect();
                    for tri in chars.windows(3) {
                        let (i, s) = self.bucket(&tri.iter().collect::<String>());
                        v[i] += 0.3 * s;
                    }
                }
                if v.iter().all(|x| *x == 0.0) {
                    v[0] = 1.0;
                }
                normalize(&mut v);
                v
            })
            .collect())
    }

    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count().max(1)
    }
}

/// The hashing embedder, counting its calls and the texts it embeds: for tests of what is
/// embedded again and what is not (this crate's and, with the `testing` feature, others').
#[cfg(any(test, feature = "testing"))]
pub struct CountingEmbedder {
    hashing: HashEmbedder,
    calls: std::sync::atomic::AtomicUsize,
    texts: std::sync::atomic::AtomicUsize,
}

#[cfg(any(test, feature = "testing"))]
impl CountingEmbedder {
    pub fn new(dim: usize) -> Self {
        Self {
            hashing: HashEmbedder::new(dim),
            calls: Default::default(),
            texts: Default::default(),
        }
    }

    /// Calls of `embed` (and of `embed_one`, which calls it) so far.
    pub fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Texts embedded so far.
    pub fn texts(&self) -> usize {
        self.texts.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The embedder it counts for, to embed without counting.
    pub fn hashing(&self) -> &HashEmbedder {
        &self.hashing
    }
}

#[cfg(any(test, feature = "testing"))]
impl Embedder for CountingEmbedder {
    fn dim(&self) -> usize {
        self.hashing.dim()
    }
    fn model_id(&self) -> &str {
        self.hashing.model_id()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.texts
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        self.hashing.embed(texts)
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.hashing.count_tokens(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::dot;

    #[test]
    fn similar_texts_are_closer_than_unrelated_ones() {
        let e = HashEmbedder::new(384);
        let v = e
            .embed(&["the cat sat", "the cat sat down", "quantum chromodynamics"])
            .unwrap();
        assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
    }
}
