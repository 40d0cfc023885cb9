//! The façade's write paths: `add`, batched imports of parsed conversations, imports of
//! text in a known format, Somna's own export and its re-import. Parsing, policies and the
//! ingestion transaction itself live in `crate::ingest`.

use super::{import_batch_sizes, Somna, IMPORT_BATCH};
use crate::embed::Embedder;
use crate::events::Job;
use crate::ingest::{
    self, parse_chat_jsonl_lines, parse_locomo_text, read_text, strip_bom, AddOptions, AddReport,
    ConversationBatch, ExportDoc, ExportedMemory, ImportFormat, ImportOutcome,
};
use crate::ledger::Cost;
use crate::store::{ConstraintFailure, Message};
use crate::{Error, Result};
use std::path::Path;

fn import_err(file: &Path, location: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::Import {
        file: file.display().to_string(),
        location: location.into(),
        problem: problem.into(),
    }
}

/// The setting that names the store's embedding model.
const EMBEDDING_MODEL: &str = "embedding_model";

/// An import of at least this many messages or memories refreshes the database's
/// statistics when it is done ([`crate::store::Store::refresh_statistics`]); an export
/// this large restored into a store without vectors builds pgvector's index once at the
/// end ([`crate::store::Tx::defer_vector_index`]).
const BULK_LOAD: usize = 1000;

/// Memories restored from an export per statement (on Postgres; see
/// [`crate::store::Tx::restore_memories`]): about 2 MB of JSON with their vectors.
const RESTORE_BATCH: usize = 500;

/// Turns a constraint failure while restoring `what` into a refusal that says why: its key
/// is already taken (the store is not empty), or it refers to a row the export lacks.
fn taken(what: String) -> impl FnOnce(Error) -> Error {
    move |e| {
        let why = match crate::store::constraint_failure(&e) {
            Some(ConstraintFailure::Taken) => {
                "already exists: import an export into an empty store"
            }
            Some(ConstraintFailure::Dangling) => "refers to a row the export does not hold",
            Some(ConstraintFailure::Other) => "breaks a constraint of the store",
            None => return e,
        };
        Error::InvalidInput(format!("{what} {why} ({e})"))
    }
}

impl Somna {
    /// Imports `text` in `format`; `name` (a file name or path) names it in errors and, for
    /// chat JSONL, is the default conversation. A malformed input, or one that holds no
    /// message, imports nothing and is a typed error naming the file (and the line or
    /// record where there is one). A leading byte-order mark is ignored.
    pub fn import_text(
        &self,
        name: &str,
        format: ImportFormat,
        text: &str,
        job: &Job,
    ) -> Result<ImportOutcome> {
        let file = Path::new(name);
        let batches = match format {
            ImportFormat::Json => {
                let doc: ExportDoc = serde_json::from_str(strip_bom(text)).map_err(|e| {
                    import_err(
                        file,
                        format!("line {}, column {}", e.line(), e.column()),
                        e.to_string(),
                    )
                })?;
                let memories = self.import_export(&doc, job)?;
                return Ok(ImportOutcome::Export { memories });
            }
            ImportFormat::Locomo => parse_locomo_text(file, text)?,
            ImportFormat::Chatgpt => ingest::parse_chatgpt_text(file, text)?,
            ImportFormat::Claude => ingest::parse_claude_text(file, text)?,
            ImportFormat::Mem0 => ingest::parse_mem0_text(file, text)?,
            ImportFormat::Letta => ingest::parse_letta_text(file, text)?,
            ImportFormat::ChatJsonl => {
                let mut parsed = parse_chat_jsonl_lines(file, text)?;
                self.adopt_line_ids(&mut parsed)?;
                parsed.batches
            }
        };
        let opts = crate::ingest::AddOptions {
            actor: "import".into(),
            ..Default::default()
        };
        Ok(ImportOutcome::Conversations(
            self.import(&batches, &opts, job)?,
        ))
    }

