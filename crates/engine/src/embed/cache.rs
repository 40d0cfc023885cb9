//! A file of embeddings keyed by the SHA-256 of their text, in front of an embedder: texts
//! seen before are not embedded again. Evaluations use it so that re-importing the same
//! conversations (after a change to ingestion) costs seconds instead of minutes.
//!
//! The file is a header (`SOMNA-EMBED-CACHE 1`, the model id, the dimension) followed by
//! records of a 32-byte key and `dim` little-endian f32s, appended as texts are embedded.
//! A record cut short by a crash is ignored when the file is read.
//!
//! A search's query is embedded on the single-query path ([`Embedder::embed_one`]), whose
//! products may run at a lower precision than a stored memory's (`encoder::Precision`): its
//! vector is kept under a key of its own (the SHA-256 of `query\0` and the text), so a text
//! asked as a question never lends its vector to the same text stored as a memory, nor the
//! other way round.

use super::Embedder;
use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

const MAGIC: &str = "SOMNA-EMBED-CACHE 1";

type Key = [u8; 32];

pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    path: PathBuf,
    known: RwLock<HashMap<Key, Vec<f32>>>,
    file: Mutex<BufWriter<std::fs::File>>,
}

fn header(model: &str, dim: usize) -> String {
    format!("{MAGIC}\n{model}\n{dim}\n")
}

fn key(text: &str) -> Key {
    Sha256::digest(text.as_bytes()).into()
}

/// The key of `text`'s vector as a query.
fn query_key(text: &str) -> Key {
    let mut h = Sha256::new();
    h.update(b"query\0");
    h.update(text.as_bytes());
    h.finalize().into()
}

