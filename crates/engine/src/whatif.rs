//! The what-if simulator: what a change of settings (decay model and half-life, lifecycle
//! and forgetting thresholds, fusion weights) would do, computed without writing anything.
//!
//! The lifecycle part is pure over a sleep snapshot and runs the forget phase's own rules
//! ([`plan::forget_one`]) at later instants, once with the saved settings ("before") and
//! once with the proposed ones ("after"):
//! - **the next cycle**: the state changes the next cycle's forget phase would make, with the
//!   episodes that cycle consolidates counted as consolidated (as the real phase counts
//!   them), so the prediction equals what the cycle does;
//! - **later**: the first instant each memory would change state if a cycle ran then. A
//!   memory's state only moves one way as time passes (its age grows, its importance
//!   decays, forgotten is final). So a memory not forgotten at the horizon was never
//!   forgotten before it: its state is its age's alone, which changes exactly at the
//!   lifecycle's thresholds (warm, cold, archived after so many days), computed to the
//!   millisecond. Only a memory forgotten by the horizon needs a search: each of its
//!   transitions is found by bisection to the minute between the next cycle and the
//!   horizon.
//!
//! What it assumes about the future: nothing new is added, retrieved or consolidated after
//! the next cycle, and cycles run (a change happens at the first cycle at or after the
//! instant given). Decay does not depend on how often cycles run (see
//! [`crate::sleep::DecayModel`]).
//!
//! The search part (the façade's) ranks the golden queries and the current search over the
//! store as the next cycle would leave it under each side's settings, with each side's
//! fusion weights ([`crate::retrieve::overlay`]).

use crate::memory::{Kind, Memory, State};
use crate::retrieve::overlay::Overlay;
use crate::retrieve::SearchResponse;
use crate::settings::{Settings, SettingsPatch};
use crate::sleep::plan::{self, Snapshot};
use crate::sleep::SleepConfig;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};

const DAY_MS: i64 = 86_400_000;
/// Transitions are placed to this precision.
const STEP_MS: i64 = 60_000;

/// What to simulate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct WhatIfRequest {
    /// The settings to try, over the saved ones.
    pub patch: SettingsPatch,
    /// A search to rank both ways (the X-ray's current query).
    pub query: Option<String>,
    /// How many hits of that search (1 to 200, default 10).
    pub k: Option<usize>,
    /// How far ahead to follow the lifecycle, in days (1 to 3650, default 180).
    pub horizon_days: Option<f64>,
    /// How many transitions and next-cycle changes to list (1 to 100000, default 200);
    /// the totals count them all.
    pub limit: Option<usize>,
    /// "Now" (Unix ms); left out, the clock. Tests and replays set it.
    pub now_ms: Option<i64>,
}

pub const DEFAULT_HORIZON_DAYS: f64 = 180.0;
pub const DEFAULT_LIMIT: usize = 200;

impl WhatIfRequest {
    pub fn horizon_days(&self) -> Result<f64> {
        let h = self.horizon_days.unwrap_or(DEFAULT_HORIZON_DAYS);
        if !(h.is_finite() && (1.0..=3650.0).contains(&h)) {
            return Err(Error::InvalidInput(format!(
                "horizon_days must be 1 to 3650 (got {h})"
            )));
        }
        Ok(h)
    }

    pub fn limit(&self) -> Result<usize> {
        let n = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=100_000).contains(&n) {
            return Err(Error::InvalidInput(format!(
                "limit must be 1 to 100000 (got {n})"
            )));
        }
        Ok(n)
    }

    pub fn k(&self) -> Result<usize> {
        let k = self.k.unwrap_or(10);
        if !(1..=200).contains(&k) {
            return Err(Error::InvalidInput(format!("k must be 1 to 200 (got {k})")));
        }
        Ok(k)
    }
}

/// One memory's state change at the next cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StateChange {
    pub memory_id: i64,
    pub from: State,
    pub to: State,
}

/// A memory reaching a state, and when, under each side's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Transition {
    pub memory_id: i64,
    pub kind: Kind,
    /// The memory's text, cut to 120 characters.
    pub text: String,
    /// The state it leaves (with the proposed settings, else the saved ones).
    pub from: State,
    pub to: State,
    /// The first instant (Unix ms) a cycle would make it with the proposed settings; `None`:
    /// not within the horizon.
    pub after_at: Option<i64>,
    /// The same with the saved settings.
    pub before_at: Option<i64>,
}

