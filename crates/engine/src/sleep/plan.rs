//! The phases of a cycle as pure computations over a snapshot of the store: nothing here
//! writes, so a dry run and a real run compute exactly the same thing.

use super::{FieldChange, SleepConfig};
use crate::compress::text;
use crate::compress::{Batch, Compression, Compressor, Corpus, EpisodeView, Extractive};
use crate::compress::{SchemaDraft, SummaryView};
use crate::events::Job;
use crate::memory::{Details, Kind, Memory, State};
use crate::Result;
use std::collections::{BTreeMap, HashMap, HashSet};

const DAY_MS: f64 = 86_400_000.0;

/// What a cycle reads from the store before it starts.
pub struct Snapshot {
    pub now: i64,
    /// Every memory that is not soft-deleted.
    pub memories: Vec<Memory>,
    /// Episodes a live summary already derives from.
    pub consolidated: HashSet<i64>,
    /// Summaries a live schema already derives from.
    pub in_schema: HashSet<i64>,
    /// When importance last decayed (the start of the last cycle whose forget phase
    /// committed); `None`: never.
    pub last_decay_at: Option<i64>,
}

impl Snapshot {
    /// What a cycle at `now` reads from the store (one read transaction).
    pub fn read(read: &crate::store::Tx<'_>, now: i64) -> Result<Snapshot> {
        Ok(Snapshot {
            now,
            memories: read
                .all_memories()?
                .into_iter()
                .filter(|m| m.deleted_at.is_none())
                .collect(),
            consolidated: read.derived_targets(Kind::Summary)?,
            in_schema: read.derived_targets(Kind::Schema)?,
            last_decay_at: read.last_decay_at()?,
        })
    }

    /// A snapshot for the lifecycle rules alone ([`replay`], [`batches`], [`forget_one`]):
    /// its memories lack their 5W1H, tags, metadata and details
    /// ([`crate::store::Tx::memories_for_lifecycle`]), so it must not be compressed or
    /// written back. The what-if simulator reads this one.
    pub fn read_for_lifecycle(read: &crate::store::Tx<'_>, now: i64) -> Result<Snapshot> {
        let mut memories = Vec::new();
        read.memories_for_lifecycle(i64::MIN..i64::MAX, &mut memories)?;
        Ok(Snapshot {
            now,
            memories,
            consolidated: read.derived_targets(Kind::Summary)?,
            in_schema: read.derived_targets(Kind::Schema)?,
            last_decay_at: read.last_decay_at()?,
        })
    }

    pub fn corpus(&self) -> Corpus {
        Corpus::of(
            self.memories
                .iter()
                .filter(|m| m.kind == Kind::Episode)
                .map(|m| m.text.as_str()),
            self.memories.iter().filter_map(|m| m.w5h1.who.as_deref()),
        )
    }

    fn by_id(&self) -> HashMap<i64, &Memory> {
        self.memories.iter().map(|m| (m.id, m)).collect()
    }
}

fn days(ms: i64) -> f64 {
    ms as f64 / DAY_MS
}

/// Replay priority (seed 000): weighted recency, importance, novelty and min(access, 5)/5.
pub fn priority(m: &Memory, now: i64, cfg: &SleepConfig) -> f64 {
    let w = &cfg.weights;
    let at = m.occurred_at.unwrap_or(m.created_at);
    let recency = (-cfg.recency_decay_per_day * days(now - at).max(0.0)).exp();
    w.recency * recency
        + w.importance * m.importance
        + w.novelty * m.novelty
        + w.access * (m.access_count.min(5) as f64 / 5.0)
}

pub struct ReplayPlan {
    pub candidates: usize,
    /// Best first.
    pub selected: Vec<i64>,
    pub changes: Vec<FieldChange>,
}

