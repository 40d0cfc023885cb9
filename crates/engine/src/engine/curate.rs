//! The façade's curation: a person's actions on a set of memories (planned by
//! `crate::curate`), each committed as one row of the operation log that sleep cycles
//! use, with a preview before and an undo after; and the near-duplicate finder.

use super::sleep::Running;
use super::Somna;
use crate::compress::{Batch, Compressor, Corpus, EpisodeView};
use crate::curate::duplicates::{self, DuplicateGroup, DuplicateQuery};
use crate::curate::{self, ClusterRelabel, CurateAction, CurationReport, MergedMemory};
use crate::events::Job;
use crate::memory::{embedding_text, l_score, LinkKind, Memory, NewMemory, Source, W5H1};
use crate::sleep::commit::blockers;
use crate::store::{now_ms, CycleRow};
use crate::{Error, Result};

/// History actor of a curation's writes (what its undo removes).
fn actor(id: i64) -> String {
    format!("curate:{id}")
}

impl Somna {
    /// Runs `action` (or, with `preview`, computes it without writing). `by` says who
    /// asked ("app", "cli", "agent", …); `compressor` drafts a merge's text when none is
    /// given (the extractive one keeps the richest source). Refused with
    /// [`Error::CycleRunning`] while a sleep cycle or an undo runs on this store.
    pub fn curate(
        &self,
        action: &CurateAction,
        preview: bool,
        by: &str,
        compressor: &dyn Compressor,
    ) -> Result<CurationReport> {
        action.validate()?;
        let _running = Running::claim(self)?;
        let now = now_ms();
        let memories = {
            let store = self.store();
            let read = store.read();
            let found = read.get_memories(action.ids())?;
            if let Some(missing) = action
                .ids()
                .iter()
                .find(|id| !found.iter().any(|m| m.id == **id))
            {
                return Err(Error::NotFound { id: *missing });
            }
            found
        };
        curate::check_memories(action, &memories)?;
        let memberships = match action {
            CurateAction::MoveToCluster { ids, cluster } => {
                let store = self.store();
                let read = store.read();
                if read.cluster_label(*cluster)?.is_none() {
                    return Err(Error::InvalidInput(format!(
                        "there is no cluster {cluster} (or it was merged into another)"
                    )));
                }
                read.memberships(ids)?
            }
            _ => Default::default(),
        };
        let (changed, notes) = curate::plan_changes(action, &memories, now, &memberships);
        let relabel = match action {
            CurateAction::RelabelCluster { cluster, label } => {
                let (old, old_by_person) = self
                    .store()
                    .read()
                    .cluster_label(*cluster)?
                    .ok_or_else(|| {
                        Error::InvalidInput(format!(
                            "there is no cluster {cluster} (or it was merged into another)"
                        ))
                    })?;
                Some(ClusterRelabel {
                    cluster: *cluster,
                    old,
                    old_by_person,
                    new: label.trim().to_string(),
                })
            }
            _ => None,
        };
        let mut report = CurationReport {
            id: None,
            op: action.op().into(),
            status: "preview".into(),
            at: now,
            by: by.into(),
            changed,
            merged: None,
            relabel,
            notes,
        };
        let draft = match action {
            CurateAction::Merge { text, .. } => {
                Some(self.draft_merge(&memories, text, compressor)?)
            }
            _ => None,
        };
        report.merged = draft.as_ref().map(|(m, drafted_by)| MergedMemory {
            id: None,
            kind: m.kind,
            text: m.text.clone(),
            who: m.w5h1.who.clone(),
            sources: action.ids().to_vec(),
            drafted_by: drafted_by.clone(),
        });
        if preview {
            return Ok(report);
        }
        let renames = report
            .relabel
            .as_ref()
            .is_some_and(|r| r.new != r.old || !r.old_by_person);
        if report.changed.is_empty() && draft.is_none() && !renames {
            return Err(Error::InvalidInput(format!(
                "{}: nothing to change ({})",
                action.op(),
                report.notes.join("; ")
            )));
        }
        self.commit_curation(&mut report, draft.map(|d| d.0), &memories)?;
        Ok(report)
    }

