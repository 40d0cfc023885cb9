//! The commit stage of an `add`: one transaction writes the messages and the planned
//! memories with their vectors. Each fact is first checked against the conversation's
//! facts (a duplicate is a no-op; otherwise reconciled: add, update or delete); each
//! memory gets its novelty, provenance score, history, its causal link and its similarity
//! connections. The vector index catches up after the commit.

use super::plan::{BatchPlan, CauseRef, Embedded, Planned};
use super::{
    contradiction_openings, contradicts, reconcile, AddOptions, AddReport, FactAction, Policies,
    CAUSE_BY_REFERENCE, CAUSE_MATCH, CONNECT_THRESHOLD, FACT_DUPLICATE, MAX_CONNECTIONS,
};
use crate::embed::dot;
use crate::index::{Among, VectorIndex};
use crate::memory::{l_score, Kind, LinkKind, L_SCORE_THRESHOLD};
use crate::store::{MemoryFilter, Store, Tx};
use crate::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::sync::RwLock;

/// What becomes of a planned fact (see `Writer::fact_fate`).
enum FactFate {
    /// This fact of its speaker (stored, or of this batch) says it already.
    Known(i64),
    New,
    /// Stored, and it replaces this stored fact.
    Replaces(i64),
}

/// Memories of the conversation stored before this batch.
struct Scope {
    /// Every one, listed for exact k-NN, and as a set for the graph's filter (built once
    /// per batch, not at every search: the conversation can be the whole store).
    ids: Vec<i64>,
    set: HashSet<i64>,
    /// Its facts, the same two ways.
    facts: Vec<i64>,
    fact_set: HashSet<i64>,
    /// Its episodes; read only when the batch has cause clauses to match.
    episodes: HashSet<i64>,
}

impl Scope {
    fn read(store: &Store, conversation: &str, with_episodes: bool) -> Result<Self> {
        let read = store.read();
        let filter = MemoryFilter {
            conversation: Some(conversation.to_string()),
            ..Default::default()
        };
        let ids = read.filter_ids(&filter)?;
        let facts = read.filter_ids(&MemoryFilter {
            kinds: vec![Kind::Fact],
            ..filter.clone()
        })?;
        let episodes = if with_episodes {
            read.filter_ids(&MemoryFilter {
                kinds: vec![Kind::Episode],
                ..filter
            })?
            .into_iter()
            .collect()
        } else {
            HashSet::new()
        };
        Ok(Self {
            set: ids.iter().copied().collect(),
            ids,
            fact_set: facts.iter().copied().collect(),
            facts,
            episodes,
        })
    }

    /// Every memory of the scope, as the index takes candidates.
    fn all(&self) -> Among<'_> {
        Among {
            ids: &self.ids,
            set: Some(&self.set),
        }
    }

    /// The scope's facts, as the index takes candidates.
    fn facts(&self) -> Among<'_> {
        Among {
            ids: &self.facts,
            set: Some(&self.fact_set),
        }
    }
}

/// What the commit stage needs besides the plan and its vectors.
pub(crate) struct CommitCtx<'a> {
    pub index: &'a RwLock<VectorIndex>,
    pub count_tokens: &'a dyn Fn(&str) -> usize,
    pub conversation: &'a str,
    pub opts: &'a AddOptions,
    pub policies: &'a Policies,
}

