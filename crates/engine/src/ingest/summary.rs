//! Rolling conversation summaries (SPEC "Ingestion": a conversation summary every 20
//! messages). A conversation's bubbles, in the order they were stored, fall into windows
//! of `every`; each complete window gets one `summary` memory, written by the extractive
//! compressor and linked `derived_from` the window's bubbles. A complex update (an ingest
//! policy) also summarises the window still filling; that summary is rewritten in place as
//! the window grows, until it is complete.
//!
//! These summaries are marked in their metadata (`conversation_window`); sleep cycles do not
//! count their episodes as consolidated, so a cycle still replays and compresses them.

use crate::compress::text::DocFreq;
use crate::compress::{Batch, Compression, Compressor, Corpus, EpisodeView, Extractive};
use crate::index::VectorIndex;
use crate::memory::{
    embedding_text, l_score, Details, Kind, LinkKind, Memory, NewMemory, Source, W5H1,
};
use crate::store::{Store, Tx};
use crate::{Error, Result};
use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

/// Metadata key holding a conversation summary's window number (0-based).
pub const WINDOW_KEY: &str = "conversation_window";
/// History actor of these summaries.
const ACTOR: &str = "ingest:summary";

/// A window to (re)write: its number, its bubbles, and the summary it replaces.
struct Work {
    window: usize,
    episodes: Vec<i64>,
    existing: Option<i64>,
}

/// A window's summary before it is written: the window, the memory, its source bubbles
/// and their provenance scores.
struct Planned {
    work: Work,
    memory: NewMemory,
    sources: Vec<i64>,
    parent_scores: Vec<f64>,
}

/// Brings the summaries of `conversation` up to date; returns the ids written (created or
/// rewritten). `partial`: also summarise the window still filling. In steps: find the
/// windows whose summary is missing or stale (under the store lock), compress and embed
/// them (without it), write them in one transaction.
#[allow(clippy::too_many_arguments)]
pub fn refresh(
    store: &Mutex<Store>,
    index: &RwLock<VectorIndex>,
    embed: &dyn Fn(Vec<String>) -> Result<Vec<Vec<f32>>>,
    count_tokens: &dyn Fn(&str) -> usize,
    conversation: &str,
    every: usize,
    partial: bool,
) -> Result<Vec<i64>> {
    if every == 0 {
        return Ok(Vec::new());
    }
    let lock = || store.lock().unwrap_or_else(|p| p.into_inner());
    let (work, memories) = stale_windows(&lock(), conversation, every, partial)?;
    if work.is_empty() {
        return Ok(Vec::new());
    }
    let planned = compress_windows(work, &memories, conversation, every)?;
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let vectors = embed(
        planned
            .iter()
            .map(|p| embedding_text(Kind::Summary, &p.memory.text, &p.memory.w5h1))
            .collect(),
    )?;
    let mut guard = lock();
    let now = crate::store::now_ms();
    let written = guard.transaction(|tx| {
        let mut out = Vec::new();
        for (p, v) in planned.iter().zip(&vectors) {
            let id = write_summary(tx, p, now)?;
            tx.set_embedding(id, v)?;
            tx.set_tokens(id, count_tokens(&p.memory.text))?;
            for s in &p.sources {
                tx.upsert_link(id, *s, LinkKind::DerivedFrom, 1.0, now)?;
            }
            out.push(id);
        }
        Ok(out)
    })?;
    index
        .write()
        .map_err(|_| Error::InvalidInput("index lock poisoned".into()))?
        .catch_up(&guard, &crate::events::Job::default())?;
    Ok(written)
}

/// The windows of `conversation` whose summary is missing or was written while the window
/// was smaller, and the conversation's bubbles (none read when nothing is stale).
fn stale_windows(
    store: &Store,
    conversation: &str,
    every: usize,
    partial: bool,
) -> Result<(Vec<Work>, HashMap<i64, Memory>)> {
    let read = store.read();
    let episodes = read.conversation_episodes(conversation)?;
    let have: HashMap<usize, (i64, usize)> = read
        .window_summaries(conversation)?
        .into_iter()
        .map(|(id, w, n)| (w, (id, n)))
        .collect();
    let mut work = Vec::new();
    for (w, chunk) in episodes.chunks(every).enumerate() {
        let complete = chunk.len() == every;
        if !complete && !partial {
            continue;
        }
        match have.get(&w) {
            Some(&(_, n)) if n == chunk.len() => {}
            // A window summarised while it was filling is rewritten once it has grown.
            Some(&(id, _)) => work.push(Work {
                window: w,
                episodes: chunk.to_vec(),
                existing: Some(id),
            }),
            None => work.push(Work {
                window: w,
                episodes: chunk.to_vec(),
                existing: None,
            }),
        }
    }
    if work.is_empty() {
        return Ok((work, HashMap::new()));
    }
    let memories = read
        .get_memories(&episodes)?
        .into_iter()
        .map(|m| (m.id, m))
        .collect();
    Ok((work, memories))
}

