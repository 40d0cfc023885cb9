//! all-MiniLM-L6-v2 on candle: WordPiece tokens truncated at 256, BERT forward pass,
//! attention-masked mean pooling, L2 normalisation (what sentence-transformers does).

use super::encoder::{Encoder, Precision};
use super::model::ModelDir;
use super::Embedder;
use crate::{Error, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokenizers::{Tokenizer, TruncationParams};

/// sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;
/// Most sequences per forward pass; inputs are sorted by token count first so a batch's
/// sequences have similar lengths and little padding.
pub const BATCH_SIZE: usize = 32;
/// Most tokens per forward pass, padding included (one text longer than this is a batch
/// alone). Smaller batches share out better over the cores and keep the per-layer buffers
/// small: importing the LoCoMo dev set (2,760 turns of about 30 tokens) took 37–39 s with
/// batches of 32 texts and 26–27 s with this bound; short sentences are as fast (see
/// README, "Speed").
pub const BATCH_TOKENS: usize = 512;

/// `order` (text indices sorted by token count) cut into batches of at most `BATCH_SIZE`
/// texts and `BATCH_TOKENS` padded tokens.
fn batches(order: &[usize], tokens: impl Fn(usize) -> usize) -> Vec<&[usize]> {
    let mut out = Vec::new();
    let mut start = 0;
    for end in 1..=order.len() {
        let full = end - start == BATCH_SIZE
            || order
                .get(end)
                .is_none_or(|&next| (end - start + 1) * tokens(next) > BATCH_TOKENS);
        if full {
            out.push(&order[start..end]);
            start = end;
        }
    }
    out
}

/// Which implementation of the BERT forward pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncoderKind {
    /// Somna's encoder (weights stored for the matmul, fused QKV): the default.
    Somna,
    /// candle-transformers' `BertModel`, kept for the benchmark and the parity test.
    CandleTransformers,
}

enum Forward {
    Somna(Encoder),
    CandleTransformers(Box<BertModel>),
}

pub struct BertEmbedder {
    model: Forward,
    /// Truncates at MAX_TOKENS, never pads (batches are padded here, to their longest).
    tokenizer: Tokenizer,
    /// No truncation: counts the tokens a text costs in a context window.
    counter: Tokenizer,
    dim: usize,
    device: Device,
    /// One thread for single queries (see [`Embedder::embed_one`]).
    query_pool: rayon::ThreadPool,
    /// How many batches run side by side, one per core (see [`Embedder::embed`]).
    batch_workers: usize,
}

/// A batch's place in the list of batches and its vectors.
type BatchVectors = (usize, Vec<Vec<f32>>);

fn one_thread_pool(name: &'static str) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(move |_| name.into())
        .build()
        .map_err(|e| Error::Embedding(format!("{name} thread: {e}")))
}

impl BertEmbedder {
    /// Loads the model from `dir` after checking its files' hashes.
    pub fn load(dir: &ModelDir) -> Result<Self> {
        Self::load_with(dir, EncoderKind::Somna)
    }

    pub fn load_with(dir: &ModelDir, kind: EncoderKind) -> Result<Self> {
        dir.verify()?;
        // candle's barrier pool spin-waits; on small machines one worker per process wins
        // (measured: 57 → ~90 sentences/s on 2 cores). Respect an explicit setting.
        if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
            std::env::set_var("CANDLE_NUM_THREADS", "1");
        }
        super::pin_thread_count();
        let device = Device::Cpu;
        let config_path = dir.file("config.json");
        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| Error::io(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text)?;
        // Read, not mmapped: mmap needs `unsafe` and the file is only 90 MB.
        let weights_path = dir.file("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|e| Error::io(&weights_path, e))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)?;
        let model = match kind {
            EncoderKind::Somna => Forward::Somna(Encoder::load(vb, &config)?),
            EncoderKind::CandleTransformers => {
                Forward::CandleTransformers(Box::new(BertModel::load(vb, &config)?))
            }
        };

        let tok_path = dir.file("tokenizer.json");
        let mut counter = Tokenizer::from_file(&tok_path)
            .map_err(|e| Error::Embedding(format!("{}: {e}", tok_path.display())))?;
        counter.with_padding(None);
        counter
            .with_truncation(None)
            .map_err(|e| Error::Embedding(e.to_string()))?;
        let mut tokenizer = counter.clone();
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| Error::Embedding(e.to_string()))?;
        Ok(Self {
            model,
            tokenizer,
            counter,
            dim: config.hidden_size,
            device,
            query_pool: one_thread_pool("somna-query-embed")?,
            batch_workers: candle_core::utils::get_num_threads().max(1),
        })
    }

    fn embed_batch(
        &self,
        encodings: &[&tokenizers::Encoding],
        precision: Precision,
    ) -> Result<Vec<Vec<f32>>> {
        let batch = encodings.len();
        let len = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0u32; batch * len];
        let mut mask = vec![0u32; batch * len];
        for (row, enc) in encodings.iter().enumerate() {
            let at = row * len;
            ids[at..at + enc.len()].copy_from_slice(enc.get_ids());
            mask[at..at + enc.len()].copy_from_slice(enc.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (batch, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (batch, len), &self.device)?;
        let hidden = match &self.model {
            Forward::Somna(encoder) => encoder.forward(&ids, &mask, precision)?,
            Forward::CandleTransformers(model) => {
                model.forward(&ids, &ids.zeros_like()?, Some(&mask))?
            }
        }; // (B, L, H)
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (B, L, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (B, H)
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?; // (B, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norm)?.to_vec2::<f32>()?)
    }
}

impl Embedder for BertEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn model_id(&self) -> &str {
        "all-MiniLM-L6-v2"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_at(texts, Precision::Stored)
    }

    /// A query's products are small (a dozen rows): split over two cores they gain less
    /// than the hand-off costs, and beside the lexical search (which runs at the same time)
    /// they wait for a core. On one thread of its own the embedding neither waits nor makes
    /// the lexical search wait; `examples/query_embed.rs` measures the four arrangements.
    /// Its products are plain bf16 on AMX or AVX-512 BF16 ([`Precision::Query`]): inside a
    /// search the weights are no longer in cache, and reading half the bytes took the query
    /// embedding of the direct route from 4.3–5.0 ms to 1.7–2.1 ms p50 in `somna bench
    /// --only search` at 100,000 memories (README, "Speed").
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = self
            .query_pool
            .install(|| self.embed_at(&[text], Precision::Query))?;
        v.pop()
            .ok_or_else(|| Error::Embedding("no vector for the text".into()))
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.counter
            .encode(text, false)
            .map(|e| e.len())
            // The tokenizer cannot fail on valid UTF-8; fall back to a word estimate anyway.
            .unwrap_or_else(|_| text.split_whitespace().count())
    }
}