/// Writes the plan in one transaction (then [`update_index`] brings the index up to date).
/// `store` is the locked store; the report carries on from the plan's.
pub(crate) fn commit(
    store: &mut Store,
    ctx: &CommitCtx<'_>,
    plan: BatchPlan<'_>,
    embedded: &Embedded,
) -> Result<AddReport> {
    let (vectors, clause_vectors) = (&embedded.vectors, &embedded.clause_vectors);
    let scope = Scope::read(store, ctx.conversation, !plan.clauses.is_empty())?;
    let now = crate::store::now_ms();
    let index_guard = ctx
        .index
        .read()
        .map_err(|_| Error::InvalidInput("index lock poisoned".into()))?;
    let report = store.transaction(|tx| {
        let mut w = Writer {
            tx,
            idx: &index_guard,
            ctx,
            scope: &scope,
            base_score: plan.base_score,
            clause_vectors,
            now,
            created: Vec::new(),
            bubble_of_message: vec![None; plan.fresh.len()],
            report: plan.report.clone(),
        };
        let message_ids = w.messages(&plan)?;
        for (p, v) in plan.planned.iter().zip(vectors) {
            let replaces = match p.memory.kind {
                Kind::Fact if !p.verbatim => match w.fact_fate(p, v)? {
                    FactFate::Known(same) => {
                        w.restated(same, p)?;
                        continue;
                    }
                    FactFate::New => None,
                    FactFate::Replaces(old) => Some(old),
                },
                _ => None,
            };
            let id = w.insert(p, v, &message_ids)?;
            if let Some(old) = replaces {
                w.supersede(old, id, p)?;
            }
            if p.memory.kind == Kind::Fact {
                w.contradictions(id, p)?;
            }
        }
        Ok(w.report)
    })?;
    Ok(report)
}

/// Brings the index up to date with a commit whose report is `report`: the facts it
/// deleted leave the graph, the memories it wrote are inserted (from the store's log).
pub(crate) fn update_index(
    store: &Store,
    index: &RwLock<VectorIndex>,
    report: &AddReport,
) -> Result<()> {
    let mut idx = index
        .write()
        .map_err(|_| Error::InvalidInput("index lock poisoned".into()))?;
    for id in &report.facts_deleted {
        idx.remove(*id);
    }
    idx.catch_up(store, &crate::events::Job::default())?;
    Ok(())
}

/// The transaction's state while it writes one planned memory after another.
struct Writer<'a, 't> {
    tx: &'a Tx<'t>,
    idx: &'a VectorIndex,
    ctx: &'a CommitCtx<'a>,
    scope: &'a Scope,
    base_score: f64,
    clause_vectors: &'a [Vec<f32>],
    now: i64,
    /// (id, vector, speaker, kind) of what this batch created so far.
    created: Vec<(i64, &'a [f32], Option<&'a str>, Kind)>,
    /// The bubble made from each fresh message, once written.
    bubble_of_message: Vec<Option<i64>>,
    report: AddReport,
}

