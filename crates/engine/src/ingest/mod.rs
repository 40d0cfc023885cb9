//! Ingestion: messages → stored messages, episodic bubbles with 5W1H, facts, importance
//! and novelty, similarity connections, provenance scores, history. A batch is planned
//! (`plan`), embedded, then written in one transaction (`commit`); embedding happens
//! before the transaction so the write lock is short.

mod causal;
mod commit;
mod export;
mod extract;
mod foreign;
mod import;
mod plan;
mod policy;
mod reconcile;
pub mod summary;

pub use crate::text::find_location;
pub use causal::{find_cue, CausalCue};
pub use export::{
    write_export, ExportDoc, ExportedMemory, ExportedMessage, EXPORT_FORMAT, EXPORT_VERSION,
};
pub use extract::{extract_facts, human_time, importance, w5h1_for_turn};
pub use foreign::{parse_chatgpt_text, parse_claude_text, parse_letta_text, parse_mem0_text};
pub use import::{
    content_id, parse_chat_jsonl, parse_chat_jsonl_text, parse_locomo, parse_locomo_text,
    parse_locomo_time, read_text, strip_bom, ConversationBatch, ImportFormat, ImportOutcome,
    Records,
};
pub(crate) use import::{parse_chat_jsonl_lines, ChatLines};
pub use policy::{Decision, Policies, Rule, Style, Update, POLICIES_FILE};
pub use reconcile::{contradiction_openings, contradicts, reconcile, FactAction};

use crate::index::VectorIndex;
use crate::memory::Source;
use crate::store::{Message, Store};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Largest text accepted for one message (bytes). Embedding reads the first 256 tokens;
/// the store keeps the whole text.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Connections (seed 004): cosine ≥ 0.6, at most 5, both directions.
pub const CONNECT_THRESHOLD: f32 = 0.6;
pub const MAX_CONNECTIONS: usize = 5;
/// A new fact this similar to an existing fact of the same speaker is a duplicate (NOOP).
pub const FACT_DUPLICATE: f32 = 0.92;
/// Importance given to extracted facts (seed 004).
pub const FACT_IMPORTANCE: f64 = 0.7;
/// An earlier bubble this similar to a turn's cause clause is taken as that cause.
pub const CAUSE_MATCH: f32 = 0.55;
/// Score of a causal link to the preceding turn when the cause is only referred to
/// ("As a result, …", "So I quit").
pub const CAUSE_BY_REFERENCE: f64 = 0.5;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddOptions {
    pub source: Source,
    /// Memories this input derives from (they lower its provenance score).
    #[serde(default)]
    pub parents: Vec<i64>,
    /// Recorded in history as who made the change.
    pub actor: String,
    /// Extract facts from first-person statements.
    #[serde(default = "yes")]
    pub extract_facts: bool,
}

fn yes() -> bool {
    true
}

impl Default for AddOptions {
    fn default() -> Self {
        Self {
            source: Source::UserInput,
            parents: Vec::new(),
            actor: "user".into(),
            extract_facts: true,
        }
    }
}

/// What one `add` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AddReport {
    pub messages_stored: usize,
    /// Messages whose external id was already stored (a resumed import).
    pub messages_skipped: usize,
    pub episodes: Vec<i64>,
    pub facts_added: Vec<i64>,
    /// Facts that duplicated an existing one (NOOP).
    pub facts_unchanged: usize,
    /// Stored facts a new fact replaced (a new value, or a contradiction): each is kept,
    /// closed (`valid_to`, `superseded_by` the new fact, in `facts_added`).
    #[serde(default)]
    pub facts_updated: Vec<i64>,
    /// Stored facts deleted by an add (none since facts are superseded instead; kept for
    /// readers of older reports).
    #[serde(default)]
    pub facts_deleted: Vec<i64>,
    pub links_created: usize,
    /// Causal links from a turn's bubble to the earlier memory holding its cause.
    #[serde(default)]
    pub causal_links: usize,
    /// Messages an ingest policy said to skip (stored raw, no memory made).
    #[serde(default)]
    pub messages_ignored: usize,
    /// Raw messages dropped from the log by the FIFO history cap (their bubbles stay).
    #[serde(default)]
    pub messages_pruned: usize,
    /// Turns of an imported file with no words and no image: nothing to remember, so not
    /// stored.
    #[serde(default)]
    pub messages_blank: usize,
    /// Conversation summaries written (created or rewritten).
    #[serde(default)]
    pub summaries: Vec<i64>,
}