    /// The merged memory a merge would create, and who wrote its text.
    fn draft_merge(
        &self,
        sources: &[Memory],
        text: &Option<String>,
        compressor: &dyn Compressor,
    ) -> Result<(NewMemory, String)> {
        let refs: Vec<&Memory> = sources.iter().collect();
        let (text, drafted_by) = match text {
            Some(t) => (t.trim().to_string(), "person".to_string()),
            None if compressor.name() == "extractive" => {
                (curate::richest(&refs).text.clone(), "extractive".into())
            }
            None => {
                let batch = Batch {
                    conversation: curate::common(refs.iter().map(|m| m.conversation.clone())),
                    session: curate::common(refs.iter().map(|m| m.session.clone())),
                    episodes: refs.iter().map(|m| EpisodeView::of(m, None)).collect(),
                };
                let corpus = Corpus::of(
                    refs.iter().map(|m| m.text.as_str()),
                    refs.iter().filter_map(|m| m.w5h1.who.as_deref()),
                );
                let c = compressor.compress(&batch, &corpus)?;
                (c.summary, compressor.name().to_string())
            }
        };
        crate::ingest::validate_text(&text)?;
        let mut whos: Vec<String> = refs.iter().filter_map(|m| m.w5h1.who.clone()).collect();
        whos.sort();
        whos.dedup();
        let mut tags: Vec<String> = refs.iter().flat_map(|m| m.tags.clone()).collect();
        tags.push("merged".into());
        tags.sort();
        tags.dedup();
        let mut m = NewMemory::new(curate::merged_kind(&refs), text);
        m.w5h1 = W5H1 {
            who: (!whos.is_empty()).then(|| whos.join(", ")),
            what: curate::common(refs.iter().map(|m| m.w5h1.what.clone())),
            when: curate::common(refs.iter().map(|m| m.w5h1.when.clone())),
            where_: curate::common(refs.iter().map(|m| m.w5h1.where_.clone())),
            why: None,
            how: None,
        };
        m.conversation = curate::common(refs.iter().map(|m| m.conversation.clone()));
        m.session = curate::common(refs.iter().map(|m| m.session.clone()));
        m.occurred_at = refs.iter().filter_map(|m| m.occurred_at).max();
        m.importance = refs.iter().map(|m| m.importance).fold(0.0, f64::max);
        m.novelty = refs.iter().map(|m| m.novelty).fold(0.0, f64::max);
        m.tags = tags;
        m.source = Source::UserInput;
        m.metadata =
            serde_json::json!({ "merged_from": refs.iter().map(|m| m.id).collect::<Vec<_>>() });
        Ok((m, drafted_by))
    }

    /// Writes a planned curation as one transaction and one operation-log row.
    fn commit_curation(
        &self,
        report: &mut CurationReport,
        merged: Option<NewMemory>,
        sources: &[Memory],
    ) -> Result<()> {
        let vector = match &merged {
            Some(m) => {
                let text = embedding_text(m.kind, &m.text, &m.w5h1);
                Some(self.embedder.embed(&[text.as_str()])?.remove(0))
            }
            None => None,
        };
        let tokens = merged.as_ref().map(|m| self.embedder.count_tokens(&m.text));
        let now = report.at;
        let mut store = self.store();
        let (id, created) = store.transaction(|tx| {
            let id = tx.insert_operation(&report.op, now, &report.by)?;
            let who = actor(id);
            let cause = format!("curation {id}: {} by {}", report.op, report.by);
            let mut created = None;
            if let (Some(m), Some(v)) = (&merged, &vector) {
                let parents: Vec<f64> = sources.iter().map(|s| s.l_score).collect();
                let new_id = tx.insert_memory(m, l_score(m.source, &parents), now)?;
                tx.set_embedding(new_id, v)?;
                tx.set_tokens(new_id, tokens.unwrap_or_default())?;
                if sources.iter().any(|s| s.pinned) {
                    tx.set_logged_field(new_id, "pinned", &true.into())?;
                }
                for s in sources {
                    tx.upsert_link(new_id, s.id, LinkKind::DerivedFrom, 1.0, now)?;
                }
                tx.record_history(
                    new_id,
                    "add",
                    None,
                    Some(&serde_json::json!({"text": m.text, "merged_from": sources.iter().map(|s| s.id).collect::<Vec<_>>()})),
                    &who,
                    Some(&cause),
                    now,
                )?;
                created = Some(new_id);
            }
            if let Some(r) = &report.relabel {
                tx.set_cluster_label(r.cluster, &r.new, true)?;
            }
            for c in &report.changed {
                tx.set_logged_field(c.memory_id, &c.field, &c.new)?;
                let event = match (c.field.as_str(), &c.new) {
                    ("deleted_at", serde_json::Value::Null) => "restore",
                    ("deleted_at", _) => "delete",
                    ("state", _) => "state",
                    _ => "update",
                };
                tx.record_history(
                    c.memory_id,
                    event,
                    Some(&serde_json::json!({ &c.field: c.old })),
                    Some(&serde_json::json!({ &c.field: c.new })),
                    &who,
                    Some(&cause),
                    now,
                )?;
                if c.field == "deleted_at" && c.new.is_null() {
                    if let Some(v) = tx.embedding_of(c.memory_id)? {
                        tx.set_embedding(c.memory_id, &v)?;
                    }
                }
            }
            let row = CycleRow {
                id,
                op: report.op.clone(),
                started_at: now,
                ended_at: Some(now_ms()),
                trigger: report.by.clone(),
                status: "done".into(),
                phase_stats: serde_json::json!({
                    "notes": report.notes,
                    "merged": report.merged,
                    "relabel": report.relabel,
                }),
                created_ids: created.into_iter().collect(),
                changed: serde_json::to_value(&report.changed)?,
                forgotten_ids: Vec::new(),
                undone_at: None,
            };
            tx.save_cycle(&row)?;
            Ok((id, created))
        })?;
        report.id = Some(id);
        report.status = "done".into();
        if let Some(m) = &mut report.merged {
            m.id = created;
        }
        {
            let mut index = self.index_write();
            for c in &report.changed {
                if c.field == "deleted_at" && !c.new.is_null() {
                    index.remove(c.memory_id);
                }
            }
            index.catch_up(&store, &Job::default())?;
            index.save()?;
        }
        self.refresh_actors(&store)?;
        if report.changed.iter().any(|c| c.field == "cluster") {
            // The liquid loop's cache is rebuilt from the store, with the placements.
            self.forget_liquid_cache();
        }
        Ok(())
    }