/// Phase 1: the unconsolidated episodes by priority; the chosen ones are marked accessed.
pub fn replay(snap: &Snapshot, cfg: &SleepConfig) -> ReplayPlan {
    let mut cands: Vec<(f64, &Memory)> = snap
        .memories
        .iter()
        .filter(|m| {
            m.kind == Kind::Episode
                && m.state != State::Forgotten
                && !m.pinned
                && !snap.consolidated.contains(&m.id)
        })
        .map(|m| (priority(m, snap.now, cfg), m))
        .collect();
    let candidates = cands.len();
    cands.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    cands.truncate(cfg.max_replay);
    let changes = cands
        .iter()
        .map(|(_, m)| FieldChange {
            memory_id: m.id,
            field: "last_accessed".into(),
            old: m.last_accessed.into(),
            new: snap.now.into(),
        })
        .collect();
    ReplayPlan {
        candidates,
        selected: cands.iter().map(|c| c.1.id).collect(),
        changes,
    }
}

/// Groups episodes into batches: by conversation and session (or by time gaps where there
/// is no session), in time order, cut into even windows of at most `batch_size`. Groups
/// smaller than `min_batch` wait. Returns the batches and how many episodes wait.
pub fn batches(snap: &Snapshot, selected: &[i64], cfg: &SleepConfig) -> (Vec<Vec<i64>>, usize) {
    let by_id = snap.by_id();
    let mut eps: Vec<&Memory> = selected
        .iter()
        .filter_map(|id| by_id.get(id).copied())
        .collect();
    eps.sort_by(|a, b| {
        (&a.conversation, &a.session, a.occurred_at, a.id).cmp(&(
            &b.conversation,
            &b.session,
            b.occurred_at,
            b.id,
        ))
    });
    let mut groups: Vec<Vec<&Memory>> = Vec::new();
    for m in eps {
        let new_group = match groups.last().and_then(|g| g.last()) {
            None => true,
            Some(prev) => {
                prev.conversation != m.conversation
                    || prev.session != m.session
                    || (m.session.is_none()
                        && match (prev.occurred_at, m.occurred_at) {
                            (Some(a), Some(b)) => b - a > cfg.gap_minutes * 60_000,
                            _ => false,
                        })
            }
        };
        if new_group {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("a group").push(m);
    }
    let mut out = Vec::new();
    let mut waiting = 0;
    for g in groups {
        if g.len() < cfg.min_batch {
            waiting += g.len();
            continue;
        }
        let n = g.len().div_ceil(cfg.batch_size);
        let (base, extra) = (g.len() / n, g.len() % n);
        let mut start = 0;
        for i in 0..n {
            let len = base + usize::from(i < extra);
            out.push(g[start..start + len].iter().map(|m| m.id).collect());
            start += len;
        }
    }
    (out, waiting)
}

/// A summary to create.
#[derive(Debug, Clone)]
pub struct SummaryPlan {
    pub sources: Vec<i64>,
    pub conversation: Option<String>,
    pub session: Option<String>,
    pub occurred_at: Option<i64>,
    pub who: Vec<String>,
    pub when: Option<String>,
    pub importance: f64,
    pub novelty: f64,
    pub compression: Compression,
    pub backend: String,
}

impl SummaryPlan {
    pub fn details(&self) -> Details {
        Details::Summary {
            key_concepts: self.compression.key_concepts.clone(),
            themes: self.compression.themes.clone(),
            relationships: self.compression.relationships.clone(),
            confidence: self.compression.confidence,
            source_episode_ids: self.sources.clone(),
        }
    }
}

/// Phase 2: one summary per batch. A failing backend falls back to the extractive one for
/// that batch (noted). Cancellable between batches.
pub fn compress(
    snap: &Snapshot,
    batches: &[Vec<i64>],
    vectors: &HashMap<i64, Vec<f32>>,
    corpus: &Corpus,
    compressor: &dyn Compressor,
    job: &Job,
    notes: &mut Vec<String>,
) -> Result<Vec<SummaryPlan>> {
    let by_id = snap.by_id();
    let fallback = Extractive::default();
    let mut out = Vec::with_capacity(batches.len());
    for (i, ids) in batches.iter().enumerate() {
        job.cancel.check()?;
        let eps: Vec<&Memory> = ids.iter().filter_map(|id| by_id.get(id).copied()).collect();
        let batch = Batch {
            conversation: eps[0].conversation.clone(),
            session: eps[0].session.clone(),
            episodes: eps
                .iter()
                .map(|m| EpisodeView::of(m, vectors.get(&m.id).cloned()))
                .collect(),
        };
        let (compression, backend) = match compressor.compress(&batch, corpus) {
            Ok(c) if !c.summary.trim().is_empty() => (c, compressor.name().to_string()),
            failed => {
                let why = match failed {
                    Err(e) => e.to_string(),
                    Ok(_) => "empty summary".into(),
                };
                notes.push(format!(
                    "batch of episodes {}..{}: {} failed ({why}); used extractive",
                    ids[0],
                    ids[ids.len() - 1],
                    compressor.name()
                ));
                (
                    fallback.compress(&batch, corpus)?,
                    format!("extractive (fallback from {})", compressor.name()),
                )
            }
        };
        if let Some(n) = &compression.note {
            notes.push(format!(
                "batch of episodes {}..{}: {n}",
                ids[0],
                ids[ids.len() - 1]
            ));
        }
        let mut who: Vec<String> = Vec::new();
        for w in eps.iter().filter_map(|m| m.w5h1.who.clone()) {
            if !who.contains(&w) {
                who.push(w);
            }
        }
        let n = eps.len() as f64;
        out.push(SummaryPlan {
            sources: ids.clone(),
            conversation: batch.conversation.clone(),
            session: batch.session.clone(),
            occurred_at: eps.iter().filter_map(|m| m.occurred_at).min(),
            who,
            when: eps.iter().find_map(|m| m.w5h1.when.clone()),
            importance: (eps.iter().map(|m| m.importance).sum::<f64>() / n + 0.1).min(1.0),
            novelty: eps.iter().map(|m| m.novelty).sum::<f64>() / n,
            compression,
            backend,
        });
        job.report("compress", i as u64 + 1, batches.len() as u64);
    }
    Ok(out)
}

/// A schema's member: a stored summary or one proposed by this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberRef {
    Stored(i64),
    Proposed(usize),
}

