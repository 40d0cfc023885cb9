//! The engine façade: owns the store, the index, the embedder and the embedding queue, and
//! hands each operation to the subsystem that implements it. Methods stay thin.

use crate::embed::{BertEmbedder, EmbedQueue, Embedder, ModelDir};
use crate::events::Job;
use crate::index::{IndexParams, VectorIndex};
use crate::ingest::{self, AddOptions, AddReport, ConversationBatch, ExportDoc, ExportedMemory};
use crate::ledger::Cost;
use crate::memory::{embedding_text, Kind, LinkKind, Memory, State};
use crate::retrieve::{self, SearchCtx, SearchQuery, SearchResponse};
use crate::store::{
    ChangeBus, ChangeEvent, HistoryEntry, Link, ListQuery, MemoryFilter, MemoryUpdate, Message,
    Store,
};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

/// Messages per ingestion transaction during imports.
pub const IMPORT_BATCH: usize = 128;

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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Page {
    pub total: u64,
    pub offset: usize,
    pub memories: Vec<Memory>,
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
    pub indexed: usize,
    pub index_tombstones: usize,
    pub embedding_model: String,
    pub dim: usize,
}

pub struct Somna {
    store: Mutex<Store>,
    index: RwLock<VectorIndex>,
    embedder: Arc<dyn Embedder>,
    queue: EmbedQueue,
    pub(crate) actors: RwLock<Vec<String>>,
    /// Whether any causal or derived link exists (enables the causal route); refreshed
    /// after writes so searches never scan the links table.
    has_causal_links: std::sync::atomic::AtomicBool,
    open_report: OpenReport,
    /// The liquid clustering loop's cached neighbour lists and state (cluster/liquid.rs).
    pub(crate) liquid: Mutex<Option<crate::cluster::liquid::LiquidCache>>,
    /// Buffered cost and latency entries (ledger.rs).
    pub(crate) ledger: crate::ledger::Ledger,
    /// Ingest policies applied by `add` and `import` (see [`ingest::Policies`]);
    /// [`ingest::Policies::none`] until set.
    policies: RwLock<Arc<ingest::Policies>>,
    /// How far this process has read other processes' writes (sync.rs).
    pub(crate) sync: Mutex<crate::store::ExternalCursor>,
    /// The store's change stream (also reachable without the store lock).
    pub(crate) changes: Arc<ChangeBus>,
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
            store: Mutex::new(store),
            index: RwLock::new(index),
            embedder,
            actors: RwLock::new(actors),
            open_report: OpenReport {
                index_rebuilt: rebuilt,
            },
            liquid: Mutex::new(None),
            ledger: Default::default(),
            policies: RwLock::new(Arc::new(ingest::Policies::none())),
            sync: Mutex::new(sync),
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