    /// Undoes curation `id` exactly (see [`Self::sleep_undo`] for the rule on later
    /// operations: one that touched the same memories must be undone first).
    pub fn curate_undo(&self, id: i64, job: &Job) -> Result<CurationReport> {
        let _running = Running::claim(self)?;
        self.curate_undo_claimed(id, job)
    }

    pub(super) fn curate_undo_claimed(&self, id: i64, job: &Job) -> Result<CurationReport> {
        let row = {
            let store = self.store();
            let read = store.read();
            let row = read
                .get_cycle(id)?
                .filter(|r| r.op != "sleep")
                .ok_or(Error::CurationNotFound { id })?;
            if row.status == "undone" {
                return Err(Error::InvalidInput(format!(
                    "curation {id} is already undone"
                )));
            }
            let later = blockers(&read, &row)?;
            if !later.is_empty() {
                return Err(Error::UndoBlocked { cycle: id, later });
            }
            row
        };
        let undone = self.revert(&row, &actor(id), job)?;
        Ok(report_of(&undone))
    }

    /// The latest curations, newest first.
    pub fn curations(&self, limit: usize) -> Result<Vec<CurationReport>> {
        let store = self.store();
        let rows = store.read().list_curations(limit)?;
        Ok(rows.iter().map(report_of).collect())
    }

    /// Groups of near-duplicate memories (see [`crate::curate::duplicates`]).
    pub fn find_duplicates(&self, q: &DuplicateQuery) -> Result<Vec<DuplicateGroup>> {
        q.validate()?;
        let memories = self.store().read().all_memories()?;
        let index = self.vectors_read()?;
        Ok(duplicates::groups(&memories, q, |m| {
            match index.vector(m.id) {
                Some(v) => index.search(v, duplicates::NEIGHBOURS + 1, None, None).0,
                None => Vec::new(),
            }
        }))
    }
}

/// A curation's report from its log row.
fn report_of(row: &CycleRow) -> CurationReport {
    let stats = &row.phase_stats;
    let mut merged: Option<MergedMemory> = stats
        .get("merged")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok());
    if let Some(m) = &mut merged {
        m.id = row
            .created_ids
            .first()
            .copied()
            .filter(|_| row.status != "undone");
    }
    CurationReport {
        id: Some(row.id),
        op: row.op.clone(),
        status: row.status.clone(),
        at: row.started_at,
        by: row.trigger.clone(),
        changed: serde_json::from_value(row.changed.clone()).unwrap_or_default(),
        merged,
        relabel: stats
            .get("relabel")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok()),
        notes: stats
            .get("notes")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default(),
    }
}
