//! The engine façade: owns the store, the index, the embedder and the embedding queue, and
//! hands each operation to the subsystem that implements it. Methods stay thin. Every
//! `impl Somna` is in this folder, one file per area; subsystems below take explicit
//! handles or context structs ([`Handles`], `retrieve::SearchCtx`, `cluster::Clustering`)
//! and never import the façade (checked by `layers_test.rs`).

mod cluster;
mod curate;
mod golden;
mod ingest;
#[cfg(test)]
mod layers_test;
mod ledger;
mod liquid;
mod memories;
mod points;
mod project;
mod search;
mod settings;
mod sleep;
pub(crate) mod sync;
mod timetravel;
mod whatif;

pub use liquid::LiquidLoop;
pub use sync::{Changes, ExternalWatch};
pub use timetravel::{Tick, Timeline, VisibilitySteps};

use crate::embed::{BertEmbedder, EmbedQueue, Embedder, ModelDir};
use crate::events::Job;
use crate::handles::Handles;
use crate::index::{IndexParams, VectorIndex};
use crate::ingest::Policies;
use crate::memory::Memory;
use crate::store::{ChangeBus, ChangeEvent, HistoryEntry, Link, Store};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

/// Messages per ingestion transaction during imports, once an import is under way.
pub const IMPORT_BATCH: usize = 128;

/// The first transactions of an import are smaller (16, 32, then 64 messages), so the
/// first memories are stored, and shown by a watching app, within a second or two of
/// embedding instead of after a whole batch of 128 (issue 21: a first minute that shows
/// something). Later batches are [`IMPORT_BATCH`] long.
pub const IMPORT_RAMP: [usize; 3] = [16, 32, 64];

/// The sizes of an import's transactions, in order: [`IMPORT_RAMP`], then
/// [`IMPORT_BATCH`] for ever. A run of an import commits whole batches only, so after a
/// crash the store holds a prefix of the messages this sequence cuts (tests check it).
pub fn import_batch_sizes() -> impl Iterator<Item = usize> {
    IMPORT_RAMP
        .into_iter()
        .chain(std::iter::repeat(IMPORT_BATCH))
}

#[derive(Debug, Clone)]
pub struct Config {
    pub db_path: PathBuf,
    pub model_dir: PathBuf,
    pub index: IndexParams,
    /// Embedding queue: flush at this many texts…
    pub queue_batch: usize,
    /// …or this long after the first waiting text.
    pub queue_flush: Duration,
}

impl Config {
    pub fn new(db_path: impl Into<PathBuf>, model_dir: impl Into<PathBuf>) -> Self {
        Self {
            db_path: db_path.into(),
            model_dir: model_dir.into(),
            index: IndexParams::default(),
            queue_batch: 32,
            queue_flush: Duration::from_millis(10),
        }
    }
}

/// What opening found: whether the index had to be rebuilt and why.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OpenReport {
    pub index_rebuilt: Option<String>,
}