impl Transition {
    /// The proposed settings move it (make it, prevent it, or make it another day).
    pub fn differs(&self) -> bool {
        match (self.after_at, self.before_at) {
            (Some(a), Some(b)) => (a - b).abs() >= DAY_MS,
            _ => true,
        }
    }
}

/// Transitions in one stretch of time, with each side's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Bucket {
    /// Days from now; the first bucket is the next cycle (0 to 0).
    pub from_day: f64,
    pub to_day: f64,
    pub before: u32,
    pub after: u32,
}

/// The lifecycle part of a simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LifecycleWhatIf {
    /// Memories simulated (not deleted, not forgotten, not pinned).
    pub simulated: usize,
    /// The state changes the next cycle would make with the proposed settings (the first
    /// `limit`, by memory id).
    pub next_cycle: Vec<StateChange>,
    pub next_cycle_after: usize,
    pub next_cycle_before: usize,
    /// Transitions within the horizon, those the proposed settings move first, then by time
    /// (the first `limit`).
    pub transitions: Vec<Transition>,
    pub transitions_after: usize,
    pub transitions_before: usize,
    /// Transitions the proposed settings make, prevent or move by a day or more.
    pub differing: usize,
    /// Counts over time: the next cycle, then even stretches up to the horizon.
    pub series: Vec<Bucket>,
    /// How many memories are in each state at the horizon, with each side's settings.
    pub at_horizon_after: BTreeMap<String, usize>,
    pub at_horizon_before: BTreeMap<String, usize>,
}

/// A golden query ranked both ways.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GoldenWhatIf {
    pub query_id: i64,
    pub query: String,
    pub k: usize,
    pub expected: Vec<i64>,
    /// The 1-based rank of each expected memory (`None`: not in the top k).
    pub before_ranks: Vec<Option<usize>>,
    pub after_ranks: Vec<Option<usize>>,
    pub before_recall: f64,
    pub after_recall: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GoldenSummary {
    pub queries: Vec<GoldenWhatIf>,
    /// Mean R@k over the queries (0 without queries).
    pub mean_recall_before: f64,
    pub mean_recall_after: f64,
    /// Queries whose R@k rises, falls.
    pub improved: usize,
    pub regressed: usize,
}

/// The current search ranked both ways (full responses, for the X-ray).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchWhatIf {
    pub before: SearchResponse,
    pub after: SearchResponse,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WhatIfTimings {
    pub snapshot_ms: f64,
    pub lifecycle_ms: f64,
    /// Embedding the queries in one batch (about 0 when every one was embedded lately).
    #[serde(default)]
    pub embed_ms: f64,
    /// Ranking the golden queries and the current search both ways, on two threads.
    pub golden_ms: f64,
    /// Of `golden_ms`, the current search's two rankings (beside the golden queries').
    pub search_ms: f64,
    pub total_ms: f64,
}

/// What the proposed settings would do, beside the saved ones. Nothing was written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WhatIfReport {
    pub now: i64,
    pub horizon_days: f64,
    /// The saved settings.
    pub before: Settings,
    /// The saved settings with the patch.
    pub after: Settings,
    pub lifecycle: LifecycleWhatIf,
    pub golden: GoldenSummary,
    pub search: Option<SearchWhatIf>,
    pub timings: WhatIfTimings,
}

/// One side's prediction for every memory.
#[derive(Clone)]
pub struct SidePrediction {
    /// (memory index in the snapshot, from, to, at) in no particular order.
    pub transitions: Vec<(usize, State, State, i64)>,
    /// The store as the next cycle would leave it.
    pub overlay: Overlay,
    /// Memory index → state at the horizon (simulated memories only).
    pub at_horizon: Vec<Option<State>>,
}

/// The episodes the next cycle consolidates under `cfg` (its replay and batching), besides
/// those already consolidated.
pub fn next_consolidated(snap: &Snapshot, cfg: &SleepConfig) -> HashSet<i64> {
    let replay = plan::replay(snap, cfg);
    let (batches, _) = plan::batches(snap, &replay.selected, cfg);
    batches.into_iter().flatten().collect()
}

