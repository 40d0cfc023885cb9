//! The façade's time travel: a memory, a listing and the store's timeline as they were at
//! an instant (see `crate::timetravel`; a search as of an instant is `SearchQuery::as_of`).

use super::{MemoryDetail, Page, Somna};
use crate::memory::State;
use crate::store::ListQuery;
use crate::timetravel::{state_steps, AsOf};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Adds within this long of each other are one import on the timeline (an import's batches
/// come seconds apart; two files imported a minute apart are two marks).
const IMPORT_GAP_MS: i64 = 10_000;

/// A mark on the store's timeline: an import (a burst of added memories) or an operation
/// (a sleep cycle, a curation, an undo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Tick {
    /// Unix ms.
    pub at: i64,
    /// "import", "sleep", "curation" or "undo".
    pub kind: String,
    /// What happened, for a tooltip ("412 memories added by import", "sleep cycle 3").
    pub label: String,
}

/// The store's span in time and what happened in it, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Timeline {
    /// First and last recorded change (Unix ms); `None` for an empty store.
    pub first: Option<i64>,
    pub last: Option<i64>,
    pub ticks: Vec<Tick>,
}

/// Every memory's visibility over time, so a view can scrub without asking at each step.
/// `ids[i]`'s steps are `at[offsets[i]..offsets[i + 1]]` with the state from that instant
/// on in `states` (0 active, 1 warm, 2 cold, 3 archived, as the app's point buffer codes
/// them; -1 hidden: deleted, forgotten or gone).
/// Before its first step a memory did not exist.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct VisibilitySteps {
    pub ids: Vec<i64>,
    pub offsets: Vec<u32>,
    pub at: Vec<i64>,
    pub states: Vec<i8>,
}

impl VisibilitySteps {
    /// Memory `i`'s state code at `t` (`None`: it did not exist, or was hidden).
    pub fn state_at(&self, i: usize, t: i64) -> Option<i8> {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        let k = self.at[a..b].partition_point(|x| *x <= t);
        (k > 0).then(|| self.states[a + k - 1]).filter(|s| *s >= 0)
    }
}

impl Somna {
    /// Memory `id` as it was at `at`: its fields then, the links that existed then, its
    /// history up to then. Not found when it did not exist then.
    pub fn get_as_of(&self, id: i64, at: i64) -> Result<MemoryDetail> {
        let store = self.store();
        let read = store.read();
        let then = AsOf::read(&read, at)?;
        let memory = then
            .memory(id, read.get_memory(id)?)
            .ok_or(Error::NotFound { id })?;
        let exists = |m: i64| -> Result<bool> { Ok(then.memory(m, read.get_memory(m)?).is_some()) };
        let mut links = Vec::new();
        for l in read.links_of(id)? {
            if l.created_at <= at && exists(if l.src == id { l.dst } else { l.src })? {
                links.push(l);
            }
        }
        let mut history = read.history(id)?;
        history.retain(|h| h.created_at <= at);
        Ok(MemoryDetail {
            memory,
            links,
            history,
            provenance: super::memories::provenance(&read, id, |m| then.memory(m.id, Some(m)))?,
            as_of: Some(at),
        })
    }

    /// A page of the listing `q` as it was at `at`, with the total then.
    pub fn list_as_of(&self, q: &ListQuery, at: i64) -> Result<Page> {
        q.filter.check_as_of()?;
        let store = self.store();
        let read = store.read();
        let then = AsOf::read(&read, at)?;
        let members = match q.filter.cluster {
            Some(c) => read.cluster_member_ids(c)?,
            None => std::collections::HashSet::new(),
        };
        let memories = then.list(
            q,
            |n| {
                let q = ListQuery {
                    offset: 0,
                    limit: n,
                    ..q.clone()
                };
                read.list_memories_created_by(&q, Some(at))
            },
            |id| members.contains(&id),
        )?;
        // The total then: today's over the memories created by then, less the changed
        // memories it counts, plus those the filter passed then.
        let in_cluster = |id: i64| q.filter.cluster.is_none() || members.contains(&id);
        let counted_now = then
            .today
            .values()
            .filter(|m| q.filter.matches(m) && in_cluster(m.id))
            .count() as u64;
        let counted_then = then
            .then
            .values()
            .flatten()
            .filter(|m| q.filter.matches(m) && in_cluster(m.id))
            .count() as u64;
        Ok(Page {
            total: read.count_memories_created_by(&q.filter, Some(at))? - counted_now
                + counted_then,
            offset: q.offset,
            memories,
            as_of: Some(at),
        })
    }

