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