/// Each memory's content-word count for the forgetting rule, counted once for both sides
/// (which may be predicted on two threads at once) and only as far as the larger of their
/// limits needs ([`plan::content_words_up_to`]).
pub struct WordCounts {
    limit: usize,
    /// The count, or [`WordCounts::UNKNOWN`] until counted.
    counts: Vec<AtomicU32>,
}

impl WordCounts {
    const UNKNOWN: u32 = u32::MAX;

    /// For the memories of `snap` and sides whose `forget_max_words` are `limits`.
    pub fn new(snap: &Snapshot, limits: impl IntoIterator<Item = usize>) -> Self {
        WordCounts {
            limit: limits.into_iter().max().unwrap_or(0),
            counts: (0..snap.memories.len())
                .map(|_| AtomicU32::new(Self::UNKNOWN))
                .collect(),
        }
    }

    /// What `forget_one` compares with a limit of at most `self.limit`: the exact count up
    /// to it, one more past it. Two threads asking at once may both count; they agree.
    fn of(&self, i: usize, m: &Memory) -> usize {
        match self.counts[i].load(Ordering::Relaxed) {
            Self::UNKNOWN => {
                let n = plan::content_words_up_to(m, self.limit);
                // A count past u32's range is past any limit too.
                let kept = u32::try_from(n).unwrap_or(Self::UNKNOWN - 1);
                self.counts[i].store(kept, Ordering::Relaxed);
                n
            }
            n => n as usize,
        }
    }
}

