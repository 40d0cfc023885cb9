//! The façade's write paths: `add`, batched imports of parsed conversations, imports of
//! text in a known format, Somna's own export and its re-import. Parsing, policies and the
//! ingestion transaction itself live in `crate::ingest`.

use super::{Somna, IMPORT_BATCH};
use crate::events::Job;
use crate::ingest::{
    self, parse_chat_jsonl_lines, parse_locomo_text, read_text, strip_bom, AddOptions, AddReport,
    ConversationBatch, ExportDoc, ExportedMemory, ImportFormat, ImportOutcome,
};
use crate::ledger::Cost;
use crate::store::Message;
use crate::{Error, Result};
use std::path::Path;

fn import_err(file: &Path, location: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::Import {
        file: file.display().to_string(),
        location: location.into(),
        problem: problem.into(),
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
}