    /// The store if no one holds it (for work that may be skipped, like a ledger flush).
    pub(crate) fn try_store(&self) -> Option<MutexGuard<'_, Store>> {
        match self.store.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    pub(crate) fn index_read(&self) -> RwLockReadGuard<'_, VectorIndex> {
        self.index.read().unwrap_or_else(|p| p.into_inner())
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
    pub fn policies(&self) -> Arc<ingest::Policies> {
        self.policies
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the ingest policies (e.g. with [`ingest::Policies::load`]).
    pub fn set_policies(&self, policies: ingest::Policies) {
        *self.policies.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(policies);
    }

    /// `add(messages, conversation)`: stores the messages and what they yield. Embeddings go
    /// through the shared queue, so concurrent callers are batched together.
    pub fn add(
        &self,
        conversation: &str,
        messages: &[Message],
        opts: &AddOptions,
    ) -> Result<AddReport> {
        let started = std::time::Instant::now();
        let embed = |texts: Vec<String>| {
            let (t, n) = (std::time::Instant::now(), texts.len());
            let out = self.queue.embed(texts);
            self.record("embed", t, Cost::items(n));
            out
        };
        let count = |text: &str| self.embedder.count_tokens(text);
        let report = ingest::add_batch(
            &self.store,
            &self.index,
            &embed,
            &count,
            conversation,
            messages,
            opts,
            &self.policies(),
        )?;
        self.refresh_actors(&self.store())?;
        self.record("add", started, Cost::items(messages.len()));
        Ok(report)
    }

    /// Imports parsed conversations: one transaction per batch of messages, progress per
    /// batch, cancellable between batches; already-imported messages are skipped, so an
    /// interrupted import resumes where it stopped.
    pub fn import(
        &self,
        batches: &[ConversationBatch],
        opts: &AddOptions,
        job: &Job,
    ) -> Result<AddReport> {
        let total: usize = batches.iter().map(|b| b.messages.len()).sum();
        for b in batches {
            for m in &b.messages {
                ingest::validate_message(m).map_err(|e| Error::Import {
                    file: b.conversation.clone(),
                    location: m.external_id.clone().unwrap_or_default(),
                    problem: e.to_string(),
                })?;
            }
        }
        let started = std::time::Instant::now();
        let embed = |texts: Vec<String>| {
            let t = std::time::Instant::now();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let out = self.embedder.embed(&refs);
            self.record("embed", t, Cost::items(refs.len()));
            out
        };
        let count = |text: &str| self.embedder.count_tokens(text);
        let mut report = AddReport::default();
        let policies = self.policies();
        let mut done = 0;
        job.report("import", 0, total as u64);
        for b in batches {
            for chunk in b.messages.chunks(IMPORT_BATCH) {
                job.cancel.check()?;
                report.merge(ingest::add_batch(
                    &self.store,
                    &self.index,
                    &embed,
                    &count,
                    &b.conversation,
                    chunk,
                    opts,
                    &policies,
                )?);
                done += chunk.len();
                job.report("import", done as u64, total as u64);
            }
        }
        let store = self.store();
        self.refresh_actors(&store)?;
        self.index_write().save()?;
        drop(store);
        self.record("import", started, Cost::items(total));
        Ok(report)
    }

    /// Searches, then counts the access of every returned memory and the co-access of
    /// every returned pair.
    pub fn search(&self, q: &SearchQuery) -> Result<SearchResponse> {
        let response = self.search_readonly(q)?;
        let ids: Vec<i64> = response.hits.iter().map(|h| h.memory.id).collect();
        let mut store = self.store();
        let now = crate::store::now_ms();
        store.transaction(|tx| {
            tx.touch(&ids, now)?;
            tx.record_co_access(&ids, now)
        })?;
        Ok(response)
    }

    /// A search that records nothing (for evaluations that must not perturb the store).
    pub fn search_readonly(&self, q: &SearchQuery) -> Result<SearchResponse> {
        let started = std::time::Instant::now();
        let response = self.search_unrecorded(q)?;
        self.record("search", started, Cost::items(response.hits.len()));
        Ok(response)
    }

    fn search_unrecorded(&self, q: &SearchQuery) -> Result<SearchResponse> {
        let store = self.store();
        let index = self.index_read();
        let actors = self.actors.read().unwrap_or_else(|p| p.into_inner());
        let has_causal_links = self
            .has_causal_links
            .load(std::sync::atomic::Ordering::Relaxed);
        let ctx = SearchCtx {
            store: &store,
            index: &index,
            embedder: self.embedder.as_ref(),
            known_actors: &actors,
            has_causal_links,
        };
        retrieve::search(&ctx, q)
    }

    pub fn get(&self, id: i64) -> Result<MemoryDetail> {
        let store = self.store();
        let read = store.read();
        let memory = read.require_memory(id)?;
        let mut provenance = Vec::new();
        let mut seen = std::collections::HashSet::from([id]);
        let mut frontier = vec![id];
        while let Some(cur) = frontier.pop() {
            for (parent, _) in read.neighbours(cur, &[LinkKind::DerivedFrom])? {
                if seen.insert(parent) {
                    if let Some(m) = read.get_memory(parent)? {
                        provenance.push(m);
                        frontier.push(parent);
                    }
                }
            }
        }
        Ok(MemoryDetail {
            links: read.links_of(id)?,
            history: read.history(id)?,
            memory,
            provenance,
        })
    }

    pub fn list(&self, q: &ListQuery) -> Result<Page> {
        let store = self.store();
        let read = store.read();
        Ok(Page {
            total: read.count_memories(&q.filter)?,
            offset: q.offset,
            memories: read.list_memories(q)?,
        })
    }

    /// Changes a memory; re-embeds and re-links it when its text changed; records history.
    pub fn update(&self, id: i64, upd: &MemoryUpdate, actor: &str) -> Result<Memory> {
        if let Some(t) = &upd.text {
            ingest::validate_message(&Message {
                role: "user".into(),
                speaker: None,
                text: t.clone(),
                session: None,
                occurred_at: None,
                external_id: None,
                metadata: serde_json::Value::Null,
            })?;
        }
        if let Some(i) = upd.importance {
            if !(0.0..=1.0).contains(&i) {
                return Err(Error::InvalidInput(
                    "importance must be within 0..=1".into(),
                ));
            }
        }
        let mut store = self.store();
        let old = store.read().require_memory(id)?;
        let new = upd.apply(&old);
        let vector = if upd.changes_embedding() {
            let text = embedding_text(new.kind, &new.text, &new.w5h1);
            Some(self.embedder.embed(&[text.as_str()])?.remove(0))
        } else {
            None
        };
        let now = crate::store::now_ms();
        let index = self.index_read();
        store.transaction(|tx| {
            tx.write_memory_fields(&new, now)?;
            if new.text != old.text {
                tx.set_tokens(id, self.embedder.count_tokens(&new.text))?;
            }
            if let Some(v) = &vector {
                tx.set_embedding(id, v)?;
                tx.clear_similar_links(id)?;
                let scope = match &new.conversation {
                    Some(c) => tx.filter_ids(&MemoryFilter {
                        conversation: Some(c.clone()),
                        ..Default::default()
                    })?,
                    None => tx.filter_ids(&MemoryFilter::default())?,
                };
                let near = index
                    .search(
                        v,
                        ingest::MAX_CONNECTIONS + 1,
                        Some(&|x| x != id),
                        Some(&scope),
                    )
                    .0;
                for (other, sim) in near
                    .into_iter()
                    .filter(|n| n.0 != id && n.1 >= ingest::CONNECT_THRESHOLD)
                    .take(ingest::MAX_CONNECTIONS)
                {
                    tx.upsert_link(id, other, LinkKind::Similar, sim as f64, now)?;
                    tx.upsert_link(other, id, LinkKind::Similar, sim as f64, now)?;
                }
            }
            let (before, after) = changed_fields(&old, &new);
            tx.record_history(id, "update", Some(&before), Some(&after), actor, None, now)
        })?;
        drop(index);
        if vector.is_some() {
            self.index_write().catch_up(&store, &Job::default())?;
        }
        self.refresh_actors(&store)?;
        store.read().require_memory(id)
    }

    /// Soft delete (restorable) or, with `hard`, removal of the memory and its links.
    pub fn delete(&self, id: i64, hard: bool, actor: &str) -> Result<()> {
        let mut store = self.store();
        let old = store.read().require_memory(id)?;
        let now = crate::store::now_ms();
        store.transaction(|tx| {
            let snapshot = serde_json::to_value(&old)?;
            if hard {
                tx.record_history(id, "hard_delete", Some(&snapshot), None, actor, None, now)?;
                tx.hard_delete(id)
            } else {
                if old.deleted_at.is_some() {
                    return Err(Error::InvalidInput(format!(
                        "memory {id} is already deleted"
                    )));
                }
                tx.set_deleted(id, Some(now))?;
                tx.record_history(
                    id,
                    "delete",
                    Some(&serde_json::json!({"text": old.text})),
                    None,
                    actor,
                    None,
                    now,
                )
            }
        })?;
        self.index_write().remove(id);
        Ok(())
    }

    /// Undoes a soft delete, or brings a forgotten memory back to `active`.
    pub fn restore(&self, id: i64, actor: &str) -> Result<Memory> {
        let mut store = self.store();
        let old = store.read().require_memory(id)?;
        if old.deleted_at.is_none() && old.state != State::Forgotten {
            return Err(Error::InvalidInput(format!(
                "memory {id} is neither deleted nor forgotten"
            )));
        }
        let now = crate::store::now_ms();
        let vector = store.read().embedding_of(id)?;
        store.transaction(|tx| {
            if old.deleted_at.is_some() {
                tx.set_deleted(id, None)?;
                // A new change-log position puts the vector back into the index.
                if let Some(v) = &vector {
                    tx.set_embedding(id, v)?;
                }
            }
            if old.state == State::Forgotten {
                let mut m = old.clone();
                m.state = State::Active;
                tx.write_memory_fields(&m, now)?;
            }
            tx.record_history(
                id,
                "restore",
                None,
                Some(&serde_json::json!({"state": "active"})),
                actor,
                None,
                now,
            )
        })?;
        self.index_write().catch_up(&store, &Job::default())?;
        store.read().require_memory(id)
    }

    /// Every change of a memory, oldest first (also after a hard delete).
    pub fn history(&self, id: i64) -> Result<Vec<HistoryEntry>> {
        let store = self.store();
        let read = store.read();
        let history = read.history(id)?;
        if history.is_empty() && read.get_memory(id)?.is_none() {
            return Err(Error::NotFound { id });
        }
        Ok(history)
    }

    pub fn export(&self) -> Result<ExportDoc> {
        let store = self.store();
        let read = store.read();
        let memories = read
            .all_memories()?
            .into_iter()
            .map(|m| {
                let embedding = read.embedding_of(m.id)?;
                Ok(ExportedMemory {
                    memory: m,
                    embedding,
                })
            })
            .collect::<Result<_>>()?;
        Ok(ExportDoc {
            format: ingest::EXPORT_FORMAT.into(),
            version: 1,
            exported_at: crate::store::now_ms(),
            memories,
            links: read.all_links()?,
            messages: read.all_messages()?,
            history: read.all_history()?,
            co_access: read.all_co_access()?,
        })
    }

    /// Loads a Somna export as it was (ids preserved) in one transaction. Refuses when any
    /// id is already taken, so nothing is overwritten; embeddings of another dimension
    /// are refused too.
    pub fn import_export(&self, doc: &ExportDoc, job: &Job) -> Result<usize> {
        if doc.format != ingest::EXPORT_FORMAT || doc.version != 1 {
            return Err(Error::InvalidInput(format!(
                "not a Somna export (format {:?} version {})",
                doc.format, doc.version
            )));
        }
        let dim = self.embedder.dim();
        let mut store = self.store();
        store.transaction(|tx| {
            for (i, m) in doc.memories.iter().enumerate() {
                if tx.get_memory(m.memory.id)?.is_some() {
                    return Err(Error::InvalidInput(format!(
                        "memory {} already exists: import an export into an empty store",
                        m.memory.id
                    )));
                }
                if let Some(v) = &m.embedding {
                    if v.len() != dim {
                        return Err(Error::InvalidInput(format!(
                            "memory {} has a {}-dimensional embedding; this store uses {dim}",
                            m.memory.id,
                            v.len()
                        )));
                    }
                }
                tx.restore_memory(&m.memory, m.embedding.as_deref())?;
                if i % 1000 == 0 {
                    job.report("import", i as u64, doc.memories.len() as u64);
                }
            }
            for l in &doc.links {
                tx.upsert_link(l.src, l.dst, l.kind, l.score, l.created_at)?;
            }
            for m in &doc.messages {
                tx.restore_message(m)?;
            }
            for h in &doc.history {
                tx.restore_history(h)?;
            }
            for c in &doc.co_access {
                tx.restore_co_access(c)?;
            }
            Ok(())
        })?;
        let mut index = self.index_write();
        index.catch_up(&store, job)?;
        index.save()?;
        self.refresh_actors(&store)?;
        Ok(doc.memories.len())
    }

    pub fn stats(&self) -> Result<Stats> {
        let store = self.store();
        let read = store.read();
        let count = |f: MemoryFilter| read.count_memories(&f);
        let mut by_kind = Vec::new();
        for k in Kind::ALL {
            by_kind.push((
                k.to_string(),
                count(MemoryFilter {
                    kinds: vec![*k],
                    ..Default::default()
                })?,
            ));
        }
        let mut by_state = Vec::new();
        for s in State::ALL {
            by_state.push((
                s.to_string(),
                count(MemoryFilter {
                    states: vec![*s],
                    ..Default::default()
                })?,
            ));
        }
        let all = count(MemoryFilter {
            states: State::ALL.to_vec(),
            ..Default::default()
        })?;
        let with_deleted = count(MemoryFilter {
            states: State::ALL.to_vec(),
            include_deleted: true,
            ..Default::default()
        })?;
        let links = read.count_links()?;
        let index = self.index_read();
        Ok(Stats {
            db_path: store.path().display().to_string(),
            memories: all,
            by_kind,
            by_state,
            deleted: with_deleted - all,
            conversations: read.conversations()?,
            links,
            indexed: index.len(),
            index_tombstones: index.tombstones(),
            embedding_model: self.embedder.model_id().to_string(),
            dim: self.embedder.dim(),
        })
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

/// The fields that differ between two versions of a memory, as (before, after) objects.
fn changed_fields(old: &Memory, new: &Memory) -> (serde_json::Value, serde_json::Value) {
    let (a, b) = (
        serde_json::to_value(old).unwrap_or_default(),
        serde_json::to_value(new).unwrap_or_default(),
    );
    let mut before = serde_json::Map::new();
    let mut after = serde_json::Map::new();
    if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
        for (k, va) in a {
            if k == "updated_at" {
                continue;
            }
            let vb = b.get(k).cloned().unwrap_or_default();
            if *va != vb {
                before.insert(k.clone(), va.clone());
                after.insert(k.clone(), vb);
            }
        }
    }
    (before.into(), after.into())
}