#[derive(Debug, Clone)]
pub struct SchemaPlan {
    pub members: Vec<MemberRef>,
    pub conversation: Option<String>,
    pub draft: SchemaDraft,
    pub backend: String,
}

struct Candidate {
    key: MemberRef,
    conversation: Option<String>,
    session: Option<String>,
    terms: Vec<String>,
    view: SummaryView,
}

/// Phase 3: summaries not yet in a schema that share a concept or theme (in at least
/// `schema_min_support` summaries from two or more sessions) become a schema; groups that
/// mostly repeat a chosen one are skipped.
pub fn schemas(
    snap: &Snapshot,
    proposed: &[SummaryPlan],
    corpus: &Corpus,
    compressor: &dyn Compressor,
    cfg: &SleepConfig,
    job: &Job,
    notes: &mut Vec<String>,
) -> Result<Vec<SchemaPlan>> {
    let cands = schema_candidates(snap, proposed);
    let groups = schema_groups(&cands, corpus, cfg);
    draft_schemas(&cands, &groups, corpus, compressor, cfg, job, notes)
}

/// The summaries that may join a schema: stored ones not in a schema yet, and this
/// cycle's proposals.
fn schema_candidates(snap: &Snapshot, proposed: &[SummaryPlan]) -> Vec<Candidate> {
    let mut cands: Vec<Candidate> = Vec::new();
    for m in &snap.memories {
        if m.kind != Kind::Summary || m.state == State::Forgotten || snap.in_schema.contains(&m.id)
        {
            continue;
        }
        if let Details::Summary {
            key_concepts,
            themes,
            ..
        } = &m.details
        {
            cands.push(Candidate {
                key: MemberRef::Stored(m.id),
                conversation: m.conversation.clone(),
                session: sitting(&m.session, m.occurred_at),
                terms: terms(key_concepts, themes),
                view: SummaryView {
                    text: m.text.clone(),
                    who: m
                        .w5h1
                        .who
                        .as_deref()
                        .map(|w| w.split(", ").map(String::from).collect())
                        .unwrap_or_default(),
                    when: m.w5h1.when.clone(),
                    occurred_at: m.occurred_at,
                    session: sitting(&m.session, m.occurred_at),
                    key_concepts: key_concepts.clone(),
                    themes: themes.clone(),
                },
            });
        }
    }
    for (i, p) in proposed.iter().enumerate() {
        cands.push(Candidate {
            key: MemberRef::Proposed(i),
            conversation: p.conversation.clone(),
            session: sitting(&p.session, p.occurred_at),
            terms: terms(&p.compression.key_concepts, &p.compression.themes),
            view: SummaryView {
                text: p.compression.summary.clone(),
                who: p.who.clone(),
                when: p.when.clone(),
                occurred_at: p.occurred_at,
                session: sitting(&p.session, p.occurred_at),
                key_concepts: p.compression.key_concepts.clone(),
                themes: p.compression.themes.clone(),
            },
        });
    }
    cands
}