/// A memory with everything around it, for a detail view.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MemoryDetail {
    pub memory: Memory,
    pub links: Vec<Link>,
    pub history: Vec<HistoryEntry>,
    /// Memories this one derives from, transitively (the provenance chain), nearest first.
    pub provenance: Vec<Memory>,
    /// Set when this is the memory as it was at this instant (Unix ms), not as it is.
    #[serde(default)]
    pub as_of: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Page {
    pub total: u64,
    pub offset: usize,
    pub memories: Vec<Memory>,
    /// Set when this is the listing as it was at this instant (Unix ms).
    #[serde(default)]
    pub as_of: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Stats {
    pub db_path: String,
    pub memories: u64,
    pub by_kind: Vec<(String, u64)>,
    pub by_state: Vec<(String, u64)>,
    pub deleted: u64,
    pub conversations: Vec<(String, i64)>,
    pub links: u64,
    /// Memories in the vector index (not deleted, embedded).
    pub indexed: usize,
    pub index_tombstones: usize,
    /// Vectors this process holds: all of `indexed` with the engine's own graph; with
    /// pgvector's, none until something needs every vector (clustering, projection, sleep).
    pub vectors_held: usize,
    /// What answers the larger k-NN searches: the engine's own HNSW graph (`hnsw`, SQLite
    /// stores) or the store's pgvector index that every process shares (`pgvector`).
    pub vector_index: crate::index::SearchPath,
    pub embedding_model: String,
    pub dim: usize,
}

pub struct Somna {
    store: Mutex<Store>,
    index: RwLock<VectorIndex>,
    embedder: Arc<dyn Embedder>,
    /// Vectors of texts searches embedded lately (queries asked again cost no embedding).
    recent: crate::embed::Recent,
    queue: EmbedQueue,
    actors: RwLock<Vec<String>>,
    /// Whether any causal or derived link exists (enables the causal route); refreshed
    /// after writes so searches never scan the links table.
    has_causal_links: std::sync::atomic::AtomicBool,
    open_report: OpenReport,
    /// The liquid clustering loop's cached neighbour lists and state (cluster/liquid.rs).
    liquid: Mutex<Option<crate::cluster::liquid::LiquidCache>>,
    /// Buffered cost and latency entries (ledger.rs).
    ledger: crate::ledger::Ledger,
    /// Ingest policies applied by `add` and `import` (see [`Policies`]);
    /// [`Policies::none`] until set.
    policies: RwLock<Arc<Policies>>,
    /// How far this process has read other processes' writes (sync.rs).
    sync: Mutex<crate::store::ExternalCursor>,
    /// The store's change stream (also reachable without the store lock).
    changes: Arc<ChangeBus>,
    /// A second connection to the store for reads on a second thread (the what-if
    /// simulator's searches), opened when first asked for ([`Store::reader`]).
    spare: Mutex<Option<Store>>,
    /// A thread kept for work beside the caller's (the what-if simulator's second half),
    /// started when first asked for ([`Somna::beside`]).
    beside: std::sync::OnceLock<rayon::ThreadPool>,
}

impl Somna {
    /// Opens the store at `config.db_path` with the installed model.
    pub fn open(config: &Config, job: &Job) -> Result<Self> {
        let embedder = Arc::new(BertEmbedder::load(&ModelDir(config.model_dir.clone()))?);
        Self::open_with(config, embedder, job)
    }

    /// Opens with a given embedder (tests use a small deterministic one).
    pub fn open_with(config: &Config, embedder: Arc<dyn Embedder>, job: &Job) -> Result<Self> {
        let mut store = if config.db_path == Path::new(":memory:") {
            Store::open_in_memory()?
        } else {
            Store::open(&config.db_path)?
        };
        match store.get_meta("embedding_model")? {
            Some(m) if m != embedder.model_id() => {
                return Err(Error::InvalidInput(format!(
                    "this store's embeddings were made by {m}, not {}",
                    embedder.model_id()
                )))
            }
            Some(_) => {}
            None => store.set_meta("embedding_model", embedder.model_id())?,
        }
        backfill_tokens(&mut store, embedder.as_ref(), job)?;
        let (index, rebuilt) = VectorIndex::open(&store, embedder.dim(), config.index, job)?;
        let actors = store.read().actors()?;
        let has_causal_links = store.read().has_causal_links()?;
        let sync = store.external_cursor()?;
        let changes = store.changes().clone();
        Ok(Self {
            changes,
            has_causal_links: has_causal_links.into(),
            queue: EmbedQueue::new(embedder.clone(), config.queue_batch, config.queue_flush),
            recent: Default::default(),
            store: Mutex::new(store),
            index: RwLock::new(index),
            embedder,
            actors: RwLock::new(actors),
            open_report: OpenReport {
                index_rebuilt: rebuilt,
            },
            liquid: Mutex::new(None),
            ledger: Default::default(),
            policies: RwLock::new(Arc::new(Policies::none())),
            sync: Mutex::new(sync),
            spare: Mutex::new(None),
            beside: Default::default(),
        })
    }

    /// A receiver of every change committed to the store from now on: this engine's own
    /// writes (`Local`) and, once caught up with ([`Somna::sync_external_changes`],
    /// [`Somna::watch_external`]), other processes' (`External`). Drop it to unsubscribe.
    pub fn subscribe(&self) -> std::sync::mpsc::Receiver<ChangeEvent> {
        self.changes.subscribe()
    }

    pub fn open_report(&self) -> &OpenReport {
        &self.open_report
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The second connection ([`Somna::spare`]), taken for one piece of work and put back
    /// with [`Somna::put_spare`] (a new one while another thread has it); `None` when the
    /// store has no other connection (in memory).
    pub(crate) fn take_spare(&self) -> Result<Option<Store>> {
        let mut spare = self.spare.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = spare.take() {
            return Ok(Some(store));
        }
        drop(spare);
        self.store().reader()
    }

    /// One thread, kept, for work beside the calling thread's: a thread started for the
    /// work and ended after it costs more than the work saves (see `engine/whatif.rs`).
    /// It is started by the first caller and has its priority.
    pub(crate) fn beside(&self) -> Result<&rayon::ThreadPool> {
        if let Some(pool) = self.beside.get() {
            return Ok(pool);
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "somna-beside".into())
            .build()
            .map_err(|e| Error::Internal(format!("could not start a thread: {e}")))?;
        Ok(self.beside.get_or_init(|| pool))
    }

    pub(crate) fn put_spare(&self, store: Store) {
        *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = Some(store);
    }

    /// The store if no one holds it (for work that may be skipped, like a ledger flush).
    pub(crate) fn try_store(&self) -> Option<MutexGuard<'_, Store>> {
        match self.store.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// The store, index and embedder as subsystems take them.
    pub(crate) fn handles(&self) -> Handles<'_> {
        Handles {
            store: &self.store,
            index: &self.index,
            embedder: self.embedder.as_ref(),
        }
    }

    /// Starts, in the background, what makes a large store's searches fast once it is
    /// ready: its full-text index read into memory (`store/lexicon.rs`). Long-running front
    /// ends (the app, the servers) call it when they open a store; otherwise the first
    /// search starts it, and searches rank with FTS5 until it is read.
    pub fn warm_search(&self) -> Result<()> {
        self.store().warm_lexical()
    }

    /// Waits up to `timeout` until searches rank lexical matches in memory (benches of the
    /// steady state; it holds the store meanwhile): whether they do. `false` at once for a
    /// store that does not (small, in memory, Postgres).
    pub fn wait_search_warm(&self, timeout: std::time::Duration) -> Result<bool> {
        self.store().wait_lexical(timeout)
    }

    /// Forgets the vectors of recently embedded texts, so the next searches embed their
    /// queries again (a benchmark of search latency measures new queries).
    pub fn forget_recent_vectors(&self) {
        self.recent.clear();
    }

    /// The embedder searches use: the engine's, with the recent vectors in front.
    pub(crate) fn query_embedder(&self) -> crate::embed::RecentEmbedder<'_> {
        crate::embed::RecentEmbedder {
            inner: self.embedder.as_ref(),
            recent: &self.recent,
        }
    }

    pub(crate) fn index_read(&self) -> RwLockReadGuard<'_, VectorIndex> {
        self.index.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The index, its rows holding every vector: for what reads vectors, not only
    /// searches (see [`crate::index::read_with_vectors`]).
    pub(crate) fn vectors_read(&self) -> Result<RwLockReadGuard<'_, VectorIndex>> {
        crate::index::read_with_vectors(&self.index)
    }

    pub(crate) fn index_write(&self) -> RwLockWriteGuard<'_, VectorIndex> {
        self.index.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Refreshes what searches cache about the store (speaker names, causal links).
    pub(crate) fn refresh_actors(&self, store: &Store) -> Result<()> {
        *self.actors.write().unwrap_or_else(|p| p.into_inner()) = store.read().actors()?;
        self.has_causal_links.store(
            store.read().has_causal_links()?,
            std::sync::atomic::Ordering::Relaxed,
        );
        Ok(())
    }

    /// The ingest policies in force.
    pub fn policies(&self) -> Arc<Policies> {
        self.policies
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the ingest policies (e.g. with [`Policies::load`]).
    pub fn set_policies(&self, policies: Policies) {
        *self.policies.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(policies);
    }

    /// Writes the vector index if it changed (also done on drop).
    pub fn save_index(&self) -> Result<()> {
        self.index_write().save()
    }

    /// Runs `f` with read access to the store (for subsystems such as evaluation).
    pub fn with_store<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        f(&self.store())
    }
}

impl Drop for Somna {
    fn drop(&mut self) {
        let _ = self.index_write().save();
        let _ = self.flush_ledger();
    }
}

/// Counts the tokens of memories written before counts were stored (migration 0003), in
/// batches of one transaction each.
fn backfill_tokens(store: &mut Store, embedder: &dyn Embedder, job: &Job) -> Result<()> {
    let missing = store.read().ids_without_tokens()?;
    for (i, chunk) in missing.chunks(1000).enumerate() {
        job.cancel.check()?;
        let texts = store.read().get_memories(chunk)?;
        store.transaction(|tx| {
            for m in &texts {
                tx.set_tokens(m.id, embedder.count_tokens(&m.text))?;
            }
            Ok(())
        })?;
        job.report(
            "tokens",
            (i * 1000 + chunk.len()) as u64,
            missing.len() as u64,
        );
    }
    Ok(())
}
