//! The façade's single-memory operations: detail (with provenance), listing, update
//! (re-embedding and re-linking changed text), soft and hard delete, restore, history, and
//! the store's statistics.

use super::{MemoryDetail, Page, Somna, Stats};
use crate::events::Job;
use crate::ingest;
use crate::memory::{embedding_text, Kind, LinkKind, Memory, State};
use crate::store::{HistoryEntry, ListQuery, MemoryFilter, MemoryUpdate, Message};
use crate::{Error, Result};

impl Somna {
    pub fn get(&self, id: i64) -> Result<MemoryDetail> {
        let store = self.store();
        let read = store.read();
        let memory = read.require_memory(id)?;
        Ok(MemoryDetail {
            links: read.links_of(id)?,
            history: read.history(id)?,
            memory,
            provenance: provenance(&read, id, Some)?,
            as_of: None,
        })
    }

    pub fn list(&self, q: &ListQuery) -> Result<Page> {
        let store = self.store();
        let read = store.read();
        Ok(Page {
            total: read.count_memories(&q.filter)?,
            offset: q.offset,
            memories: read.list_memories(q)?,
            as_of: None,
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
        let mut new = upd.apply(&old);
        if new.text != old.text {
            new.tokens = Some(self.embedder.count_tokens(&new.text) as i64);
        }
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
            if let (Some(t), true) = (new.tokens, new.text != old.text) {
                tx.set_tokens(id, t as usize)?;
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
            let (mut before, mut after) = changed_fields(&old, &new);
            // When it changed, so time travel shows the memory exactly as it was.
            before["updated_at"] = old.updated_at.into();
            after["updated_at"] = now.into();
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
                    Some(&serde_json::json!({"text": old.text, "deleted_at": null, "updated_at": old.updated_at})),
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
                Some(&serde_json::json!({"state": old.state, "deleted_at": old.deleted_at, "updated_at": old.updated_at})),
                Some(&serde_json::json!({"state": "active", "deleted_at": null})),
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
            db_path: store.location(),
            memories: all,
            by_kind,
            by_state,
            deleted: with_deleted - all,
            conversations: read.conversations()?,
            links,
            indexed: if index.in_database() {
                read.count_embedded()?
            } else {
                index.len()
            },
            index_tombstones: index.tombstones(),
            vectors_held: index.len(),
            vector_index: if index.in_database() {
                crate::index::SearchPath::Pgvector
            } else {
                crate::index::SearchPath::Hnsw
            },
            embedding_model: self.embedder.model_id().to_string(),
            dim: self.embedder.dim(),
        })
    }
}

/// The fields that differ between two versions of a memory, as (before, after) objects.
/// The memories `id` derives from, transitively, nearest first, each as `seen` maps it
/// (today's memory, or as it was at an instant; `None` leaves it and its parents out).
pub(super) fn provenance(
    read: &crate::store::Tx<'_>,
    id: i64,
    seen: impl Fn(Memory) -> Option<Memory>,
) -> Result<Vec<Memory>> {
    let mut chain = Vec::new();
    let mut visited = std::collections::HashSet::from([id]);
    let mut frontier = vec![id];
    while let Some(cur) = frontier.pop() {
        for (parent, _) in read.neighbours(cur, &[LinkKind::DerivedFrom])? {
            if visited.insert(parent) {
                if let Some(m) = read.get_memory(parent)?.and_then(&seen) {
                    chain.push(m);
                    frontier.push(parent);
                }
            }
        }
    }
    Ok(chain)
}

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