/// A group of candidates around a shared term: (scope, core concepts, candidate indexes).
type SchemaGroup = (Option<String>, Vec<String>, Vec<usize>);

/// The groups of candidates that share a specific term across sessions, within each
/// scope (a conversation, or the whole store), most specific first and without groups
/// that mostly repeat a chosen one; the largest [`SleepConfig::max_schemas`] of them.
fn schema_groups(cands: &[Candidate], corpus: &Corpus, cfg: &SleepConfig) -> Vec<SchemaGroup> {
    // Scopes: one per conversation, or the whole store.
    let mut scopes: BTreeMap<Option<String>, Vec<usize>> = BTreeMap::new();
    for (i, c) in cands.iter().enumerate() {
        let key = if cfg.schemas_per_conversation {
            c.conversation.clone()
        } else {
            None
        };
        scopes.entry(key).or_default().push(i);
    }
    let mut groups: Vec<SchemaGroup> = Vec::new();
    for (scope, members) in &scopes {
        let mut by_term: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &i in members {
            for t in &cands[i].terms {
                by_term.entry(t.as_str()).or_default().push(i);
            }
        }
        let n = members.len() as f64;
        let mut ranked: Vec<(f64, &str, &Vec<usize>)> = by_term
            .iter()
            .filter(|(_, ms)| {
                let sessions: HashSet<&Option<String>> =
                    ms.iter().map(|&i| &cands[i].session).collect();
                ms.len() >= cfg.schema_min_support && sessions.len() >= 2
            })
            .map(|(t, ms)| {
                // Specific groups beat ones that cover nearly everything; themes are
                // broad by nature and count for less than key concepts.
                let s = ms.len() as f64;
                let theme = if text::is_theme(t) { 0.4 } else { 1.0 };
                (theme * s * (n / s).ln(), *t, ms)
            })
            .collect();
        // Ties: the term used more across the store names the group better.
        let df = |t: &str| {
            text::content_stems(t)
                .iter()
                .map(|s| corpus.df.df.get(s).copied().unwrap_or(0))
                .max()
                .unwrap_or(0)
        };
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(df(b.1).cmp(&df(a.1)))
                .then(a.1.cmp(b.1))
        });
        let mut chosen: Vec<&Vec<usize>> = Vec::new();
        for (score, term, ms) in ranked {
            if score <= 0.0 {
                continue;
            }
            let set: HashSet<usize> = ms.iter().copied().collect();
            let repeats = chosen.iter().any(|c| {
                let inter = c.iter().filter(|i| set.contains(i)).count() as f64;
                inter / (c.len() + set.len()) as f64 * 2.0 >= 0.5
            });
            if repeats {
                continue;
            }
            chosen.push(ms);
            // Core concepts: the seed, then terms shared by at least half of the members.
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for &i in ms.iter() {
                for t in &cands[i].terms {
                    if t != term {
                        *counts.entry(t.as_str()).or_default() += 1;
                    }
                }
            }
            let mut shared: Vec<(&str, usize)> = counts
                .into_iter()
                .filter(|(_, c)| *c * 2 >= ms.len())
                .collect();
            shared.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let mut core = vec![term.to_string()];
            core.extend(shared.into_iter().take(4).map(|s| s.0.to_string()));
            groups.push((scope.clone(), core, ms.clone()));
        }
    }
    groups.sort_by(|a, b| b.2.len().cmp(&a.2.len()).then(a.1.cmp(&b.1)));
    groups.truncate(cfg.max_schemas);
    groups
}