    /// Stores written before chat JSONL messages had content ids hold them under
    /// `line:<n>`, their line in the file. So that re-importing such a file (or resuming its
    /// import) into such a store does not store its messages a second time, a message
    /// whose content id is not stored takes the old id `line:<n>` of its own line when the
    /// message stored there is the same message (role, speaker, time, session and text),
    /// and is then skipped as already present. A line whose content differs from what is
    /// stored under its number (an edited file, or another file with the same name) is a
    /// new message and is stored. This costs one indexed lookup per message, and only for
    /// conversations that hold line ids at all; new stores never do.
    fn adopt_line_ids(&self, parsed: &mut ingest::ChatLines) -> Result<()> {
        const LINE: &str = "line:";
        for (b, lines) in parsed.batches.iter_mut().zip(&parsed.lines) {
            let store = self.store();
            let read = store.read();
            if !read.has_external_id_prefix(&b.conversation, LINE)? {
                continue;
            }
            for (m, line) in b.messages.iter_mut().zip(lines) {
                let Some(id) = m.external_id.as_deref() else {
                    continue;
                };
                if read.message_exists(&b.conversation, id)? {
                    continue;
                }
                let old = format!("{LINE}{line}");
                if let Some(stored) = read.message_by_external_id(&b.conversation, &old)? {
                    let same = (
                        &stored.role,
                        &stored.speaker,
                        stored.occurred_at,
                        &stored.session,
                        &stored.text,
                    ) == (&m.role, &m.speaker, m.occurred_at, &m.session, &m.text);
                    if same {
                        m.external_id = Some(old);
                    }
                }
            }
        }
        Ok(())
    }

    /// [`crate::Somna::import_text`] on a file's content.
    pub fn import_file(
        &self,
        file: &Path,
        format: ImportFormat,
        job: &Job,
    ) -> Result<ImportOutcome> {
        let text = read_text(file)?;
        self.import_text(&file.display().to_string(), format, &text, job)
    }
}