impl BertEmbedder {
    /// The vectors of `texts`, their products at `precision`.
    fn embed_at(&self, texts: &[&str], precision: Precision) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // One text (a query) skips the batch path, which hands the work to rayon.
        let encodings = match texts {
            [one] => self.tokenizer.encode(*one, true).map(|e| vec![e]),
            _ => self.tokenizer.encode_batch(texts.to_vec(), true),
        }
        .map_err(|e| Error::Embedding(e.to_string()))?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let chunks = batches(&order, |i| encodings[i].len());
        let run = |chunk: &[usize]| {
            let batch: Vec<&tokenizers::Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            self.embed_batch(&batch, precision)
        };
        let workers = self.batch_workers.min(chunks.len());
        let done: Vec<Result<Vec<BatchVectors>>> = if workers <= 1 {
            // One batch (or one core): its products are split over the cores.
            vec![(0..chunks.len())
                .map(|c| Ok((c, run(chunks[c])?)))
                .collect()]
        } else {
            // Several batches: each runs whole on one core, as many at once as there are
            // cores. A batch's products split over two cores spend much of their time
            // handing work over (measured: 147 sentences/s that way, 243 with a batch per
            // core). Workers take the next batch as they finish, longest first, so that no
            // long one is left for the end while the other cores idle.
            //
            // The workers' pools are started here, by the caller, not once with the
            // embedder: a thread inherits its creator's scheduling priority (on Linux its
            // nice value), so an import on the app's low-priority job thread embeds at low
            // priority and leaves the window's process the cores, while a search's
            // sub-queries embed at the searcher's priority. Pools kept from the start ran
            // every batch at the priority of whichever thread loaded the model. Starting
            // them costs well under a millisecond against a batch's hundreds.
            let pools = (0..workers)
                .map(|_| one_thread_pool("somna-embed"))
                .collect::<Result<Vec<_>>>()?;
            let next = AtomicUsize::new(0);
            let worker = || {
                let mut mine = Vec::new();
                loop {
                    let taken = next.fetch_add(1, Ordering::Relaxed);
                    let Some(c) = chunks.len().checked_sub(taken + 1) else {
                        return Ok(mine);
                    };
                    mine.push((c, run(chunks[c])?));
                }
            };
            std::thread::scope(|s| {
                let handles: Vec<_> = pools
                    .iter()
                    .map(|pool| s.spawn(|| pool.install(worker)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::Embedding("an embedding thread panicked".into()))
                        })
                    })
                    .collect()
            })
        };
        let mut out = vec![Vec::new(); texts.len()];
        for part in done {
            for (c, vectors) in part? {
                for (&i, v) in chunks[c].iter().zip(vectors) {
                    out[i] = v;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(lengths: &[usize]) -> Vec<Vec<usize>> {
        let order: Vec<usize> = (0..lengths.len()).collect();
        batches(&order, |i| lengths[i])
            .into_iter()
            .map(<[usize]>::to_vec)
            .collect()
    }

    #[test]
    fn batches_hold_every_text_once_within_both_bounds() {
        // Sorted lengths: many short texts, then longer ones, then one past the budget.
        let lengths: Vec<usize> = (0..100)
            .map(|i| 8 + i / 4)
            .chain([40, 60, 120, 300, 600])
            .collect();
        let got = cut(&lengths);
        let flat: Vec<usize> = got.iter().flatten().copied().collect();
        assert_eq!(flat, (0..lengths.len()).collect::<Vec<_>>());
        for b in &got {
            let padded = b.len() * lengths[*b.last().unwrap()];
            assert!(b.len() <= BATCH_SIZE, "{} texts", b.len());
            assert!(
                padded <= BATCH_TOKENS || b.len() == 1,
                "{padded} padded tokens in {b:?}"
            );
        }
        assert_eq!(got.last().unwrap(), &vec![lengths.len() - 1], "alone");
        // Short texts fill a batch to BATCH_SIZE.
        assert_eq!(got[0].len(), BATCH_SIZE);
    }

    #[test]
    fn no_texts_make_no_batches() {
        assert!(cut(&[]).is_empty());
    }
}
