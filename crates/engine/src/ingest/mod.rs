//! Ingestion: messages → stored messages, episodic bubbles with 5W1H, facts, importance
//! and novelty, similarity connections, provenance scores, history. One batch is one
//! transaction; embedding happens before it so the write lock is short.

mod causal;
mod export;
mod extract;
mod import;
mod policy;
mod reconcile;
pub mod summary;

pub use causal::{find_cue, CausalCue};
pub use export::{ExportDoc, ExportedMemory, ExportedMessage, EXPORT_FORMAT};
pub use extract::{extract_facts, find_location, human_time, importance, w5h1_for_turn};
pub use import::{
    parse_chat_jsonl, parse_chat_jsonl_text, parse_locomo, parse_locomo_text, parse_locomo_time,
    read_text, ConversationBatch, ImportFormat, ImportOutcome,
};
pub use policy::{Decision, Policies, Rule, Style, Update, POLICIES_FILE};
pub use reconcile::{reconcile, FactAction};

use crate::embed::dot;
use crate::index::VectorIndex;
use crate::memory::{
    embedding_text, l_score, Kind, LinkKind, NewMemory, Source, L_SCORE_THRESHOLD,
};
use crate::store::{MemoryFilter, Message, Store};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
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
pub struct AddReport {
    pub messages_stored: usize,
    /// Messages whose external id was already stored (a resumed import).
    pub messages_skipped: usize,
    pub episodes: Vec<i64>,
    pub facts_added: Vec<i64>,
    /// Facts that duplicated an existing one (NOOP).
    pub facts_unchanged: usize,
    /// Stored facts rewritten with a new value (UPDATE; the old text is in history).
    #[serde(default)]
    pub facts_updated: Vec<i64>,
    /// Stored facts a new fact contradicted (DELETE: soft, restorable).
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
        self.summaries.extend(other.summaries);
    }
}

/// Checks a message before anything is written.
pub fn validate_message(m: &Message) -> Result<()> {
    if m.text.trim().is_empty() {
        return Err(Error::InvalidInput("a message's text is empty".into()));
    }
    if m.text.len() > MAX_TEXT_BYTES {
        return Err(Error::InvalidInput(format!(
            "a message's text is {} bytes; the limit is {MAX_TEXT_BYTES}",
            m.text.len()
        )));
    }
    if m.text.contains('\0') {
        return Err(Error::InvalidInput(
            "a message's text contains a NUL character".into(),
        ));
    }
    Ok(())
}

/// One planned memory of a batch before it has an id.
struct Planned {
    /// Index of the message it comes from.
    message: usize,
    memory: NewMemory,
    embed_text: String,
    /// Where an episode's cause is, when its text has a causal cue.
    cause: Option<CauseRef>,
}

/// The cause of a turn with a causal cue.
enum CauseRef {
    /// The clause with this index among the batch's cause clauses (embedded with the batch).
    Clause(usize),
    /// The turn just before.
    Previous,
}