    /// The store's span and its imports and operations, for a time scrubber.
    pub fn timeline(&self) -> Result<Timeline> {
        let store = self.store();
        let read = store.read();
        let Some((first, last)) = read.history_span()? else {
            return Ok(Timeline::default());
        };
        let mut ticks = Vec::new();
        // Adds of imports and agents (an import's summaries included); what cycles and
        // curations add is marked by their own ticks.
        let mut burst: Option<(i64, i64, usize, Vec<String>)> = None;
        let flush = |b: Option<(i64, i64, usize, Vec<String>)>, ticks: &mut Vec<Tick>| {
            if let Some((start, _, n, actors)) = b {
                ticks.push(Tick {
                    at: start,
                    kind: "import".into(),
                    label: format!("{n} memories added ({})", actors.join(", ")),
                });
            }
        };
        let logged = |actor: &str| {
            ["sleep:", "curate:", "undo:"]
                .iter()
                .any(|p| actor.starts_with(p))
        };
        for (at, actor) in read.add_times()? {
            if logged(&actor) {
                continue;
            }
            match &mut burst {
                Some((_, end, n, actors)) if at - *end <= IMPORT_GAP_MS => {
                    (*end, *n) = (at, *n + 1);
                    if !actors.contains(&actor) {
                        actors.push(actor);
                    }
                }
                _ => {
                    flush(burst.take(), &mut ticks);
                    burst = Some((at, at, 1, vec![actor]));
                }
            }
        }
        flush(burst, &mut ticks);
        for op in read.operations_since(i64::MIN)? {
            let (kind, label) = if op.op == "sleep" {
                ("sleep", format!("sleep cycle {} ({})", op.id, op.status))
            } else if op.op == super::settings::OP {
                (
                    "curation",
                    format!("settings change {} by {}", op.id, op.trigger),
                )
            } else {
                ("curation", format!("curation {}: {}", op.id, op.op))
            };
            ticks.push(Tick {
                at: op.ended_at.unwrap_or(op.started_at),
                kind: kind.into(),
                label,
            });
            if let Some(u) = op.undone_at {
                ticks.push(Tick {
                    at: u,
                    kind: "undo".into(),
                    label: format!("{} {} undone", op.op, op.id),
                });
            }
        }
        ticks.sort_by_key(|t| t.at);
        Ok(Timeline {
            first: Some(first),
            last: Some(last),
            ticks,
        })
    }

    /// Every memory now in the store (and every one removed since, which a view cannot
    /// place) with its visibility over time, for scrubbing.
    pub fn visibility_steps(&self) -> Result<VisibilitySteps> {
        let store = self.store();
        let read = store.read();
        let now = read.all_memories()?;
        let kept: std::collections::HashSet<i64> = now.iter().map(|m| m.id).collect();
        let steps = state_steps(
            now,
            &read.history_since(i64::MIN)?,
            &read.operations_since(i64::MIN)?,
        );
        let mut ids: Vec<i64> = steps
            .keys()
            .copied()
            .filter(|id| kept.contains(id))
            .collect();
        ids.sort_unstable();
        let mut out = VisibilitySteps {
            offsets: vec![0],
            ..Default::default()
        };
        for id in ids {
            for (t, s) in &steps[&id] {
                out.at.push(*t);
                out.states.push(match s {
                    Some(State::Active) => 0,
                    Some(State::Warm) => 1,
                    Some(State::Cold) => 2,
                    Some(State::Archived) => 3,
                    _ => -1,
                });
            }
            out.ids.push(id);
            out.offsets.push(out.at.len() as u32);
        }
        Ok(out)
    }
}