/// Follows every memory of `snap` from the next cycle (at `snap.now`) to `horizon` days
/// later under `cfg`. `words` keeps each memory's content-word count across calls.
pub fn predict(
    snap: &Snapshot,
    cfg: &SleepConfig,
    horizon_days: f64,
    words: &WordCounts,
) -> SidePrediction {
    let newly = next_consolidated(snap, cfg);
    let end = snap.now + (horizon_days * DAY_MS as f64) as i64;
    let mut out = SidePrediction {
        transitions: Vec::new(),
        overlay: Overlay::default(),
        at_horizon: vec![None; snap.memories.len()],
    };
    for (i, m) in snap.memories.iter().enumerate() {
        let consolidated = snap.consolidated.contains(&m.id) || newly.contains(&m.id);
        let count = || {
            if cfg.forget_max_words <= words.limit {
                words.of(i, m)
            } else {
                plan::content_words(m)
            }
        };
        let at = |t: i64| plan::forget_one(m, t, snap.last_decay_at, consolidated, cfg, count);
        let Some(first) = at(snap.now) else {
            continue;
        };
        if first.state != m.state || first.importance.is_some() {
            if first.state == State::Forgotten {
                out.overlay.hidden.insert(m.id);
            }
            out.overlay.fields.insert(
                m.id,
                (first.state, first.importance.unwrap_or(m.importance)),
            );
        }
        if first.state != m.state {
            out.transitions.push((i, m.state, first.state, snap.now));
        }
        let state_at = |t: i64| at(t).map_or(first.state, |v| v.state);
        let last = state_at(end);
        out.at_horizon[i] = Some(last);
        let (mut cur, mut lo) = (first.state, snap.now);
        if last != State::Forgotten {
            // Never forgotten before the horizon either: the age alone moves the state.
            for t in age_thresholds(m, snap.now, end, cfg) {
                let next = state_at(t);
                if next != cur {
                    out.transitions.push((i, cur, next, t));
                    cur = next;
                }
            }
            continue;
        }
        // At most one step per state: the order active < warm < cold < archived, with
        // forgotten final, only moves forward.
        for _ in 0..State::ALL.len() {
            if cur == last {
                break;
            }
            let (mut a, mut b) = (lo, end);
            while b - a > STEP_MS {
                let mid = a + (b - a) / 2;
                if state_at(mid) == cur {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            let next = state_at(b);
            out.transitions.push((i, cur, next, b));
            (cur, lo) = (next, b);
        }
    }
    out
}

/// The instants in `(now, end]` at which `m` reaches the age of one of the lifecycle's
/// thresholds (the first millisecond at which [`plan::age_days`] is at least it), in order.
fn age_thresholds(m: &Memory, now: i64, end: i64, cfg: &SleepConfig) -> Vec<i64> {
    let occurred = m.occurred_at.unwrap_or(m.created_at);
    let mut out: Vec<i64> = [
        cfg.warm_after_days,
        cfg.cold_after_days,
        cfg.archive_after_days,
    ]
    .into_iter()
    .filter_map(|days| {
        // An age of zero or less is reached from the start: it is in the state at `now`.
        // (A NaN makes the guess NaN, not finite.)
        let guess = occurred as f64 + days * DAY_MS as f64;
        if days <= 0.0
            || !guess.is_finite()
            || guess <= now as f64 - 1.0
            || guess > end as f64 + 1.0
        {
            return None;
        }
        // Rounding: step to the exact first millisecond by the lifecycle's own measure.
        let mut t = guess.ceil() as i64;
        while plan::age_days(m, t - 1) >= days {
            t -= 1;
        }
        while plan::age_days(m, t) < days {
            t += 1;
        }
        (t > now && t <= end).then_some(t)
    })
    .collect();
    out.sort_unstable();
    out
}

/// The lifecycle report from both sides' predictions.
pub fn compare(
    snap: &Snapshot,
    before: &SidePrediction,
    after: &SidePrediction,
    horizon_days: f64,
    limit: usize,
) -> LifecycleWhatIf {
    let now = snap.now;
    let simulated = after.at_horizon.iter().filter(|s| s.is_some()).count();
    let next = |p: &SidePrediction| -> Vec<StateChange> {
        let mut v: Vec<StateChange> = p
            .transitions
            .iter()
            .filter(|t| t.3 == now)
            .map(|&(i, from, to, _)| StateChange {
                memory_id: snap.memories[i].id,
                from,
                to,
            })
            .collect();
        v.sort_by_key(|c| c.memory_id);
        v
    };
    let next_after = next(after);
    let next_before = next(before);
    // One row per (memory, state reached), with each side's instant, by memory and then
    // the state's name. Each side lists a memory's transitions together, memories in
    // order, so the two lists are merged in one pass.
    let (after_list, before_list) = (&after.transitions, &before.transitions);
    let mut all: Vec<(usize, Transition)> =
        Vec::with_capacity(after_list.len().max(before_list.len()));
    let (mut a, mut b) = (0, 0);
    let mut group: Vec<Transition> = Vec::new();
    while let Some(i) = [after_list.get(a), before_list.get(b)]
        .into_iter()
        .flatten()
        .map(|t| t.0)
        .min()
    {
        let m = &snap.memories[i];
        let mut add = |&(_, from, to, at): &(usize, State, State, i64), is_after: bool| {
            let row = match group.iter().position(|t| t.to == to) {
                Some(k) => &mut group[k],
                None => {
                    group.push(Transition {
                        memory_id: m.id,
                        kind: m.kind,
                        // Filled for the rows the report keeps (a few of up to hundreds of
                        // thousands): see below.
                        text: String::new(),
                        from,
                        to,
                        after_at: None,
                        before_at: None,
                    });
                    group.last_mut().expect("just pushed")
                }
            };
            if is_after {
                row.after_at = Some(at);
                row.from = from;
            } else {
                row.before_at = Some(at);
            }
        };
        for t in after_list[a..].iter().take_while(|t| t.0 == i) {
            add(t, true);
            a += 1;
        }
        for t in before_list[b..].iter().take_while(|t| t.0 == i) {
            add(t, false);
            b += 1;
        }
        group.sort_by_key(|t| t.to.as_str());
        all.extend(group.drain(..).map(|t| (i, t)));
    }
    let differing = all.iter().filter(|(_, t)| t.differs()).count();
    // The first `limit` rows: those the settings move first, soonest first. The position
    // breaks the last ties, so only the rows kept need sorting.
    let key = |(n, (_, t)): &(usize, (usize, Transition))| {
        (
            !t.differs(),
            t.after_at.or(t.before_at).unwrap_or(i64::MAX),
            t.memory_id,
            *n,
        )
    };
    let mut all: Vec<(usize, (usize, Transition))> = all.into_iter().enumerate().collect();
    if limit < all.len() {
        all.select_nth_unstable_by_key(limit, key);
        all.truncate(limit);
    }
    all.sort_unstable_by_key(key);
    let all = all.into_iter().map(|(_, row)| row);
    let kept = all.into_iter().map(|(i, mut t)| {
        t.text = preview(&snap.memories[i]);
        t
    });
    LifecycleWhatIf {
        simulated,
        next_cycle_after: next_after.len(),
        next_cycle_before: next_before.len(),
        next_cycle: next_after.into_iter().take(limit).collect(),
        transitions_after: after.transitions.len(),
        transitions_before: before.transitions.len(),
        differing,
        transitions: kept.collect(),
        series: series(now, before, after, horizon_days),
        at_horizon_after: tally(&after.at_horizon),
        at_horizon_before: tally(&before.at_horizon),
    }
}

/// Stretches of the horizon: the next cycle, then at most 60 even stretches of whole days.
fn series(now: i64, before: &SidePrediction, after: &SidePrediction, horizon: f64) -> Vec<Bucket> {
    let width = (horizon / 60.0).ceil().max(1.0);
    let n = (horizon / width).ceil() as usize;
    let mut out = vec![Bucket {
        from_day: 0.0,
        to_day: 0.0,
        before: 0,
        after: 0,
    }];
    out.extend((0..n).map(|b| Bucket {
        from_day: b as f64 * width,
        to_day: ((b + 1) as f64 * width).min(horizon),
        before: 0,
        after: 0,
    }));
    let slot = |at: i64| -> usize {
        if at == now {
            0
        } else {
            let d = (at - now) as f64 / DAY_MS as f64;
            1 + ((d / width) as usize).min(n - 1)
        }
    };
    for t in &before.transitions {
        out[slot(t.3)].before += 1;
    }
    for t in &after.transitions {
        out[slot(t.3)].after += 1;
    }
    out
}

fn tally(states: &[Option<State>]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for s in states.iter().flatten() {
        *out.entry(s.as_str().to_string()).or_default() += 1;
    }
    out
}

fn preview(m: &Memory) -> String {
    let mut t: String = m.text.chars().take(120).collect();
    if m.text.chars().count() > 120 {
        t.push('…');
    }
    t
}

/// The 1-based rank of each expected id in `ranked` (its top `k`), and R@k.
pub fn ranks(expected: &[i64], ranked: &[i64], k: usize) -> (Vec<Option<usize>>, f64) {
    let top = &ranked[..ranked.len().min(k)];
    let r: Vec<Option<usize>> = expected
        .iter()
        .map(|e| top.iter().position(|id| id == e).map(|p| p + 1))
        .collect();
    let found = r.iter().filter(|x| x.is_some()).count();
    let recall = if expected.is_empty() {
        0.0
    } else {
        found as f64 / expected.len() as f64
    };
    (r, recall)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Details, Source, W5H1};

    fn mem(id: i64, text: &str, age_days: f64, importance: f64, now: i64) -> Memory {
        let at = now - (age_days * DAY_MS as f64) as i64;
        Memory {
            id,
            kind: Kind::Episode,
            text: text.into(),
            w5h1: W5H1::default(),
            conversation: Some("c".into()),
            session: Some("s".into()),
            occurred_at: Some(at),
            created_at: at,
            updated_at: at,
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

    const NOW: i64 = 1_735_689_600_000;

    fn snap(memories: Vec<Memory>, consolidated: &[i64]) -> Snapshot {
        Snapshot {
            now: NOW,
            memories,
            consolidated: consolidated.iter().copied().collect(),
            in_schema: HashSet::new(),
            last_decay_at: None,
        }
    }

    fn run(s: &Snapshot, cfg: &SleepConfig, horizon: f64) -> SidePrediction {
        predict(s, cfg, horizon, &WordCounts::new(s, [cfg.forget_max_words]))
    }

    #[test]
    fn each_lifecycle_step_is_placed_at_the_age_it_is_reached() {
        let s = snap(
            vec![mem(1, "a long memory about pottery glazes", 1.0, 0.9, NOW)],
            &[],
        );
        let p = run(&s, &SleepConfig::default(), 100.0);
        let steps: Vec<(State, State, f64)> = p
            .transitions
            .iter()
            .map(|t| (t.1, t.2, (t.3 - NOW) as f64 / DAY_MS as f64))
            .collect();
        assert_eq!(steps.len(), 3, "{steps:?}");
        for ((from, to, day), (f, t, d)) in steps.iter().zip([
            (State::Active, State::Warm, 6.0),
            (State::Warm, State::Cold, 29.0),
            (State::Cold, State::Archived, 89.0),
        ]) {
            assert_eq!((*from, *to), (f, t));
            assert!((day - d).abs() < 2.0 / 1440.0, "{day} vs {d}");
        }
        assert_eq!(p.at_horizon[0], Some(State::Archived));
    }

    #[test]
    fn age_steps_are_placed_to_the_millisecond_and_agree_with_the_rules_between_them() {
        let memories: Vec<Memory> = (0..60)
            .map(|i| {
                // From five days in the future to 230 days old, some at fractions of a day.
                let age = -5.0 + i as f64 * 3.9 + (i % 7) as f64 * 0.137;
                // More content words than the forgetting rule allows: never forgotten.
                let text = "ferries, lighthouses, harbours, pottery glazes and mountain trails";
                mem(i, text, age, 0.9, NOW)
            })
            .collect();
        let s = snap(memories, &[]);
        let misordered = SleepConfig {
            warm_after_days: 40.0,
            cold_after_days: 20.0,
            ..Default::default()
        };
        let from_the_start = SleepConfig {
            warm_after_days: 0.0,
            ..Default::default()
        };
        for cfg in [SleepConfig::default(), misordered, from_the_start] {
            let p = run(&s, &cfg, 180.0);
            let end = NOW + 180 * DAY_MS;
            for (i, m) in s.memories.iter().enumerate() {
                let state = |t: i64| {
                    plan::forget_one(m, t, None, false, &cfg, || 99)
                        .unwrap()
                        .state
                };
                let mine: Vec<_> = p.transitions.iter().filter(|t| t.0 == i).collect();
                for &&(_, from, to, at) in &mine {
                    if at == NOW {
                        continue;
                    }
                    assert_eq!((state(at - 1), state(at)), (from, to), "memory {i} at {at}");
                }
                // Between the steps the state is the last step's: sampled every six hours.
                let mut t = NOW;
                while t <= end {
                    let expected = mine
                        .iter()
                        .take_while(|x| x.3 <= t)
                        .last()
                        .map_or(state(NOW), |x| x.2);
                    assert_eq!(state(t), expected, "memory {i}, day {}", (t - NOW) / DAY_MS);
                    t += DAY_MS / 4;
                }
                assert_eq!(p.at_horizon[i], Some(state(end)));
            }
        }
    }

    #[test]
    fn a_shorter_half_life_forgets_a_short_consolidated_episode_sooner() {
        // Cold already, importance 0.6 as of the last decay (now): forgotten once it decays
        // below 0.4.
        let s = Snapshot {
            last_decay_at: Some(NOW),
            ..snap(vec![mem(1, "Thanks!", 40.0, 0.6, NOW)], &[1])
        };
        let slow = run(&s, &SleepConfig::default(), 365.0);
        let fast = run(
            &s,
            &SleepConfig {
                importance_half_life_days: 5.0,
                ..Default::default()
            },
            365.0,
        );
        let when = |p: &SidePrediction| {
            p.transitions
                .iter()
                .find(|t| t.2 == State::Forgotten)
                .map(|t| t.3)
                .unwrap()
        };
        assert!(when(&fast) < when(&slow));
        // The instant found is the first at which the forget rule holds.
        let cfg = SleepConfig {
            importance_half_life_days: 5.0,
            ..Default::default()
        };
        let at = |t| {
            plan::forget_one(&s.memories[0], t, s.last_decay_at, true, &cfg, || 1)
                .unwrap()
                .state
        };
        let t = when(&fast);
        assert_eq!(at(t), State::Forgotten);
        assert_ne!(at(t - STEP_MS), State::Forgotten);
        let report = compare(&s, &slow, &fast, 365.0, 10);
        assert_eq!(report.differing, 1);
        assert!(report.transitions[0].differs());
    }

    #[test]
    fn the_next_cycle_is_the_forget_plan_and_the_series_counts_every_transition() {
        let ms = vec![
            mem(1, "Thanks!", 100.0, 0.2, NOW),
            mem(
                2,
                "An old but long memory about the violin recital in Porto",
                100.0,
                0.2,
                NOW,
            ),
            mem(3, "fresh", 0.5, 0.9, NOW),
        ];
        let s = snap(ms, &[1, 2]);
        let cfg = SleepConfig::default();
        let p = run(&s, &cfg, 60.0);
        let planned = plan::forget(&s, &next_consolidated(&s, &cfg), &cfg);
        let mut expected: Vec<(i64, String)> = planned
            .changes
            .iter()
            .filter(|c| c.field == "state")
            .map(|c| (c.memory_id, c.new.as_str().unwrap().to_string()))
            .collect();
        expected.sort();
        let report = compare(&s, &p, &p, 60.0, 10);
        let got: Vec<(i64, String)> = report
            .next_cycle
            .iter()
            .map(|c| (c.memory_id, c.to.as_str().to_string()))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(report.differing, 0, "the same settings move nothing");
        let total: u32 = report.series.iter().map(|b| b.after).sum();
        assert_eq!(total as usize, p.transitions.len());
        assert_eq!(report.series[0].after as usize, report.next_cycle_after);
        // The hidden set is what the next cycle forgets.
        assert_eq!(p.overlay.hidden, HashSet::from([1]));
    }

    #[test]
    fn each_memory_and_state_is_one_row_with_both_sides_and_a_limit_keeps_the_first_rows() {
        // Ages and texts spread so that the two settings move some memories on other days,
        // forget some only on one side, and leave others alone.
        let ms: Vec<Memory> = (0..40)
            .map(|i| {
                let text = if i % 3 == 0 {
                    "Thanks!"
                } else {
                    "A long memory about the violin recital in Porto"
                };
                mem(
                    i,
                    text,
                    (i * 7 % 200) as f64,
                    0.2 + (i % 5) as f64 * 0.1,
                    NOW,
                )
            })
            .collect();
        let consolidated: Vec<i64> = (0..40).filter(|i| i % 2 == 0).collect();
        let s = snap(ms, &consolidated);
        let before = SleepConfig::default();
        let after = SleepConfig {
            importance_half_life_days: 10.0,
            archive_after_days: 40.0,
            forget_importance: 0.5,
            forget_max_words: 6,
            ..SleepConfig::default()
        };
        let words = WordCounts::new(&s, [before.forget_max_words, after.forget_max_words]);
        let (b, a) = (
            predict(&s, &before, 180.0, &words),
            predict(&s, &after, 180.0, &words),
        );
        let all = compare(&s, &b, &a, 180.0, usize::MAX);
        // One row per memory and state reached, holding each side's instant.
        // (memory, state reached) → (proposed instant, saved instant).
        type Instants = (Option<i64>, Option<i64>);
        let mut expected: BTreeMap<(i64, &str), Instants> = BTreeMap::new();
        for (p, is_after) in [(&a, true), (&b, false)] {
            for &(i, _, to, at) in &p.transitions {
                let e = expected.entry((s.memories[i].id, to.as_str())).or_default();
                *(if is_after { &mut e.0 } else { &mut e.1 }) = Some(at);
            }
        }
        let mut rows: Vec<_> = all
            .transitions
            .iter()
            .map(|t| ((t.memory_id, t.to.as_str()), (t.after_at, t.before_at)))
            .collect();
        rows.sort_by_key(|r| r.0);
        assert_eq!(rows, expected.into_iter().collect::<Vec<_>>());
        assert!(all.differing > 0 && all.differing < all.transitions.len());
        // Moved rows first, soonest first.
        let key = |t: &Transition| (!t.differs(), t.after_at.or(t.before_at).unwrap_or(i64::MAX));
        assert!(all.transitions.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
        for limit in [0, 1, 5, all.transitions.len() / 2] {
            let head = compare(&s, &b, &a, 180.0, limit);
            assert_eq!(head.transitions, all.transitions[..limit], "limit {limit}");
            assert_eq!(head.differing, all.differing);
        }
    }

    #[test]
    fn pinned_and_forgotten_memories_never_change() {
        let mut a = mem(1, "Thanks!", 100.0, 0.2, NOW);
        a.pinned = true;
        let mut b = mem(2, "Ok", 100.0, 0.2, NOW);
        b.state = State::Forgotten;
        let s = snap(vec![a, b], &[1, 2]);
        let p = run(&s, &SleepConfig::default(), 365.0);
        assert!(p.transitions.is_empty());
        assert!(p.at_horizon.iter().all(Option::is_none));
    }

    #[test]
    fn ranks_and_recall_of_the_expected_memories() {
        let (r, recall) = ranks(&[5, 9], &[1, 5, 7, 9], 3);
        assert_eq!(r, vec![Some(2), None]);
        assert!((recall - 0.5).abs() < 1e-12);
    }
}