impl AddReport {
    pub fn merge(&mut self, other: AddReport) {
        self.messages_stored += other.messages_stored;
        self.messages_skipped += other.messages_skipped;
        self.episodes.extend(other.episodes);
        self.facts_added.extend(other.facts_added);
        self.facts_unchanged += other.facts_unchanged;
        self.facts_updated.extend(other.facts_updated);
        self.facts_deleted.extend(other.facts_deleted);
        self.links_created += other.links_created;
        self.causal_links += other.causal_links;
        self.messages_ignored += other.messages_ignored;
        self.messages_pruned += other.messages_pruned;
        self.messages_blank += other.messages_blank;
        self.summaries.extend(other.summaries);
    }
}

/// Checks a message before anything is written.
pub fn validate_message(m: &Message) -> Result<()> {
    validate_text(&m.text)
}

/// The rules every memory text meets: not blank, at most [`MAX_TEXT_BYTES`], no NUL.
pub fn validate_text(text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::InvalidInput("a message's text is empty".into()));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(Error::InvalidInput(format!(
            "a message's text is {} bytes; the limit is {MAX_TEXT_BYTES}",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(Error::InvalidInput(
            "a message's text contains a NUL character".into(),
        ));
    }
    Ok(())
}

/// Adds one batch of messages of `conversation` in one transaction, then brings the index
/// up to date, in stages: plan (validation, messages already stored skipped, what the
/// policies make of each message), embed (one batch; `embed` is the engine's queue and
/// runs without the store lock, so concurrent callers share embedding batches), commit
/// (one transaction), index (the new points inserted in the graph, the store still locked)
/// and summaries. `policies` decide each message's event type, text, importance and
/// fact extraction, the history cap and the conversation summaries. `stage` is told when
/// each stage but embedding ends (`STAGE_*`, with the time it started and the messages),
/// for the ledger.
#[allow(clippy::too_many_arguments)]
pub fn add_batch(
    store: &Mutex<Store>,
    index: &std::sync::RwLock<VectorIndex>,
    embed: &dyn Fn(Vec<String>) -> Result<Vec<Vec<f32>>>,
    count_tokens: &dyn Fn(&str) -> usize,
    stage: &dyn Fn(&'static str, std::time::Instant, usize),
    conversation: &str,
    messages: &[Message],
    records: Records,
    opts: &AddOptions,
    policies: &Policies,
) -> Result<AddReport> {
    let started = std::time::Instant::now();
    let plan = plan::plan_batch(store, conversation, messages, records, opts, policies)?;
    stage(STAGE_PLAN, started, messages.len());
    if plan.fresh.is_empty() {
        return Ok(plan.report);
    }
    let embedded = plan::embed_plan(&plan, embed)?;
    let committing = std::time::Instant::now();
    let complex_update = plan.complex_update;
    let ctx = commit::CommitCtx {
        index,
        count_tokens,
        conversation,
        opts,
        policies,
    };
    let mut report = {
        let mut guard = store.lock().unwrap_or_else(|p| p.into_inner());
        let report = commit::commit(&mut guard, &ctx, plan, &embedded)?;
        stage(STAGE_COMMIT, committing, messages.len());
        let indexing = std::time::Instant::now();
        commit::update_index(&guard, index, &report)?;
        stage(STAGE_INDEX, indexing, messages.len());
        report
    };
    let summarising = std::time::Instant::now();
    report.summaries = summary::refresh(
        store,
        index,
        embed,
        count_tokens,
        conversation,
        policies.summary_every,
        complex_update,
    )?;
    stage(STAGE_SUMMARIES, summarising, messages.len());
    Ok(report)
}

/// The ledger's names for the stages of [`add_batch`]; embedding is `embed`.
/// Plan: validation, messages already stored, what the ingest policies make of each.
pub const STAGE_PLAN: &str = "ingest.plan";
/// One transaction: memories, facts and their reconciliation, similar and causal links,
/// history.
pub const STAGE_COMMIT: &str = "ingest.commit";
/// The vector index brought up to date with the commit (its new points inserted).
pub const STAGE_INDEX: &str = "ingest.index";
/// The conversation summaries, their embedding included.
pub const STAGE_SUMMARIES: &str = "ingest.summaries";