impl<'a> Writer<'a, '_> {
    /// Stores the fresh messages (and prunes the log to the history cap); their ids.
    fn messages(&mut self, plan: &BatchPlan<'_>) -> Result<Vec<i64>> {
        let conversation = self.ctx.conversation;
        let mut ids = Vec::with_capacity(plan.fresh.len());
        for m in &plan.fresh {
            let id = self
                .tx
                .insert_message(conversation, m, self.now)?
                .ok_or_else(|| {
                    Error::InvalidInput("a message was stored concurrently; retry the add".into())
                })?;
            ids.push(id);
        }
        self.report.messages_stored = plan.fresh.len();
        if let Some(cap) = self.ctx.policies.history_max_chars {
            self.report.messages_pruned = self.tx.prune_messages(conversation, cap)?;
        }
        Ok(ids)
    }

    /// What becomes of fact `p`: nothing when it duplicates a fact of its speaker (stored or
    /// in this batch); stored, and replacing a stored fact whose value it changes or
    /// contradicts (that one is closed, not rewritten: see [`Self::supersede`]); or stored.
    fn fact_fate(&mut self, p: &Planned, v: &[f32]) -> Result<FactFate> {
        let who = p.memory.w5h1.who.as_deref();
        let facts = self.scope.facts();
        let existing = self
            .idx
            .search_among(v, 1, None, Some(facts))
            .0
            .first()
            .map_or((0, 0.0), |h| (h.0, h.1));
        let in_batch = self
            .created
            .iter()
            .filter(|c| c.3 == Kind::Fact && c.2 == who)
            .map(|c| (c.0, dot(v, c.1)))
            .fold((0, 0.0), |best, c| if c.1 > best.1 { c } else { best });
        let nearest = if in_batch.1 > existing.1 {
            in_batch
        } else {
            existing
        };
        if nearest.1 >= FACT_DUPLICATE {
            self.report.facts_unchanged += 1;
            return Ok(FactFate::Known(nearest.0));
        }
        // Reconcile with the 10 most similar stored facts (seed 004).
        let near = self.idx.search_among(v, 10, None, Some(facts)).0;
        let mut sims: HashMap<i64, f32> = near.iter().copied().collect();
        // And with this batch's facts of the speaker: a value said twice in one import
        // (moved in May, moved again in September) is reconciled like one said across two.
        sims.extend(
            self.created
                .iter()
                .filter(|c| c.3 == Kind::Fact && c.2 == who)
                .map(|c| (c.0, dot(v, c.1))),
        );
        let ids: Vec<i64> = sims.keys().copied().collect();
        let mut similar: Vec<(i64, String, f32)> = self
            .tx
            .get_memories(&ids)?
            .into_iter()
            .filter(|m| m.deleted_at.is_none() && m.superseded_by.is_none())
            .map(|m| (m.id, m.text, sims[&m.id]))
            .collect();
        similar.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        similar.truncate(10);
        let subject = who.unwrap_or_default();
        Ok(
            match reconcile(&p.memory.text, subject, &similar, FACT_DUPLICATE) {
                FactAction::Add => FactFate::New,
                FactAction::Noop(same) => {
                    self.report.facts_unchanged += 1;
                    FactFate::Known(same)
                }
                FactAction::Update(old) | FactAction::Delete(old) => FactFate::Replaces(old),
            },
        )
    }

    /// Closes stored fact `old`, replaced by the new fact `new` (planned as `p`): it held
    /// until the new one's message, links to it (`superseded_by`), and keeps its text. Its
    /// history says what replaced it and why.
    fn supersede(&mut self, old: i64, new: i64, p: &Planned) -> Result<()> {
        let (tx, now) = (self.tx, self.now);
        let until = p.memory.occurred_at.unwrap_or(now);
        tx.supersede(old, new, until)?;
        tx.record_history(
            old,
            "update",
            Some(&serde_json::json!({"valid_to": null, "superseded_by": null})),
            Some(&serde_json::json!({"valid_to": until, "superseded_by": new})),
            &self.ctx.opts.actor,
            Some(&format!("reconcile: superseded by \"{}\"", p.memory.text)),
            now,
        )?;
        self.report.facts_updated.push(old);
        Ok(())
    }

    /// Fact `same` was said again by planned fact `p`: it is confirmed at `p`'s time.
    fn restated(&mut self, same: i64, p: &Planned) -> Result<()> {
        self.tx
            .record_restatement(same, p.memory.occurred_at.unwrap_or(self.now))
    }

    /// Records the contradictions between the new fact `id` (planned as `p`) and its
    /// speaker's current facts that reconciliation left standing (those of other
    /// conversations, or not among the most similar): the older of each pair, by the time
    /// it held from, is the one contradicted.
    fn contradictions(&mut self, id: i64, p: &Planned) -> Result<()> {
        let Some(who) = p.memory.w5h1.who.as_deref() else {
            return Ok(());
        };
        let Some(openings) = contradiction_openings(&p.memory.text, who) else {
            return Ok(());
        };
        let from = p.memory.occurred_at.unwrap_or(self.now);
        for other in self.tx.current_facts_opening(who, &openings, id)? {
            if !contradicts(&other.text, &p.memory.text, who) {
                continue;
            }
            let (old, new) = if other.from <= from {
                (other.id, id)
            } else {
                (id, other.id)
            };
            self.tx.insert_contradiction(old, new, self.now)?;
        }
        Ok(())
    }

    /// Stores planned memory `p` with vector `v`: novelty from its nearest neighbour in the
    /// conversation, provenance, history, its links (message, cause, fact-to-bubble,
    /// parents, similarity in both directions).
    fn insert(&mut self, p: &'a Planned, v: &'a [f32], message_ids: &[i64]) -> Result<i64> {
        let (tx, now, opts) = (self.tx, self.now, self.ctx.opts);
        let near = self.neighbours(v);
        let novelty = 1.0 - near.first().map_or(0.0, |n| n.1.max(0.0) as f64);
        let mut mem = p.memory.clone();
        mem.novelty = novelty.clamp(0.0, 1.0);
        let parent_bubble = self.bubble_of_message[p.message];
        let score = match (mem.kind, parent_bubble) {
            // A fact derives from its turn's bubble.
            (Kind::Fact, Some(_)) => l_score(opts.source, &[self.base_score]),
            _ => self.base_score,
        };
        if score < L_SCORE_THRESHOLD {
            return Err(Error::ProvenanceBelowThreshold {
                l_score: score,
                threshold: L_SCORE_THRESHOLD,
            });
        }
        let id = tx.insert_memory(&mem, score, now)?;
        tx.set_embedding(id, v)?;
        tx.set_tokens(id, (self.ctx.count_tokens)(&mem.text))?;
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
                self.bubble_of_message[p.message] = Some(id);
                self.report.episodes.push(id);
                if let Some((cause, score)) = self.cause_of(p, id)? {
                    tx.upsert_link(id, cause, LinkKind::Causal, score, now)?;
                    self.report.causal_links += 1;
                }
            }
            Kind::Fact => {
                if let Some(b) = parent_bubble {
                    tx.upsert_link(id, b, LinkKind::DerivedFrom, 1.0, now)?;
                } else if p.verbatim {
                    // A stated fact is its message's memory, as a bubble is a turn's.
                    tx.link_message(message_ids[p.message], id)?;
                }
                self.report.facts_added.push(id);
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
            self.report.links_created += 2;
        }
        self.created
            .push((id, v, p.memory.w5h1.who.as_deref(), mem.kind));
        Ok(id)
    }

    /// Nearest memories to `v` among the conversation's stored ones and this batch's,
    /// best first.
    fn neighbours(&self, v: &[f32]) -> Vec<(i64, f32)> {
        let mut near: Vec<(i64, f32)> = self
            .idx
            .search_among(v, MAX_CONNECTIONS + 1, None, Some(self.scope.all()))
            .0;
        near.extend(self.created.iter().map(|c| (c.0, dot(v, c.1))));
        near.sort_by(|a, b| b.1.total_cmp(&a.1));
        near
    }

    /// The memory holding the cause of episode `id` (planned as `p`), with the link's
    /// score: the earlier episode most similar to its cause clause, or the turn before.
    fn cause_of(&self, p: &Planned, id: i64) -> Result<Option<(i64, f64)>> {
        Ok(match &p.cause {
            Some(CauseRef::Clause(k)) => {
                let cv = &self.clause_vectors[*k];
                let episodes = &self.scope.episodes;
                let in_episodes = |id: i64| episodes.contains(&id);
                self.idx
                    .search_among(cv, 1, Some(&in_episodes), Some(self.scope.all()))
                    .0
                    .into_iter()
                    .chain(
                        self.created
                            .iter()
                            .filter(|c| c.3 == Kind::Episode)
                            .map(|c| (c.0, dot(cv, c.1))),
                    )
                    .filter(|c| c.1 >= CAUSE_MATCH)
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|c| (c.0, c.1 as f64))
            }
            Some(CauseRef::Previous) => self
                .tx
                .previous_episode(self.ctx.conversation, id)?
                .map(|prev| (prev, CAUSE_BY_REFERENCE)),
            None => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::{embed_plan, plan_batch};
    use super::*;
    use crate::embed::{Embedder, HashEmbedder};
    use crate::index::IndexParams;
    use crate::ingest::Records;
    use crate::store::Message;
    use std::sync::Mutex;

    const DIM: usize = 64;

    fn message(text: &str) -> Message {
        Message {
            role: "user".into(),
            speaker: Some("Ada".into()),
            text: text.into(),
            session: None,
            occurred_at: None,
            external_id: None,
            metadata: serde_json::Value::Null,
        }
    }

    /// Plans, embeds (hashing embedder) and commits `texts` as one batch of "c1".
    fn add(store: &Mutex<Store>, index: &RwLock<VectorIndex>, texts: &[&str]) -> AddReport {
        let msgs: Vec<Message> = texts.iter().map(|t| message(t)).collect();
        let (opts, policies) = (AddOptions::default(), Policies::default());
        let plan = plan_batch(store, "c1", &msgs, Records::Turns, &opts, &policies).unwrap();
        let e = HashEmbedder::new(DIM);
        let embed = |texts: Vec<String>| {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            e.embed(&refs)
        };
        let embedded = embed_plan(&plan, &embed).unwrap();
        let ctx = CommitCtx {
            index,
            count_tokens: &|t: &str| t.split_whitespace().count(),
            conversation: "c1",
            opts: &opts,
            policies: &policies,
        };
        let mut guard = store.lock().unwrap();
        let report = commit(&mut guard, &ctx, plan, &embedded).unwrap();
        update_index(&guard, index, &report).unwrap();
        report
    }

    fn setup() -> (Mutex<Store>, RwLock<VectorIndex>) {
        (
            Mutex::new(Store::open_in_memory().unwrap()),
            RwLock::new(VectorIndex::new(DIM, IndexParams::default(), 16)),
        )
    }

    #[test]
    fn commit_stores_messages_bubbles_and_facts_and_indexes_them() {
        let (store, index) = setup();
        let r = add(
            &store,
            &index,
            &["I live in Lisbon.", "The weather is nice."],
        );
        assert_eq!((r.messages_stored, r.episodes.len()), (2, 2));
        assert_eq!(r.facts_added.len(), 1);
        assert_eq!(index.read().unwrap().len(), 3, "every memory is indexed");
        let guard = store.lock().unwrap();
        let read = guard.read();
        let fact = read.require_memory(r.facts_added[0]).unwrap();
        assert_eq!(fact.text, "Ada lives in Lisbon");
        assert_eq!(fact.tokens, Some(4), "counted by the given counter");
        let links = read.links_of(fact.id).unwrap();
        assert!(links
            .iter()
            .any(|l| l.kind == LinkKind::DerivedFrom && l.dst == r.episodes[0]));
    }

    #[test]
    fn a_fact_said_again_is_a_noop_and_its_turn_is_still_stored() {
        let (store, index) = setup();
        add(&store, &index, &["I live in Lisbon."]);
        let r = add(&store, &index, &["I live in Lisbon."]);
        assert_eq!((r.episodes.len(), r.facts_unchanged), (1, 1));
        assert!(r.facts_added.is_empty());
        assert!(
            r.links_created >= 2,
            "the repeated turn connects to the first, both ways"
        );
    }

    #[test]
    fn a_cause_clause_links_the_turn_to_the_earlier_turn_it_names() {
        let (store, index) = setup();
        let r = add(
            &store,
            &index,
            &["The build failed.", "I quit because the build failed."],
        );
        assert_eq!(r.causal_links, 1);
        let guard = store.lock().unwrap();
        let links = guard.read().links_of(r.episodes[1]).unwrap();
        assert!(links
            .iter()
            .any(|l| l.kind == LinkKind::Causal && l.dst == r.episodes[0]));
    }
}
