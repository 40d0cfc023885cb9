//! The vectors of recently embedded texts, kept in memory by the engine for its searches: a
//! query asked again (a golden query run after each change, the what-if simulator ranking
//! the same queries as a person moves a setting, a search re-run as the time scrubber
//! rests) is not embedded again. Bounded: past [`RECENT_TEXTS`] texts the oldest go first.

use super::Embedder;
use crate::Result;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Texts kept (1.5 KB each for all-MiniLM-L6-v2's 384 floats: 6 MB at most).
pub const RECENT_TEXTS: usize = 4096;

/// The kept vectors by text, and the texts in the order they came in.
#[derive(Default)]
struct Kept {
    vectors: HashMap<String, Vec<f32>>,
    order: VecDeque<String>,
}

/// Vectors of recently embedded texts.
#[derive(Default)]
pub struct Recent {
    kept: Mutex<Kept>,
}

impl Recent {
    pub(crate) fn get(&self, text: &str) -> Option<Vec<f32>> {
        self.lock().vectors.get(text).cloned()
    }

    pub(crate) fn put(&self, text: &str, v: &[f32]) {
        let mut kept = self.lock();
        let Kept { vectors, order } = &mut *kept;
        if vectors.insert(text.to_string(), v.to_vec()).is_none() {
            order.push_back(text.to_string());
        }
        while order.len() > RECENT_TEXTS {
            if let Some(old) = order.pop_front() {
                vectors.remove(&old);
            }
        }
    }

    pub fn clear(&self) {
        *self.lock() = Kept::default();
    }

    pub fn len(&self) -> usize {
        self.lock().vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `inner` with the recent vectors in front of it.
pub struct RecentEmbedder<'a> {
    pub inner: &'a dyn Embedder,
    pub recent: &'a Recent,
}

impl Embedder for RecentEmbedder<'_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out: Vec<Option<Vec<f32>>> = texts.iter().map(|t| self.recent.get(t)).collect();
        let missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        if !missing.is_empty() {
            let mut fresh = self.inner.embed(&missing)?.into_iter();
            for (t, slot) in texts.iter().zip(out.iter_mut()) {
                if slot.is_none() {
                    let v = fresh.next().ok_or_else(|| {
                        crate::Error::Embedding("the embedder returned too few vectors".into())
                    })?;
                    self.recent.put(t, &v);
                    *slot = Some(v);
                }
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        if let Some(v) = self.recent.get(text) {
            return Ok(v);
        }
        let v = self.inner.embed_one(text)?;
        self.recent.put(text, &v);
        Ok(v)
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{CountingEmbedder, HashEmbedder};

    #[test]
    fn a_text_seen_before_is_not_embedded_again_and_vectors_keep_their_order() {
        let inner = CountingEmbedder::new(16);
        let recent = Recent::default();
        let e = RecentEmbedder {
            inner: &inner,
            recent: &recent,
        };
        let first = e.embed_one("where is Ann").unwrap();
        let batch = e.embed(&["new one", "where is Ann", "another"]).unwrap();
        assert_eq!(inner.texts(), 3);
        assert_eq!(batch[1], first);
        assert_eq!(batch[0], inner.hashing().embed_one("new one").unwrap());
        assert_eq!(batch[2], inner.hashing().embed_one("another").unwrap());
        e.embed(&["new one", "another"]).unwrap();
        assert_eq!(inner.texts(), 3);
    }

    #[test]
    fn the_oldest_text_goes_first_when_the_cache_is_full() {
        let inner = HashEmbedder::new(4);
        let recent = Recent::default();
        let e = RecentEmbedder {
            inner: &inner,
            recent: &recent,
        };
        for i in 0..RECENT_TEXTS + 3 {
            e.embed_one(&format!("text {i}")).unwrap();
        }
        assert_eq!(recent.len(), RECENT_TEXTS);
        assert!(recent.get("text 0").is_none() && recent.get("text 2").is_none());
        assert!(recent.get("text 3").is_some());
    }
}