/// Compresses each window's live bubbles into a summary memory (the conversation's bubbles
/// are the document frequencies); windows with no live bubble are left out.
fn compress_windows(
    work: Vec<Work>,
    memories: &HashMap<i64, Memory>,
    conversation: &str,
    every: usize,
) -> Result<Vec<Planned>> {
    let mut df = DocFreq::default();
    for m in memories.values() {
        df.add(&m.text);
    }
    let corpus = Corpus {
        df,
        names: memories
            .values()
            .filter_map(|m| m.w5h1.who.as_deref())
            .map(str::to_lowercase)
            .collect(),
    };
    let compressor = Extractive::default();
    let mut planned = Vec::new();
    for w in work {
        let live: Vec<&Memory> = w
            .episodes
            .iter()
            .filter_map(|id| memories.get(id))
            .filter(|m| m.deleted_at.is_none())
            .collect();
        if live.is_empty() {
            continue;
        }
        let batch = Batch {
            conversation: Some(conversation.to_string()),
            session: None,
            episodes: live.iter().map(|m| EpisodeView::of(m, None)).collect(),
        };
        let c = compressor.compress(&batch, &corpus)?;
        planned.push(Planned {
            memory: summary_memory(&w, &live, c, conversation, every),
            sources: live.iter().map(|m| m.id).collect(),
            parent_scores: live.iter().map(|m| m.l_score).collect(),
            work: w,
        });
    }
    Ok(planned)
}

/// The summary memory of window `w` from its live bubbles and their compression.
fn summary_memory(
    w: &Work,
    live: &[&Memory],
    c: Compression,
    conversation: &str,
    every: usize,
) -> NewMemory {
    let mut who: Vec<String> = Vec::new();
    for m in live {
        if let Some(w) = &m.w5h1.who {
            if !who.contains(w) {
                who.push(w.clone());
            }
        }
    }
    let first = live.first().and_then(|m| m.w5h1.when.clone());
    let last = live.last().and_then(|m| m.w5h1.when.clone());
    let mut m = NewMemory::new(Kind::Summary, c.summary.clone());
    m.w5h1 = W5H1 {
        who: (!who.is_empty()).then(|| who.join(", ")),
        what: Some(c.summary.clone()),
        when: match (first, last) {
            (Some(a), Some(b)) if a != b => Some(format!("{a} – {b}")),
            (a, b) => a.or(b),
        },
        where_: Some(conversation.to_string()),
        why: None,
        how: None,
    };
    m.conversation = Some(conversation.to_string());
    m.occurred_at = live.iter().filter_map(|m| m.occurred_at).max();
    m.importance = 0.5;
    m.novelty = 0.5;
    m.source = Source::AgentInference;
    m.tags = vec!["conversation-summary".into()];
    m.metadata = serde_json::json!({
        WINDOW_KEY: w.window,
        "episodes": w.episodes.len(),
        "first_turn": w.window * every + 1,
    });
    m.details = Details::Summary {
        key_concepts: c.key_concepts,
        themes: c.themes,
        relationships: c.relationships,
        confidence: c.confidence,
        source_episode_ids: live.iter().map(|m| m.id).collect(),
    };
    m
}

/// Rewrites the window's summary in place when it still exists, else adds one; its id.
fn write_summary(tx: &Tx<'_>, p: &Planned, now: i64) -> Result<i64> {
    let m = &p.memory;
    let score = l_score(m.source, &p.parent_scores).max(0.01);
    let old = p.work.existing.and_then(|id| {
        tx.get_memory(id)
            .ok()
            .flatten()
            .filter(|e| e.deleted_at.is_none())
    });
    let Some(old) = old else {
        let id = tx.insert_memory(m, score, now)?;
        tx.record_history(
            id,
            "add",
            None,
            Some(&serde_json::json!({"text": m.text})),
            ACTOR,
            Some("conversation summary"),
            now,
        )?;
        return Ok(id);
    };
    let mut new = old.clone();
    new.text = m.text.clone();
    new.w5h1 = m.w5h1.clone();
    new.metadata = m.metadata.clone();
    (new.details, new.occurred_at) = (m.details.clone(), m.occurred_at);
    (new.l_score, new.updated_at) = (score, now);
    tx.write_memory_fields(&new, now)?;
    tx.set_summary_fields(old.id, &m.details, m.occurred_at, score)?;
    tx.clear_derived_links(old.id)?;
    // The 5W1H are recorded with the text, so time travel shows the summary as it was.
    let fields = |m: &crate::memory::Memory| {
        let mut v = serde_json::to_value(&m.w5h1).unwrap_or_else(|_| serde_json::json!({}));
        v["text"] = m.text.clone().into();
        v["metadata"] = m.metadata.clone();
        v["details"] = serde_json::to_value(&m.details).unwrap_or_default();
        v["occurred_at"] = m.occurred_at.into();
        v["l_score"] = m.l_score.into();
        v["updated_at"] = m.updated_at.into();
        v
    };
    tx.record_history(
        old.id,
        "update",
        Some(&fields(&old)),
        Some(&fields(&new)),
        ACTOR,
        Some("conversation summary: the window grew"),
        now,
    )?;
    Ok(old.id)
}