/// A draft per group from the compressor (the extractive one when it fails or names
/// nothing, with a note saying so).
fn draft_schemas(
    cands: &[Candidate],
    groups: &[SchemaGroup],
    corpus: &Corpus,
    compressor: &dyn Compressor,
    cfg: &SleepConfig,
    job: &Job,
    notes: &mut Vec<String>,
) -> Result<Vec<SchemaPlan>> {
    let fallback = Extractive::default();
    let mut out: Vec<SchemaPlan> = Vec::new();
    for (i, (scope, core, ms)) in groups.iter().enumerate() {
        job.cancel.check()?;
        let views: Vec<&SummaryView> = ms.iter().map(|&i| &cands[i].view).collect();
        let (draft, backend) = match compressor.schema(core, &views, corpus) {
            Ok(d) if !d.name.trim().is_empty() => (d, compressor.name().to_string()),
            failed => {
                let why = match failed {
                    Err(e) => e.to_string(),
                    Ok(_) => "empty name".into(),
                };
                notes.push(format!(
                    "schema \"{}\": {} failed ({why}); used extractive",
                    core[0],
                    compressor.name()
                ));
                (
                    fallback.schema(core, &views, corpus)?,
                    format!("extractive (fallback from {})", compressor.name()),
                )
            }
        };
        let mut members: Vec<MemberRef> = ms.iter().map(|&i| cands[i].key).collect();
        members.sort();
        let conversation = if cfg.schemas_per_conversation {
            scope.clone()
        } else {
            let convs: HashSet<&Option<String>> =
                ms.iter().map(|&i| &cands[i].conversation).collect();
            (convs.len() == 1)
                .then(|| cands[ms[0]].conversation.clone())
                .flatten()
        };
        out.push(SchemaPlan {
            members,
            conversation,
            draft,
            backend,
        });
        job.report("schemas", i as u64 + 1, groups.len() as u64);
    }
    Ok(out)
}

/// What counts as one sitting of a conversation: its session, or without one its day.
fn sitting(session: &Option<String>, occurred_at: Option<i64>) -> Option<String> {
    session
        .clone()
        .or_else(|| occurred_at.map(|t| format!("day {}", t.div_euclid(DAY_MS as i64))))
}