impl CachedEmbedder {
    /// Opens (or creates) the cache at `path` for `inner`'s model. A cache made by another
    /// model or dimension is refused.
    pub fn open(inner: Arc<dyn Embedder>, path: &Path) -> Result<Self> {
        let head = header(inner.model_id(), inner.dim());
        let mut known = HashMap::new();
        if path.exists() {
            let mut bytes = Vec::new();
            std::fs::File::open(path)
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .map_err(|e| Error::io(path, e))?;
            if !bytes.starts_with(head.as_bytes()) {
                return Err(Error::InvalidInput(format!(
                    "{} is not an embedding cache of {} ({} dimensions)",
                    path.display(),
                    inner.model_id(),
                    inner.dim()
                )));
            }
            let record = 32 + 4 * inner.dim();
            let whole = head.len() + (bytes.len() - head.len()) / record * record;
            if whole < bytes.len() {
                // A record cut short: drop it so appends stay aligned.
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|f| f.set_len(whole as u64))
                    .map_err(|e| Error::io(path, e))?;
            }
            for r in bytes[head.len()..whole].chunks_exact(record) {
                let mut k = [0u8; 32];
                k.copy_from_slice(&r[..32]);
                let v = r[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                known.insert(k, v);
            }
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
            std::fs::write(path, head.as_bytes()).map_err(|e| Error::io(path, e))?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(Self {
            inner,
            path: path.to_path_buf(),
            known: RwLock::new(known),
            file: Mutex::new(BufWriter::new(file)),
        })
    }

    /// Keeps new vectors in memory and appends them to the file.
    fn remember(&self, pairs: &[(Key, Vec<f32>)]) -> Result<()> {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let mut known = self.known.write().unwrap_or_else(|p| p.into_inner());
        for (k, v) in pairs {
            if known.insert(*k, v.clone()).is_none() {
                let mut record = k.to_vec();
                record.extend(v.iter().flat_map(|x| x.to_le_bytes()));
                file.write_all(&record)
                    .map_err(|e| Error::io(&self.path, e))?;
            }
        }
        file.flush().map_err(|e| Error::io(&self.path, e))
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.known.read().map_or(0, |k| k.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Embedder for CachedEmbedder {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let keys: Vec<Key> = texts.iter().map(|t| key(t)).collect();
        let mut found: HashMap<Key, Vec<f32>> = {
            let known = self.known.read().unwrap_or_else(|p| p.into_inner());
            keys.iter()
                .filter_map(|k| known.get(k).map(|v| (*k, v.clone())))
                .collect()
        };
        // Each missing text once, even when the batch repeats it.
        let mut missing: Vec<usize> = Vec::new();
        let mut asked = std::collections::HashSet::new();
        for (i, k) in keys.iter().enumerate() {
            if !found.contains_key(k) && asked.insert(*k) {
                missing.push(i);
            }
        }
        if !missing.is_empty() {
            let fresh = self
                .inner
                .embed(&missing.iter().map(|&i| texts[i]).collect::<Vec<_>>())?;
            let pairs: Vec<(Key, Vec<f32>)> = missing.iter().map(|&i| keys[i]).zip(fresh).collect();
            self.remember(&pairs)?;
            found.extend(pairs);
        }
        keys.iter()
            .map(|k| {
                found.get(k).cloned().ok_or_else(|| {
                    Error::Embedding("the embedder returned fewer vectors than texts".into())
                })
            })
            .collect()
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let k = query_key(text);
        if let Some(v) = self.known.read().unwrap_or_else(|p| p.into_inner()).get(&k) {
            return Ok(v.clone());
        }
        // An evaluation asks the same questions again for every setting it tries: keep
        // them too (embedded on the single-query path).
        let v = self.inner.embed_one(text)?;
        self.remember(&[(k, v.clone())])?;
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
    fn texts_seen_before_are_served_from_the_file_even_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.bin");
        let inner = Arc::new(CountingEmbedder::new(16));
        let direct = inner.hashing().embed(&["a b", "c d"]).unwrap();
        let cache = CachedEmbedder::open(inner.clone(), &path).unwrap();
        assert_eq!(
            cache.embed(&["a b", "c d", "a b"]).unwrap()[..2],
            direct[..]
        );
        assert_eq!(inner.texts(), 2);
        drop(cache);
        let cache = CachedEmbedder::open(inner.clone(), &path).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(
            cache.embed(&["c d", "a b"]).unwrap(),
            vec![direct[1].clone(), direct[0].clone()]
        );
        assert_eq!(inner.texts(), 2, "nothing embedded again");
        cache.embed(&["e f"]).unwrap();
        assert_eq!(inner.texts(), 3);
    }

    #[test]
    fn a_query_and_a_stored_text_keep_vectors_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.bin");
        let inner = Arc::new(CountingEmbedder::new(16));
        let cache = CachedEmbedder::open(inner.clone(), &path).unwrap();
        cache.embed(&["where is Ann"]).unwrap();
        assert_eq!(inner.texts(), 1);
        // Asked as a query, the same text is embedded on the query path, once.
        cache.embed_one("where is Ann").unwrap();
        assert_eq!(inner.texts(), 2);
        cache.embed_one("where is Ann").unwrap();
        cache.embed_one("who is Bo").unwrap();
        assert_eq!(inner.texts(), 3);
        drop(cache);
        let cache = CachedEmbedder::open(inner.clone(), &path).unwrap();
        assert_eq!(cache.len(), 3);
        // A text first asked as a query is embedded again when it is stored.
        cache.embed(&["who is Bo", "where is Ann"]).unwrap();
        cache.embed_one("who is Bo").unwrap();
        assert_eq!(inner.texts(), 4);
    }

    #[test]
    fn a_cut_record_is_ignored_and_another_models_cache_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.bin");
        let inner: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(16));
        CachedEmbedder::open(inner.clone(), &path)
            .unwrap()
            .embed(&["x", "y"])
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 7]).unwrap();
        let reopened = CachedEmbedder::open(inner.clone(), &path).unwrap();
        assert_eq!(reopened.len(), 1);
        // Appending after the cut record stays aligned.
        reopened.embed(&["z"]).unwrap();
        drop(reopened);
        assert_eq!(CachedEmbedder::open(inner, &path).unwrap().len(), 2);
        let other: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(8));
        let err = CachedEmbedder::open(other, &path).err().unwrap();
        assert_eq!(err.code(), "invalid_input");
    }
}