/// Adds one batch of messages of `conversation` in one transaction, then brings the index
/// up to date. `embed` turns texts into vectors (the engine passes its queue); it runs
/// without the store lock, so concurrent callers share embedding batches. `policies`
/// decide each message's event type, text, importance and fact extraction, the history
/// cap and the conversation summaries.
#[allow(clippy::too_many_arguments)]
pub fn add_batch(
    store: &Mutex<Store>,
    index: &std::sync::RwLock<VectorIndex>,
    embed: &dyn Fn(Vec<String>) -> Result<Vec<Vec<f32>>>,
    count_tokens: &dyn Fn(&str) -> usize,
    conversation: &str,
    messages: &[Message],
    opts: &AddOptions,
    policies: &Policies,
) -> Result<AddReport> {
    let store_mutex = store;
    if conversation.trim().is_empty() {
        return Err(Error::InvalidInput("the conversation name is empty".into()));
    }
    for m in messages {
        validate_message(m)?;
    }
    let lock = || store.lock().unwrap_or_else(|p| p.into_inner());
    let parent_scores: Vec<f64> = {
        let guard = lock();
        let read = guard.read();
        opts.parents
            .iter()
            .map(|&p| read.require_memory(p).map(|m| m.l_score))
            .collect::<Result<_>>()?
    };
    let base_score = l_score(opts.source, &parent_scores);
    if base_score < L_SCORE_THRESHOLD {
        return Err(Error::ProvenanceBelowThreshold {
            l_score: base_score,
            threshold: L_SCORE_THRESHOLD,
        });
    }

    // Skip messages already stored (resumed imports), plan the rest.
    let mut report = AddReport::default();
    let fresh: Vec<&Message> = {
        let guard = lock();
        let read = guard.read();
        let mut stmt = read.conn().prepare_cached(
            "SELECT 1 FROM messages WHERE conversation = ?1 AND external_id = ?2",
        )?;
        let mut out = Vec::new();
        for m in messages {
            let exists = match &m.external_id {
                Some(ext) => stmt.exists(rusqlite::params![conversation, ext])?,
                None => false,
            };
            if exists {
                report.messages_skipped += 1;
            } else {
                out.push(m);
            }
        }
        out
    };
    if fresh.is_empty() {
        return Ok(report);
    }
    let mut planned = Vec::new();
    let mut clauses: Vec<String> = Vec::new();
    let mut complex_update = false;
    for (i, m) in fresh.iter().enumerate() {
        let speaker = m.speaker.clone().unwrap_or_else(|| m.role.clone());
        let given_event = m
            .metadata
            .get("event")
            .and_then(|e| e.as_str())
            .map(str::to_string);
        let decision = policies.decide(
            conversation,
            &m.role,
            &speaker,
            &m.text,
            given_event.as_deref(),
        );
        if decision.skip {
            report.messages_ignored += 1;
            continue;
        }
        complex_update |= decision.update == Update::Complex;
        let body = policies.truncated(&m.text, &decision.event);
        let facts = if decision.extract_facts.unwrap_or(opts.extract_facts) {
            extract_facts(&speaker, &m.text)
        } else {
            Vec::new()
        };
        let mut bubble = NewMemory::new(
            Kind::Episode,
            policies.format(&speaker, &body, &decision.event),
        );
        bubble.w5h1 = w5h1_for_turn(
            &speaker,
            &body,
            m.occurred_at,
            conversation,
            m.session.as_deref(),
        );
        bubble.conversation = Some(conversation.to_string());
        bubble.session = m.session.clone();
        bubble.occurred_at = m.occurred_at;
        let base = importance(&body, !facts.is_empty()) + decision.importance_boost;
        bubble.importance = base
            .max(decision.importance_min.unwrap_or(0.0))
            .clamp(0.0, 1.0);
        bubble.source = opts.source;
        bubble.parents = opts.parents.clone();
        bubble.metadata = m.metadata.clone();
        if bubble.metadata.is_null() {
            bubble.metadata = serde_json::json!({});
        }
        if given_event.is_none() && decision.event != "statement" {
            if let Some(o) = bubble.metadata.as_object_mut() {
                o.insert("event".into(), decision.event.clone().into());
            }
        }
        let cause = find_cue(&body).map(|c| match c.cause {
            Some(clause) => {
                clauses.push(clause);
                CauseRef::Clause(clauses.len() - 1)
            }
            None => CauseRef::Previous,
        });
        planned.push(Planned {
            message: i,
            embed_text: embedding_text(Kind::Episode, &bubble.text, &bubble.w5h1),
            memory: bubble,
            cause,
        });
        for fact in facts {
            let mut f = NewMemory::new(Kind::Fact, fact.clone());
            f.w5h1.who = Some(speaker.clone());
            f.w5h1.what = Some(fact.clone());
            f.conversation = Some(conversation.to_string());
            f.importance = FACT_IMPORTANCE;
            f.source = opts.source;
            f.metadata = m.metadata.clone();
            if f.metadata.is_null() {
                f.metadata = serde_json::json!({});
            }
            planned.push(Planned {
                message: i,
                embed_text: fact,
                memory: f,
                cause: None,
            });
        }
    }
    let mut vectors = embed(
        planned
            .iter()
            .map(|p| p.embed_text.clone())
            .chain(clauses.iter().cloned())
            .collect(),
    )?;
    let clause_vectors = vectors.split_off(planned.len());

    let mut store = lock();
    // Memories of this conversation already indexed (for novelty, connections, duplicates).
    let (scope, scope_facts): (Vec<i64>, HashSet<i64>) = {
        let read = store.read();
        let filter = MemoryFilter {
            conversation: Some(conversation.to_string()),
            ..Default::default()
        };
        let scope = read.filter_ids(&filter)?;
        let facts = read
            .filter_ids(&MemoryFilter {
                kinds: vec![Kind::Fact],
                ..filter
            })?
            .into_iter()
            .collect();
        (scope, facts)
    };
    let scope_episodes: HashSet<i64> = if clauses.is_empty() {
        HashSet::new()
    } else {
        store
            .read()
            .filter_ids(&MemoryFilter {
                conversation: Some(conversation.to_string()),
                kinds: vec![Kind::Episode],
                ..Default::default()
            })?
            .into_iter()
            .collect()
    };
    let scope_set: HashSet<i64> = scope.iter().copied().collect();

    let now = crate::store::now_ms();
    let index_guard = index
        .read()
        .map_err(|_| Error::InvalidInput("index lock poisoned".into()))?;
    let idx: &VectorIndex = &index_guard;
    let report = store.transaction(|tx| {
        let mut message_ids = Vec::with_capacity(fresh.len());
        for m in &fresh {
            let id = tx.insert_message(conversation, m, now)?.ok_or_else(|| {
                Error::InvalidInput("a message was stored concurrently; retry the add".into())
            })?;
            message_ids.push(id);
        }
        report.messages_stored = fresh.len();
        if let Some(cap) = policies.history_max_chars {
            report.messages_pruned = tx.prune_messages(conversation, cap)?;
        }
        // (id, vector, speaker, kind) of what this batch created so far.
        let mut created: Vec<(i64, &[f32], Option<&str>, Kind)> = Vec::new();
        let mut bubble_of_message: Vec<Option<i64>> = vec![None; fresh.len()];
        for (p, v) in planned.iter().zip(&vectors) {
            let who = p.memory.w5h1.who.as_deref();
            let in_scope = |id: i64| scope_set.contains(&id);
            if p.memory.kind == Kind::Fact {
                let existing = idx
                    .search(v, 1, Some(&|id| scope_facts.contains(&id)), None)
                    .0
                    .first()
                    .map_or(0.0, |h| h.1);
                let in_batch = created
                    .iter()
                    .filter(|c| c.3 == Kind::Fact && c.2 == who)
                    .map(|c| dot(v, c.1))
                    .fold(0.0, f32::max);
                if existing.max(in_batch) >= FACT_DUPLICATE {
                    report.facts_unchanged += 1;
                    continue;
                }
                // Reconcile with the 10 most similar stored facts (seed 004).
                let near = idx
                    .search(v, 10, Some(&|id| scope_facts.contains(&id)), None)
                    .0;
                let sims: std::collections::HashMap<i64, f32> = near.iter().copied().collect();
                let ids: Vec<i64> = near.iter().map(|n| n.0).collect();
                let similar: Vec<(i64, String, f32)> = tx
                    .get_memories(&ids)?
                    .into_iter()
                    .filter(|m| m.deleted_at.is_none())
                    .map(|m| (m.id, m.text, sims[&m.id]))
                    .collect();
                let subject = who.unwrap_or_default();
                match reconcile(&p.memory.text, subject, &similar, FACT_DUPLICATE) {
                    FactAction::Add => {}
                    FactAction::Noop(_) => {
                        report.facts_unchanged += 1;
                        continue;
                    }
                    FactAction::Update(target) => {
                        let old = tx.require_memory(target)?;
                        let mut new = old.clone();
                        new.text = p.memory.text.clone();
                        new.w5h1.what = Some(p.memory.text.clone());
                        // Provenance moves to the turn that said it last.
                        new.metadata = p.memory.metadata.clone();
                        tx.write_memory_fields(&new, now)?;
                        tx.set_embedding(target, v)?;
                        tx.set_tokens(target, count_tokens(&new.text))?;
                        tx.record_history(
                            target,
                            "update",
                            Some(&serde_json::json!({"text": old.text, "metadata": old.metadata})),
                            Some(&serde_json::json!({"text": new.text, "metadata": new.metadata})),
                            &opts.actor,
                            Some("reconcile: same subject and attribute, new value"),
                            now,
                        )?;
                        if let Some(b) = bubble_of_message[p.message] {
                            tx.upsert_link(target, b, LinkKind::DerivedFrom, 1.0, now)?;
                        }
                        report.facts_updated.push(target);
                        continue;
                    }
                    FactAction::Delete(target) => {
                        let old = tx.require_memory(target)?;
                        tx.set_deleted(target, Some(now))?;
                        tx.record_history(
                            target,
                            "delete",
                            Some(&serde_json::json!({"text": old.text})),
                            None,
                            &opts.actor,
                            Some(&format!("reconcile: contradicted by \"{}\"", p.memory.text)),
                            now,
                        )?;
                        report.facts_deleted.push(target);
                    }
                }
            }
            // Neighbours among stored memories of the conversation and this batch.
            let mut near: Vec<(i64, f32)> = idx
                .search(v, MAX_CONNECTIONS + 1, Some(&in_scope), Some(&scope))
                .0;
            near.extend(created.iter().map(|c| (c.0, dot(v, c.1))));
            near.sort_by(|a, b| b.1.total_cmp(&a.1));
            let novelty = 1.0 - near.first().map_or(0.0, |n| n.1.max(0.0) as f64);

            let mut mem = p.memory.clone();
            mem.novelty = novelty.clamp(0.0, 1.0);
            let parent_bubble = bubble_of_message[p.message];
            let score = match (mem.kind, parent_bubble) {
                // A fact derives from its turn's bubble.
                (Kind::Fact, Some(_)) => l_score(opts.source, &[base_score]),
                _ => base_score,
            };
            if score < L_SCORE_THRESHOLD {
                return Err(Error::ProvenanceBelowThreshold {
                    l_score: score,
                    threshold: L_SCORE_THRESHOLD,
                });
            }
            let id = tx.insert_memory(&mem, score, now)?;
            tx.set_embedding(id, v)?;
            tx.set_tokens(id, count_tokens(&mem.text))?;
            tx.record_history(
                id,
                "add",
                None,
                Some(&serde_json::json!({"text": mem.text})),
                &opts.actor,
                None,
                now,
            )?;
            match mem.kind {
                Kind::Episode => {
                    tx.link_message(message_ids[p.message], id)?;
                    bubble_of_message[p.message] = Some(id);
                    report.episodes.push(id);
                    let cause = match &p.cause {
                        Some(CauseRef::Clause(k)) => {
                            let cv = &clause_vectors[*k];
                            let in_episodes = |id: i64| scope_episodes.contains(&id);
                            idx.search(cv, 1, Some(&in_episodes), Some(&scope))
                                .0
                                .into_iter()
                                .chain(
                                    created
                                        .iter()
                                        .filter(|c| c.3 == Kind::Episode)
                                        .map(|c| (c.0, dot(cv, c.1))),
                                )
                                .filter(|c| c.1 >= CAUSE_MATCH)
                                .max_by(|a, b| a.1.total_cmp(&b.1))
                                .map(|c| (c.0, c.1 as f64))
                        }
                        Some(CauseRef::Previous) => tx
                            .previous_episode(conversation, id)?
                            .map(|prev| (prev, CAUSE_BY_REFERENCE)),
                        None => None,
                    };
                    if let Some((cause, score)) = cause {
                        tx.upsert_link(id, cause, LinkKind::Causal, score, now)?;
                        report.causal_links += 1;
                    }
                }
                Kind::Fact => {
                    if let Some(b) = parent_bubble {
                        tx.upsert_link(id, b, LinkKind::DerivedFrom, 1.0, now)?;
                    }
                    report.facts_added.push(id);
                }
                _ => {}
            }
            for parent in &opts.parents {
                tx.upsert_link(id, *parent, LinkKind::DerivedFrom, 1.0, now)?;
            }
            for (other, sim) in near
                .iter()
                .filter(|n| n.1 >= CONNECT_THRESHOLD)
                .take(MAX_CONNECTIONS)
            {
                tx.upsert_link(id, *other, LinkKind::Similar, *sim as f64, now)?;
                tx.upsert_link(*other, id, LinkKind::Similar, *sim as f64, now)?;
                report.links_created += 2;
            }
            created.push((id, v, who, mem.kind));
        }
        Ok(report)
    })?;
    drop(index_guard);
    let mut idx = index
        .write()
        .map_err(|_| Error::InvalidInput("index lock poisoned".into()))?;
    for id in &report.facts_deleted {
        idx.remove(*id);
    }
    idx.catch_up(&store, &crate::events::Job::default())?;
    drop(idx);
    drop(store);
    let mut report = report;
    report.summaries = summary::refresh(
        store_mutex,
        index,
        embed,
        count_tokens,
        conversation,
        policies.summary_every,
        complex_update,
    )?;
    Ok(report)
}
