//! Turning a cycle's plans into rows and back: the new summary and schema memories, the
//! `sleep_cycles` row of a report (and the report of a row), and which later cycles block
//! an undo. Pure over their arguments; the façade (`engine/sleep.rs`) commits them.

use super::plan::{SchemaPlan, SummaryPlan};
use super::{FieldChange, PhaseReport, ProposedMemory, SleepReport};
use crate::memory::{Kind, LinkKind, NewMemory, Source, W5H1};
use crate::store::{CycleRow, Tx};
use crate::Result;
use std::collections::HashSet;
/// Memories a cycle touched: changed, created or forgotten.
pub(crate) fn touched(row: &CycleRow) -> Result<HashSet<i64>> {
    let changes: Vec<FieldChange> = serde_json::from_value(row.changed.clone())?;
    Ok(changes
        .iter()
        .map(|c| c.memory_id)
        .chain(row.created_ids.iter().copied())
        .chain(row.forgotten_ids.iter().copied())
        .collect())
}

/// Later live cycles whose changes meet `row`'s: they changed, created or forgot a memory
/// `row` touched, or created a memory derived from one `row` created.
/// An application of settings is blocked by every later live application (each saved the
/// whole settings over it).
pub(crate) fn blockers(read: &Tx<'_>, row: &CycleRow) -> Result<Vec<i64>> {
    let mine = touched(row)?;
    let mut out = Vec::new();
    for later in read.later_live_cycles(row.id)? {
        if row.op == "settings" {
            if later.op == "settings" {
                out.push(later.id);
            }
            continue;
        }
        let mut theirs = touched(&later)?;
        for c in &later.created_ids {
            theirs.extend(
                read.neighbours(*c, &[LinkKind::DerivedFrom])?
                    .into_iter()
                    .map(|n| n.0),
            );
        }
        if !theirs.is_disjoint(&mine) {
            out.push(later.id);
        }
    }
    Ok(out)
}

pub(crate) fn count(phase: &mut PhaseReport, key: &str, n: usize) {
    phase.counts.insert(key.into(), n as u64);
}

/// Writes the ids a transaction assigned into the proposals starting at `first`, dropping
/// those skipped at commit time: a real report lists what exists.
pub(crate) fn apply_ids(rep: &mut SleepReport, first: usize, ids: &[Option<i64>]) {
    let tail: Vec<ProposedMemory> = rep.created.drain(first..).collect();
    for (mut p, id) in tail.into_iter().zip(ids) {
        if let Some(id) = id {
            p.id = Some(*id);
            rep.created.push(p);
        }
    }
}

pub(crate) fn new_summary(s: &SummaryPlan) -> NewMemory {
    let mut m = NewMemory::new(Kind::Summary, s.compression.summary.clone());
    m.w5h1 = W5H1 {
        who: (!s.who.is_empty()).then(|| s.who.join(", ")),
        what: Some(gist(&s.compression.summary)),
        when: s.when.clone(),
        where_: s.conversation.as_ref().map(|c| match &s.session {
            Some(sess) => format!("{c}/{sess}"),
            None => c.clone(),
        }),
        why: None,
        how: None,
    };
    m.conversation = s.conversation.clone();
    m.session = s.session.clone();
    m.occurred_at = s.occurred_at;
    m.importance = s.importance;
    m.novelty = s.novelty;
    m.source = Source::AgentInference;
    m.tags = vec!["sleep".into()];
    m.details = s.details();
    m
}

/// Words of a summary that are embedded: the headline and about one quote. Embedding cost
/// grows with length and dominates a cycle; the whole text stays searchable lexically.
const GIST_WORDS: usize = 40;

pub(crate) fn gist(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= GIST_WORDS {
        return text.to_string();
    }
    words[..GIST_WORDS].join(" ")
}

pub(crate) fn schema_text(s: &SchemaPlan) -> String {
    let mut t = format!("{}: {}", s.draft.name, s.draft.description);
    if let Some(e) = s.draft.examples.first() {
        t.push_str(&format!(" For example, {e}"));
    }
    t
}

/// The `sleep_cycles` row for a report. `decayed`: the forget phase is committing.
pub(crate) fn cycle_row(rep: &SleepReport, decayed: bool) -> CycleRow {
    let previously_decayed = rep.phase("forget").is_some_and(|p| p.committed);
    CycleRow {
        id: rep.id.unwrap_or_default(),
        op: "sleep".into(),
        started_at: rep.started_at,
        ended_at: rep.ended_at,
        trigger: rep.trigger.clone(),
        status: rep.status.clone(),
        phase_stats: serde_json::json!({
            "phases": rep.phases,
            "notes": rep.notes,
            "backend": rep.backend,
            "config": rep.config,
            "decayed": decayed || previously_decayed,
            "loss": rep.loss,
        }),
        created_ids: rep.created.iter().filter_map(|p| p.id).collect(),
        changed: serde_json::to_value(&rep.changed).unwrap_or_default(),
        forgotten_ids: rep.forgotten.clone(),
        undone_at: None,
    }
}

/// Rebuilds a report from its row; created memories are read back from the store.
pub(crate) fn report_from_row(read: &Tx<'_>, row: &CycleRow) -> Result<SleepReport> {
    let stats = &row.phase_stats;
    let get = |k: &str| stats.get(k).cloned().unwrap_or_default();
    let mut created = Vec::new();
    for id in &row.created_ids {
        if let Some(m) = read.get_memory(*id)? {
            let derived_from = read
                .neighbours(m.id, &[LinkKind::DerivedFrom])?
                .into_iter()
                .map(|n| n.0)
                .collect();
            created.push(ProposedMemory {
                id: Some(m.id),
                kind: m.kind,
                text: m.text,
                conversation: m.conversation,
                session: m.session,
                details: m.details,
                derived_from,
                derived_from_proposed: Vec::new(),
                backend: get("backend").as_str().unwrap_or_default().to_string(),
            });
        }
    }
    Ok(SleepReport {
        id: Some(row.id),
        trigger: row.trigger.clone(),
        status: row.status.clone(),
        started_at: row.started_at,
        ended_at: row.ended_at,
        dry_run: false,
        backend: get("backend").as_str().unwrap_or_default().to_string(),
        phases: serde_json::from_value(get("phases")).unwrap_or_default(),
        created,
        changed: serde_json::from_value(row.changed.clone()).unwrap_or_default(),
        forgotten: row.forgotten_ids.clone(),
        notes: serde_json::from_value(get("notes")).unwrap_or_default(),
        config: serde_json::from_value(get("config")).unwrap_or_default(),
        golden: crate::golden::runs_for_cycle(read, row.id)?,
        loss: serde_json::from_value(get("loss")).unwrap_or_default(),
    })
}

/// History actor of a cycle's writes.
pub(crate) fn actor(id: i64) -> String {
    format!("sleep:{id}")
}
