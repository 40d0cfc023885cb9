//! The embedding queue (seed 001): concurrent callers' texts are coalesced into one batch,
//! flushed when it reaches `batch_size` texts or when `flush_after` has passed since the
//! first waiting text, whichever comes first.

use super::Embedder;
use crate::{Error, Result};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Job {
    texts: Vec<String>,
    reply: Sender<Result<Vec<Vec<f32>>>>,
}

pub struct EmbedQueue {
    tx: Option<Sender<Job>>,
    worker: Option<JoinHandle<()>>,
}

impl EmbedQueue {
    pub fn new(embedder: Arc<dyn Embedder>, batch_size: usize, flush_after: Duration) -> Self {
        let (tx, rx) = mpsc::channel::<Job>();
        let worker = std::thread::Builder::new()
            .name("somna-embed-queue".into())
            .spawn(move || run(embedder.as_ref(), rx, batch_size.max(1), flush_after))
            .expect("spawning the embedding queue thread");
        Self {
            tx: Some(tx),
            worker: Some(worker),
        }
    }

    /// Embeds `texts`, sharing a batch with whatever other callers submit meanwhile.
    pub fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = mpsc::channel();
        self.tx
            .as_ref()
            .and_then(|tx| tx.send(Job { texts, reply }).ok())
            .ok_or_else(|| Error::Embedding("the embedding queue has stopped".into()))?;
        answer
            .recv()
            .map_err(|_| Error::Embedding("the embedding queue has stopped".into()))?
    }
}

impl Drop for EmbedQueue {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

fn run(embedder: &dyn Embedder, rx: Receiver<Job>, batch_size: usize, flush_after: Duration) {
    while let Ok(first) = rx.recv() {
        let deadline = Instant::now() + flush_after;
        let mut pending = vec![first];
        let mut count = pending[0].texts.len();
        let mut open = true;
        while count < batch_size {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(job) => {
                    count += job.texts.len();
                    pending.push(job);
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        flush(embedder, pending);
        if !open {
            return;
        }
    }
}

fn flush(embedder: &dyn Embedder, jobs: Vec<Job>) {
    let all: Vec<&str> = jobs
        .iter()
        .flat_map(|j| j.texts.iter().map(String::as_str))
        .collect();
    match embedder.embed(&all) {
        Ok(mut vectors) => {
            for job in jobs.into_iter().rev() {
                let rest = vectors.split_off(vectors.len() - job.texts.len());
                let _ = job.reply.send(Ok(rest));
            }
        }
        Err(e) => {
            let msg = e.to_string();
            for job in jobs {
                let _ = job.reply.send(Err(Error::Embedding(msg.clone())));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts calls; embeds a text as [len, 1, 0, ...].
    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn dim(&self) -> usize {
            3
        }
        fn model_id(&self) -> &str {
            "counting"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| vec![t.len() as f32, 1.0, 0.0])
                .collect())
        }
        fn count_tokens(&self, text: &str) -> usize {
            text.len()
        }
    }

    #[test]
    fn concurrent_callers_share_one_batch_and_get_their_own_vectors() {
        let emb = Arc::new(Counting(AtomicUsize::new(0)));
        let q = Arc::new(EmbedQueue::new(emb.clone(), 64, Duration::from_millis(300)));
        let handles: Vec<_> = (1..=4)
            .map(|n| {
                let q = q.clone();
                std::thread::spawn(move || q.embed(vec!["x".repeat(n); n]).unwrap())
            })
            .collect();
        for (n, h) in (1..=4).zip(handles) {
            let v = h.join().unwrap();
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|e| e[0] == n as f32));
        }
        assert_eq!(
            emb.0.load(Ordering::SeqCst),
            1,
            "one flush for all four callers"
        );
    }

    #[test]
    fn a_full_batch_flushes_without_waiting_for_the_timer() {
        let emb = Arc::new(Counting(AtomicUsize::new(0)));
        let q = EmbedQueue::new(emb, 2, Duration::from_secs(60));
        let t = Instant::now();
        q.embed(vec!["a".into(), "b".into()]).unwrap();
        assert!(t.elapsed() < Duration::from_secs(30));
    }
}