impl Somna {
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
        let stage = |op, t, n| self.record(op, t, Cost::items(n));
        let report = ingest::add_batch(
            &self.store,
            &self.index,
            &embed,
            &count,
            &stage,
            conversation,
            messages,
            ingest::Records::Turns,
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
        // The parsers refuse such messages with the file and line; batches built by code
        // have no file, so the error names the conversation and the message's place.
        for b in batches {
            for (i, m) in b.messages.iter().enumerate() {
                ingest::validate_message(m).map_err(|e| {
                    let problem = match e {
                        Error::InvalidInput(p) => p,
                        other => other.to_string(),
                    };
                    let id = m
                        .external_id
                        .as_deref()
                        .map(|x| format!(" (external id {x})"))
                        .unwrap_or_default();
                    Error::InvalidInput(format!(
                        "conversation {:?}, message {} of {}{id}: {problem}",
                        b.conversation,
                        i + 1,
                        b.messages.len()
                    ))
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
        let stage = |op, t, n| self.record(op, t, Cost::items(n));
        let mut report = AddReport::default();
        let policies = self.policies();
        let mut done = 0;
        job.report("import", 0, total as u64);
        // One size sequence for the whole import: its first transactions are small, so
        // the first memories appear quickly, whichever conversation comes first.
        let mut sizes = import_batch_sizes();
        for b in batches {
            report.messages_blank += b.blank;
            let mut rest = &b.messages[..];
            while !rest.is_empty() {
                let size = sizes.next().unwrap_or(IMPORT_BATCH);
                let (chunk, after) = rest.split_at(size.min(rest.len()));
                rest = after;
                job.cancel.check()?;
                let mut attempts = 0;
                let added = loop {
                    let added = ingest::add_batch(
                        &self.store,
                        &self.index,
                        &embed,
                        &count,
                        &stage,
                        &b.conversation,
                        chunk,
                        b.records,
                        opts,
                        &policies,
                    );
                    // The Postgres server restarted (or dropped the connection) under the
                    // batch: it was rolled back, or committed without the answer reaching
                    // here. Run again on a new connection, every message with an external
                    // id is stored once either way (the stored ones are skipped).
                    let resumable = chunk.iter().all(|m| m.external_id.is_some());
                    match added {
                        Err(e) if e.is_connection_lost() && resumable && attempts < 3 => {
                            attempts += 1;
                            job.report(
                                "import: the store's connection was lost, resuming",
                                done as u64,
                                total as u64,
                            );
                        }
                        other => break other?,
                    }
                };
                report.merge(added);
                done += chunk.len();
                job.report("import", done as u64, total as u64);
            }
        }
        let store = self.store();
        self.refresh_actors(&store)?;
        if total >= BULK_LOAD {
            store.refresh_statistics()?;
        }
        drop(store);
        // A large index is saved once enough was written since its last save, not after
        // every import (see `VectorIndex::save_when_due`).
        let saving = std::time::Instant::now();
        let saved = {
            let mut index = self.index_write();
            index.save_when_due()?.then(|| index.len())
        };
        if let Some(points) = saved {
            self.record("index.save", saving, Cost::items(points));
        }
        self.record("import", started, Cost::items(total));
        Ok(report)
    }

    /// The whole store as a Somna export (see [`crate::ingest::ExportDoc`]), read in one
    /// snapshot. Ledger entries still buffered are written first, so they are in it.
    pub fn export(&self) -> Result<ExportDoc> {
        self.flush_ledger()?;
        let store = self.store();
        store.snapshot(|read| {
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
                memories,
                links: read.all_links()?,
                messages: read.all_messages()?,
                history: read.all_history()?,
                co_access: read.all_co_access()?,
                operations: read.all_operations()?,
                clusters: read.export_clusters()?,
                layouts: read.all_layouts()?,
                layout_history: read.all_layout_snapshots()?,
                golden_queries: read.golden_queries()?,
                golden_runs: read.all_golden_runs()?,
                golden_results: read.all_golden_results()?,
                ledger: read.all_ledger()?,
                fact_contradictions: read.all_contradictions()?,
                fact_restated: read.all_restatements()?,
                settings: read.all_meta()?,
                last_memory_id: read.last_memory_id()?,
                ..ExportDoc::empty(crate::store::now_ms())
            })
        })
    }

    /// Loads a Somna export (any version up to [`ingest::EXPORT_VERSION`]) as it was, ids
    /// preserved, in one transaction: all of it or, on any error, nothing. Refuses when any
    /// id is already taken (a memory, a message, a history entry, an operation, a cluster,
    /// a layout, a golden query or run), so nothing is overwritten; refuses embeddings of
    /// another dimension, and an export made with another embedding model. The export's
    /// settings replace the store's; its ledger rows follow any the store already has.
    pub fn import_export(&self, doc: &ExportDoc, job: &Job) -> Result<usize> {
        self.check_export(doc)?;
        let dim = self.embedder.dim();
        let (golden_texts, golden_vectors) = self.export_golden_vectors(doc)?;
        let mut store = self.store();
        store.transaction(|tx| {
            let deferred = doc.memories.len() >= BULK_LOAD && tx.defer_vector_index()?;
            for (i, batch) in doc.memories.chunks(RESTORE_BATCH).enumerate() {
                job.report(
                    "import",
                    (i * RESTORE_BATCH) as u64,
                    doc.memories.len() as u64,
                );
                let ids: Vec<i64> = batch.iter().map(|m| m.memory.id).collect();
                if let Some(m) = tx.get_memories(&ids)?.first() {
                    return Err(Error::InvalidInput(format!(
                        "memory {} already exists: import an export into an empty store",
                        m.id
                    )));
                }
                for m in batch {
                    if let Some(v) = &m.embedding {
                        if v.len() != dim {
                            return Err(Error::InvalidInput(format!(
                                "memory {} has a {}-dimensional embedding; this store uses {dim}",
                                m.memory.id,
                                v.len()
                            )));
                        }
                    }
                }
                let rows: Vec<_> = batch
                    .iter()
                    .map(|m| (&m.memory, m.embedding.as_deref()))
                    .collect();
                tx.restore_memories(&rows).map_err(taken(format!(
                    "one of memories {} to {}",
                    ids[0],
                    ids[ids.len() - 1]
                )))?;
            }
            if deferred {
                job.report("index", 0, 1);
                tx.restore_vector_index()?;
            }
            tx.upsert_links(&doc.links)?;
            for m in &doc.messages {
                tx.restore_message(m)
                    .map_err(taken(format!("message {}", m.id)))?;
            }
            for h in &doc.history {
                tx.restore_history(h)
                    .map_err(taken(format!("history entry {}", h.id)))?;
            }
            for c in &doc.co_access {
                tx.restore_co_access(c)?;
            }
            for op in &doc.operations {
                tx.restore_operation(op)
                    .map_err(taken(format!("operation {} ({})", op.id, op.op)))?;
            }
            tx.restore_clusters(&doc.clusters)
                .map_err(taken("a cluster, membership, merge or energy".to_string()))?;
            for l in &doc.layouts {
                tx.restore_layout(l)
                    .map_err(taken(format!("the {} layout in {}D", l.method, l.dims)))?;
            }
            if doc.layout_history.is_empty() {
                // An export made before layouts were kept over time.
                for l in &doc.layouts {
                    tx.keep_layout_snapshot(&crate::store::LayoutSnapshot {
                        method: l.method.clone(),
                        dims: l.dims,
                        computed_at: l.computed_at,
                        ids: l.ids.clone(),
                        coords: l.coords.clone(),
                    })?;
                }
            }
            for l in &doc.layout_history {
                tx.restore_layout_snapshot(l).map_err(taken(format!(
                    "the {} layout in {}D computed at {}",
                    l.method, l.dims, l.computed_at
                )))?;
            }
            restore_records(
                tx,
                doc,
                &golden_texts,
                &golden_vectors,
                self.embedder.model_id(),
            )
        })?;
        if doc.memories.len() >= BULK_LOAD {
            store.refresh_statistics()?;
        }
        let mut index = self.index_write();
        index.catch_up(&store, job)?;
        index.save()?;
        self.refresh_actors(&store)?;
        Ok(doc.memories.len())
    }
}

impl Somna {
    /// The texts the searches of `doc`'s golden queries will embed once the export's
    /// speakers are the store's too, and their vectors: saved with the queries as
    /// `golden_add` saves them (an export does not carry them: they follow from the text
    /// and the model).
    fn export_golden_vectors(&self, doc: &ExportDoc) -> Result<(Vec<String>, Vec<Vec<f32>>)> {
        if doc.golden_queries.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut actors: std::collections::BTreeSet<String> = doc
            .memories
            .iter()
            .filter_map(|m| m.memory.w5h1.who.clone())
            .collect();
        actors.extend(
            self.actors
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned(),
        );
        let actors: Vec<String> = actors.into_iter().collect();
        let golden_texts: Vec<String> = doc
            .golden_queries
            .iter()
            .map(|g| super::golden::golden_text_among(&g.query, &actors))
            .collect();
        let texts: Vec<&str> = golden_texts.iter().map(String::as_str).collect();
        let golden_vectors = self.query_embedder().embed(&texts)?;
        Ok((golden_texts, golden_vectors))
    }

    /// Refuses an export this build does not read, or one whose embeddings come from
    /// another model than this store's.
    fn check_export(&self, doc: &ExportDoc) -> Result<()> {
        if doc.format != ingest::EXPORT_FORMAT
            || !(1..=ingest::EXPORT_VERSION).contains(&doc.version)
        {
            return Err(Error::InvalidInput(format!(
                "not a Somna export this version reads (format {:?} version {}; versions 1 to {} are read)",
                doc.format,
                doc.version,
                ingest::EXPORT_VERSION
            )));
        }
        if let Some(model) = doc.settings.get(EMBEDDING_MODEL) {
            if model.as_str() != self.embedder.model_id() {
                return Err(Error::InvalidInput(format!(
                    "the export's embeddings come from {model:?}; this store uses {:?}",
                    self.embedder.model_id()
                )));
            }
        }
        Ok(())
    }
}

/// What an export holds besides the memories, links, messages, history, operations,
/// clusters and layouts, written in `tx`: the golden queries (with `golden_vectors`, the
/// vectors `model` gave their `golden_texts`, in order), runs and results, the ledger, the facts' contradictions
/// and re-statements, the settings and the highest memory id ever given.
fn restore_records(
    tx: &crate::store::Tx<'_>,
    doc: &ExportDoc,
    golden_texts: &[String],
    golden_vectors: &[Vec<f32>],
    model: &str,
) -> Result<()> {
    for ((q, text), v) in doc
        .golden_queries
        .iter()
        .zip(golden_texts)
        .zip(golden_vectors)
    {
        tx.restore_golden(q)
            .map_err(taken(format!("golden query {}", q.id)))?;
        tx.set_golden_vector(q.id, model, text, v)?;
    }
    for run in &doc.golden_runs {
        let results: Vec<_> = doc
            .golden_results
            .iter()
            .filter(|r| r.run_id == run.id)
            .collect();
        tx.restore_golden_run(run, &results)
            .map_err(taken(format!("golden run {}", run.id)))?;
    }
    if let Some(r) = doc
        .golden_results
        .iter()
        .find(|r| !doc.golden_runs.iter().any(|run| run.id == r.run_id))
    {
        return Err(Error::InvalidInput(format!(
            "a golden result names run {}, which the export does not hold",
            r.run_id
        )));
    }
    tx.restore_ledger(&doc.ledger)?;
    for c in &doc.fact_contradictions {
        tx.restore_contradiction(c).map_err(taken(format!(
            "the contradiction of fact {} by fact {}",
            c.fact_id, c.by_id
        )))?;
    }
    for r in &doc.fact_restated {
        tx.restore_restatement(r)
            .map_err(taken(format!("the re-statements of fact {}", r.memory_id)))?;
    }
    for (key, value) in &doc.settings {
        tx.set_meta(key, value)?;
    }
    if let Some(last) = doc.last_memory_id {
        tx.raise_last_memory_id(last)?;
    }
    Ok(())
}