/// A summary's grouping terms: its key concepts and themes, lower-case, distinct.
fn terms(concepts: &[String], themes: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in concepts.iter().chain(themes) {
        let t = t.to_lowercase();
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

pub struct ForgetPlan {
    pub changes: Vec<FieldChange>,
    pub forgotten: Vec<i64>,
    pub decayed: usize,
    pub state_changes: usize,
    /// Memories neither archived nor forgotten when the cycle started (pinned ones too).
    pub live: usize,
    /// Live memories this plan archives or forgets.
    pub lost: usize,
}

/// The lifecycle state for an age in days.
pub fn lifecycle(age_days: f64, cfg: &SleepConfig) -> State {
    if age_days >= cfg.archive_after_days {
        State::Archived
    } else if age_days >= cfg.cold_after_days {
        State::Cold
    } else if age_days >= cfg.warm_after_days {
        State::Warm
    } else {
        State::Active
    }
}

/// What the forget phase decides for one memory at `now`: its importance after decay
/// (`None` when it does not decay by at least 0.001) and its lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    pub importance: Option<f64>,
    pub state: State,
    /// The state is `forgotten` by the forgetting rule.
    pub forgotten: bool,
}

/// Phase 4's rules for one memory, at `now`, with the last decay at `last_decay_at`:
/// importance decay (episodes and summaries, by time in the store since the last decay,
/// as `cfg.decay` says), lifecycle by age (every kind), and forgetting of a low-value
/// `consolidated` episode. `words` counts its content words (asked only when every other
/// condition holds: it is the costly one). `None` for a memory the phase leaves alone
/// (forgotten already, or pinned). The what-if simulator asks the same at later instants.
pub fn forget_one(
    m: &Memory,
    now: i64,
    last_decay_at: Option<i64>,
    consolidated: bool,
    cfg: &SleepConfig,
    words: impl FnOnce() -> usize,
) -> Option<Verdict> {
    if m.state == State::Forgotten || m.pinned {
        return None;
    }
    let mut importance = m.importance;
    let mut decayed_to = None;
    if matches!(m.kind, Kind::Episode | Kind::Summary) && importance > cfg.importance_floor {
        let since = last_decay_at.unwrap_or(m.created_at).max(m.created_at);
        let factor = cfg.decay.factor(
            days(since - m.created_at),
            days(now - since).max(0.0),
            cfg.importance_half_life_days,
            cfg.decay_alpha,
        );
        let decayed = cfg.importance_floor + (importance - cfg.importance_floor) * factor;
        if importance - decayed >= 0.001 {
            decayed_to = Some(decayed);
            importance = decayed;
        }
    }
    let mut state = lifecycle(age_days(m, now), cfg);
    let forgotten = m.kind == Kind::Episode
        && consolidated
        && matches!(state, State::Cold | State::Archived)
        && m.access_count == 0
        && importance < cfg.forget_importance
        && words() <= cfg.forget_max_words;
    if forgotten {
        state = State::Forgotten;
    }
    Some(Verdict {
        importance: decayed_to,
        state,
        forgotten,
    })
}

/// A memory's age at `now` in days, as the lifecycle measures it: from when it occurred
/// (or was stored), never negative.
pub fn age_days(m: &Memory, now: i64) -> f64 {
    days(now - m.occurred_at.unwrap_or(m.created_at)).max(0.0)
}

/// The content words the forgetting rule counts.
pub fn content_words(m: &Memory) -> usize {
    text::content_stems(&m.text).len()
}

/// [`content_words`], counted no further than one past `limit`: the forgetting rule only
/// asks whether the count is at most a limit, and most texts pass any limit in a few words.
pub fn content_words_up_to(m: &Memory, limit: usize) -> usize {
    text::content_words_up_to(&m.text, limit.saturating_add(1))
}

/// Phase 4: [`forget_one`] for every memory of the snapshot, as field changes.
pub fn forget(snap: &Snapshot, newly_consolidated: &HashSet<i64>, cfg: &SleepConfig) -> ForgetPlan {
    let mut plan = ForgetPlan {
        changes: Vec::new(),
        forgotten: Vec::new(),
        decayed: 0,
        state_changes: 0,
        live: 0,
        lost: 0,
    };
    for m in &snap.memories {
        if m.state == State::Forgotten {
            continue;
        }
        let live = !matches!(m.state, State::Archived);
        if live {
            plan.live += 1;
        }
        let consolidated = snap.consolidated.contains(&m.id) || newly_consolidated.contains(&m.id);
        let Some(v) = forget_one(m, snap.now, snap.last_decay_at, consolidated, cfg, || {
            content_words(m)
        }) else {
            continue;
        };
        if let Some(decayed) = v.importance {
            plan.changes.push(FieldChange {
                memory_id: m.id,
                field: "importance".into(),
                old: m.importance.into(),
                new: decayed.into(),
            });
            plan.decayed += 1;
        }
        if v.forgotten {
            plan.forgotten.push(m.id);
        }
        if v.state != m.state {
            if live && matches!(v.state, State::Archived | State::Forgotten) {
                plan.lost += 1;
            }
            plan.changes.push(FieldChange {
                memory_id: m.id,
                field: "state".into(),
                old: m.state.as_str().into(),
                new: v.state.as_str().into(),
            });
            plan.state_changes += 1;
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Source, W5H1};

    #[test]
    fn a_capped_word_count_answers_the_forgetting_rule_as_the_full_count_does() {
        for text in [
            "",
            "ok",
            "Wow nice",
            "I won't go to the lighthouse's garden with Maya's kids",
            "ferries, lighthouses, harbours, pottery glazes and mountain trails",
        ] {
            let m = mem(1, text, "s", 0.0, 0.5);
            let full = content_words(&m);
            for limit in 0..8 {
                let capped = content_words_up_to(&m, limit);
                assert_eq!(capped, full.min(limit + 1), "{text:?} at {limit}");
                assert_eq!(capped <= limit, full <= limit, "{text:?} at {limit}");
            }
        }
    }

    fn mem(id: i64, text: &str, session: &str, at_days: f64, importance: f64) -> Memory {
        Memory {
            id,
            kind: Kind::Episode,
            text: text.into(),
            w5h1: W5H1 {
                who: Some(if id % 2 == 0 { "Ann" } else { "Bob" }.into()),
                ..Default::default()
            },
            conversation: Some("c".into()),
            session: Some(session.into()),
            occurred_at: Some((at_days * DAY_MS) as i64),
            created_at: 0,
            updated_at: 0,
            importance,
            novelty: 0.5,
            access_count: 0,
            last_accessed: None,
            state: State::Active,
            tags: vec![],
            source: Source::UserInput,
            l_score: 1.0,
            metadata: serde_json::json!({}),
            details: Details::None,
            deleted_at: None,
            tokens: None,
            pinned: false,
            valid_from: None,
            valid_to: None,
            superseded_by: None,
        }
    }

    fn snap(memories: Vec<Memory>, now_days: f64) -> Snapshot {
        Snapshot {
            now: (now_days * DAY_MS) as i64,
            memories,
            consolidated: HashSet::new(),
            in_schema: HashSet::new(),
            last_decay_at: None,
        }
    }

    #[test]
    fn replay_prefers_recent_important_episodes_and_skips_consolidated() {
        let mut s = snap(
            vec![
                mem(1, "old and dull", "s1", 0.0, 0.2),
                mem(2, "recent and important", "s1", 99.0, 0.9),
                mem(3, "consolidated already", "s1", 99.0, 0.9),
            ],
            100.0,
        );
        s.consolidated.insert(3);
        let cfg = SleepConfig {
            max_replay: 1,
            ..Default::default()
        };
        let r = replay(&s, &cfg);
        assert_eq!(r.candidates, 2);
        assert_eq!(r.selected, vec![2]);
        assert_eq!(r.changes[0].new, serde_json::json!(s.now));
    }

    #[test]
    fn batches_follow_sessions_in_even_windows() {
        let mut ms: Vec<Memory> = (1..=7).map(|i| mem(i, "x", "s1", i as f64, 0.5)).collect();
        ms.push(mem(8, "y", "s2", 1.0, 0.5));
        let s = snap(ms, 10.0);
        let cfg = SleepConfig {
            batch_size: 4,
            min_batch: 2,
            ..Default::default()
        };
        let (b, waiting) = batches(&s, &[8, 7, 6, 5, 4, 3, 2, 1], &cfg);
        assert_eq!(b, vec![vec![1, 2, 3, 4], vec![5, 6, 7]]);
        assert_eq!(waiting, 1);
    }

    #[test]
    fn forgetting_takes_only_old_short_unused_consolidated_episodes() {
        let mut ms = vec![
            mem(1, "Thanks!", "s1", 0.0, 0.3),
            mem(
                2,
                "I adopted a greyhound called Pixel from the shelter.",
                "s1",
                0.0,
                0.3,
            ),
            mem(3, "Cool!", "s1", 0.0, 0.3),
            mem(4, "Wow nice", "s1", 95.0, 0.3),
        ];
        ms[2].access_count = 1;
        let s = snap(ms, 100.0);
        let consolidated: HashSet<i64> = [1, 2, 3, 4].into();
        let p = forget(&s, &consolidated, &SleepConfig::default());
        assert_eq!(p.forgotten, vec![1]);
        let states: Vec<(i64, String)> = p
            .changes
            .iter()
            .filter(|c| c.field == "state")
            .map(|c| (c.memory_id, c.new.as_str().unwrap().to_string()))
            .collect();
        assert_eq!(
            states,
            vec![
                (1, "forgotten".into()),
                (2, "archived".into()),
                (3, "archived".into())
            ]
        );
        // Importance halves after one half-life in the store (above the floor).
        let i = p
            .changes
            .iter()
            .find(|c| c.memory_id == 2 && c.field == "importance")
            .unwrap();
        let expected = 0.05 + 0.25 * 0.5f64.powf(100.0 / 30.0);
        assert!((i.new.as_f64().unwrap() - expected).abs() < 1e-12);
    }
}
