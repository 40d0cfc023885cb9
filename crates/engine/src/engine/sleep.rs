//! The façade's sleep methods: plan each phase from a snapshot without holding the store
//! lock (`crate::sleep::plan`), embed without it, then commit the phase in one transaction
//! that also records the cycle's progress in `sleep_cycles` (rows built by
//! `crate::sleep::commit`). A killed cycle leaves its committed phases (recorded,
//! undoable) and the next cycle finds the remaining work. Orchestration lives here because
//! a cycle also runs golden queries, writes the index and the ledger.

use super::Somna;
use crate::compress::{Compressor, Corpus, Extractive};
use crate::curate::ClusterRelabel;
use crate::events::Job;
use crate::ledger::Cost;
use crate::memory::{embedding_text, l_score, Details, Kind, LinkKind, NewMemory, Source, W5H1};
use crate::sleep::auto::{AutoSleepSettings, SleepHost, SETTINGS_KEY};
use crate::sleep::commit::{
    actor, apply_ids, blockers, count, cycle_row, gist, new_summary, report_from_row, schema_text,
};
use crate::sleep::counting::Counting;
use crate::sleep::plan::{self, MemberRef, SchemaPlan, Snapshot, SummaryPlan};
use crate::sleep::{
    FieldChange, LossBudget, PhaseReport, ProposedMemory, Review, SleepOptions, SleepReport, PHASES,
};
use crate::store::{now_ms, CycleRow, Tx};
use crate::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions, TryLockError};
use std::sync::Mutex;
use std::time::Instant;

/// Stores with a cycle (or an undo) running in this process: one at a time per store.
static RUNNING: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Holds a store's place in [`RUNNING`] until dropped: a cycle holds it from start to end,
/// and so does an undo, so neither starts while the other runs. Across processes sharing
/// a store file the same holds through an OS lock on [`crate::paths::sleep_lock`].
///
/// Why a lock file and not the `status = 'running'` rows of `sleep_cycles`: a process
/// killed mid-cycle leaves its row `running` until the next cycle marks it interrupted, so
/// a row cannot tell a live cycle from a dead one (refusing on it would refuse undo until
/// the next cycle). The OS drops a dead process's lock, so the lock is only ever held by a
/// live cycle or undo.
pub(super) struct Running {
    key: String,
    /// The locked file (none for an in-memory store, which no other process can open).
    _lock: Option<File>,
    /// A Postgres store's lock across machines (see `Store::cycle_lock`).
    _store_lock: Option<crate::store::CycleLock>,
}

impl Running {
    pub(super) fn claim(engine: &Somna) -> Result<Self> {
        let path = engine.store().path().to_path_buf();
        let in_memory = path == std::path::Path::new(":memory:");
        let key = if in_memory {
            format!(":memory:{:p}", engine)
        } else {
            path.display().to_string()
        };
        let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains(&key) {
            return Err(Error::CycleRunning);
        }
        let lock = if in_memory {
            None
        } else {
            Some(lock_across_processes(&path)?)
        };
        let store_lock = engine.store().cycle_lock()?;
        running.push(key.clone());
        Ok(Self {
            key,
            _lock: lock,
            _store_lock: store_lock,
        })
    }
}

/// Takes the OS lock beside the store at `db`, refused with [`Error::CycleRunning`] while
/// another process holds it.
fn lock_across_processes(db: &std::path::Path) -> Result<File> {
    let path = crate::paths::sleep_lock(db);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(Error::CycleRunning),
        Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|k| *k != self.key);
    }
}

/// Embeds in chunks, checking for cancellation between them.
fn embed_all(engine: &Somna, texts: &[String], job: &Job) -> Result<Vec<Vec<f32>>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(32) {
        job.cancel.check()?;
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        out.extend(engine.embedder().embed(&refs)?);
    }
    Ok(out)
}

impl Somna {
    /// Runs one sleep cycle with the default extractive compressor (see [`Self::sleep_with`]).
    pub fn sleep(&self, opts: &SleepOptions, job: &Job) -> Result<SleepReport> {
        self.sleep_with(opts, &Extractive::default(), job)
    }

    /// Runs one sleep cycle: replay, compression, schema formation, forgetting and decay.
    /// Each phase commits in one transaction; progress is reported per phase (stages
    /// "replay", "compress", "schemas", "forget"); cancelling stops before the running
    /// phase commits. With `opts.dry_run` nothing is written and the report holds the
    /// proposed summaries, schemas and changes.
    pub fn sleep_with(
        &self,
        opts: &SleepOptions,
        compressor: &dyn Compressor,
        job: &Job,
    ) -> Result<SleepReport> {
        opts.config.validate()?;
        let _running = Running::claim(self)?;
        let mut config = opts.config.clone();
        if let Some(r) = &opts.review {
            // Plan at the reviewed dry run's "now", so the cycle proposes what was reviewed.
            config.now_ms = Some(r.now_ms);
        }
        let cfg = &config;
        let started_at = now_ms();
        let mut rep = SleepReport {
            id: None,
            trigger: opts.trigger.clone(),
            status: if opts.dry_run { "dry_run" } else { "running" }.into(),
            started_at,
            ended_at: None,
            dry_run: opts.dry_run,
            backend: compressor.name().to_string(),
            phases: Vec::new(),
            created: Vec::new(),
            changed: Vec::new(),
            forgotten: Vec::new(),
            notes: Vec::new(),
            config: cfg.clone(),
            golden: Vec::new(),
            loss: None,
        };
        let snap = {
            let mut store = self.store();
            if !opts.dry_run {
                let (interrupted, id) = store.transaction(|tx| {
                    Ok((
                        tx.interrupt_running_cycles()?,
                        tx.insert_cycle(started_at, &opts.trigger)?,
                    ))
                })?;
                for i in interrupted {
                    rep.notes.push(format!(
                        "cycle {i} was interrupted; this cycle picks up its remaining work"
                    ));
                }
                rep.id = Some(id);
            }
            Snapshot::read(&store.read(), cfg.now_ms.unwrap_or(started_at))?
        };
        if let Some(id) = rep.id {
            self.golden_around_sleep("before_sleep", id, &mut rep.notes);
        }
        let counting = Counting::new(compressor);
        let outcome = self.run_phases(&snap, &counting, &mut rep, opts, job);
        rep.ended_at = Some(now_ms());
        match outcome {
            // A real run's completion was recorded by the forget phase's transaction.
            Ok(()) => {
                if let Some(id) = rep.id {
                    self.golden_around_sleep("after_sleep", id, &mut rep.notes);
                    rep.golden = self.golden_runs_for_cycle(id).unwrap_or_default();
                    self.record_sleep(&rep, &counting);
                }
                Ok(rep)
            }
            Err(e) => {
                if rep.id.is_some() {
                    rep.status = match e {
                        Error::Cancelled => "cancelled",
                        Error::LossGuard { .. } => "refused",
                        _ => "failed",
                    }
                    .into();
                    rep.notes.push(format!("stopped: {e}"));
                    let row = cycle_row(&rep, false);
                    self.store().transaction(|tx| tx.save_cycle(&row))?;
                }
                Err(e)
            }
        }
    }

    /// The four phases in order, each committed in its own transaction. Before the first
    /// commit, the loss guard checks what forgetting would do with every replayed batch
    /// consolidated (an upper bound: a batch the compressor skips consolidates nothing),
    /// so a refused cycle writes nothing.
    fn run_phases(
        &self,
        snap: &Snapshot,
        compressor: &dyn Compressor,
        rep: &mut SleepReport,
        opts: &SleepOptions,
        job: &Job,
    ) -> Result<()> {
        let review = opts.review.as_ref();
        let t = Instant::now();
        job.report(PHASES[0], 0, 1);
        let mut replay = plan::replay(snap, &rep.config);
        let (mut batches, waiting) = plan::batches(snap, &replay.selected, &rep.config);
        if let Some(r) = review {
            batches.retain(|b| r.keeps_batch(b));
            let kept: HashSet<i64> = batches.iter().flatten().copied().collect();
            replay.changes.retain(|c| kept.contains(&c.memory_id));
            replay.selected.retain(|id| kept.contains(id));
        }
        let batched: HashSet<i64> = batches.iter().flatten().copied().collect();
        let mut guess = plan::forget(snap, &batched, &rep.config);
        if let Some(r) = review {
            review_forget(&mut guess, r);
        }
        self.guard_loss(&guess, opts.force, rep)?;
        job.cancel.check()?;
        self.replay_phase(&replay, rep, t)?;
        job.report(PHASES[0], 1, 1);
        let t = Instant::now();
        let corpus = snap.corpus();
        let mut summaries = self.plan_summaries(snap, &batches, &corpus, compressor, rep, job)?;
        if let Some(r) = review {
            summaries.retain(|s| r.keeps_summary(&s.sources));
            let missing = r.summaries.len().saturating_sub(summaries.len());
            if missing > 0 {
                rep.notes.push(format!(
                    "review: {missing} accepted summaries are no longer proposed (the store \
                     changed since the dry run); they were not written"
                ));
            }
        }
        let mut phase = PhaseReport {
            name: PHASES[1].into(),
            ..Default::default()
        };
        count(&mut phase, "batches", batches.len());
        count(&mut phase, "episodes_waiting", waiting);
        count(
            &mut phase,
            "episodes_consolidated",
            summaries.iter().map(|s| s.sources.len()).sum(),
        );
        count(&mut phase, "summaries", summaries.len());
        let summary_ids = self.create_summaries(rep, phase, t, &summaries, snap, job)?;
        self.schema_phase(
            snap,
            &summaries,
            &summary_ids,
            &corpus,
            compressor,
            rep,
            review,
            job,
        )?;
        self.forget_phase(snap, &summaries, rep, review, job)?;
        if let Some(r) = review {
            rep.notes.push(format!(
                "review: wrote what was accepted ({} summaries, {} schemas, {} state changes{} accepted)",
                r.summaries.len(),
                r.schemas.len(),
                r.states.len(),
                if r.decay { ", decay" } else { "" }
            ));
        }
        if !rep.dry_run {
            self.refresh_actors(&self.store())?;
            self.index_write().save()?;
        }
        Ok(())
    }

    /// The loss guard: records the cycle's loss budget in the report and refuses (before
    /// anything is written) a cycle that would archive or forget more than the configured
    /// share of the live memories, unless forced. A dry run reports, never refuses.
    fn guard_loss(
        &self,
        forget: &plan::ForgetPlan,
        force: bool,
        rep: &mut SleepReport,
    ) -> Result<()> {
        let budget = LossBudget {
            live: forget.live as u64,
            lost: forget.lost as u64,
            limit_share: rep.config.max_loss_share,
            forced: force,
        };
        rep.loss = Some(budget.clone());
        if rep.dry_run || !budget.exceeded() {
            return Ok(());
        }
        rep.notes.push(format!(
            "loss guard: this cycle would archive or forget {} of {} live memories ({:.0}%), more \
             than the {:.0}% limit; nothing was written (see it with a dry run, allow it with force)",
            budget.lost,
            budget.live,
            budget.share() * 100.0,
            budget.limit_share * 100.0
        ));
        Err(Error::LossGuard {
            lost: budget.lost,
            live: budget.live,
            limit_share: budget.limit_share,
        })
    }

    /// Phase 1, prioritized replay: strengthens the selected unconsolidated episodes.
    fn replay_phase(
        &self,
        replay: &plan::ReplayPlan,
        rep: &mut SleepReport,
        t: Instant,
    ) -> Result<()> {
        let mut phase = PhaseReport {
            name: PHASES[0].into(),
            ..Default::default()
        };
        count(&mut phase, "candidates", replay.candidates);
        count(&mut phase, "selected", replay.selected.len());
        rep.changed.extend(replay.changes.iter().cloned());
        self.commit_phase(rep, phase, t, false, |tx, _| {
            for c in &replay.changes {
                tx.set_logged_field(c.memory_id, &c.field, &c.new)?;
            }
            Ok(())
        })
    }

    /// Phase 2's plan: summarises each batch of replayed episodes.
    fn plan_summaries(
        &self,
        snap: &Snapshot,
        batches: &[Vec<i64>],
        corpus: &Corpus,
        compressor: &dyn Compressor,
        rep: &mut SleepReport,
        job: &Job,
    ) -> Result<Vec<SummaryPlan>> {
        job.report(PHASES[1], 0, batches.len() as u64);
        let vectors: HashMap<i64, Vec<f32>> = {
            let index = self.vectors_read()?;
            batches
                .iter()
                .flatten()
                .filter_map(|&id| index.vector(id).map(|v| (id, v.to_vec())))
                .collect()
        };
        plan::compress(
            snap,
            batches,
            &vectors,
            corpus,
            compressor,
            job,
            &mut rep.notes,
        )
    }

    /// Phase 3, schema formation over this cycle's summaries.
    #[allow(clippy::too_many_arguments)] // the phase's inputs, each used once
    fn schema_phase(
        &self,
        snap: &Snapshot,
        summaries: &[SummaryPlan],
        summary_ids: &[Option<i64>],
        corpus: &Corpus,
        compressor: &dyn Compressor,
        rep: &mut SleepReport,
        review: Option<&Review>,
        job: &Job,
    ) -> Result<()> {
        let t = Instant::now();
        job.report(PHASES[2], 0, 1);
        let cfg = rep.config.clone();
        let mut schemas = plan::schemas(
            snap,
            summaries,
            corpus,
            compressor,
            &cfg,
            job,
            &mut rep.notes,
        )?;
        if let Some(r) = review {
            schemas.retain(|s| r.keeps_schema(&schema_text(s)));
        }
        let mut phase = PhaseReport {
            name: PHASES[2].into(),
            ..Default::default()
        };
        count(&mut phase, "schemas", schemas.len());
        self.create_schemas(rep, phase, t, &schemas, summary_ids, job)
    }

    /// Phase 4, forgetting and decay; its transaction also marks the cycle completed. The
    /// report's loss budget takes this plan's figures (what the cycle really loses).
    fn forget_phase(
        &self,
        snap: &Snapshot,
        summaries: &[SummaryPlan],
        rep: &mut SleepReport,
        review: Option<&Review>,
        job: &Job,
    ) -> Result<()> {
        let t = Instant::now();
        job.report(PHASES[3], 0, 1);
        let newly: HashSet<i64> = summaries.iter().flat_map(|s| s.sources.clone()).collect();
        let mut forget = plan::forget(snap, &newly, &rep.config);
        if let Some(r) = review {
            review_forget(&mut forget, r);
        }
        job.cancel.check()?;
        if let Some(loss) = &mut rep.loss {
            (loss.live, loss.lost) = (forget.live as u64, forget.lost as u64);
        }
        let mut phase = PhaseReport {
            name: PHASES[3].into(),
            ..Default::default()
        };
        count(&mut phase, "decayed", forget.decayed);
        count(&mut phase, "state_changes", forget.state_changes);
        count(&mut phase, "forgotten", forget.forgotten.len());
        rep.changed.extend(forget.changes.iter().cloned());
        rep.forgotten.extend(forget.forgotten.iter().copied());
        if !rep.dry_run {
            rep.status = "completed".into();
            rep.ended_at = Some(now_ms());
        }
        let forgotten: HashSet<i64> = forget.forgotten.iter().copied().collect();
        self.commit_phase(rep, phase, t, true, |tx, id| {
            let who = actor(id);
            let now = now_ms();
            for c in &forget.changes {
                tx.set_logged_field(c.memory_id, &c.field, &c.new)?;
                if c.field == "state" && forgotten.contains(&c.memory_id) {
                    tx.record_history(
                        c.memory_id,
                        "state",
                        Some(&serde_json::json!({"state": c.old})),
                        Some(&serde_json::json!({"state": "forgotten"})),
                        &who,
                        Some("sleep: consolidated, old, unused, low value"),
                        now,
                    )?;
                }
            }
            Ok(())
        })?;
        job.report(PHASES[3], 1, 1);
        Ok(())
    }

    /// Records a phase in the report and, unless dry, runs `write` and saves the cycle row
    /// in one transaction. Cancellation is honoured before the transaction starts.
    fn commit_phase(
        &self,
        rep: &mut SleepReport,
        mut phase: PhaseReport,
        t: Instant,
        decayed: bool,
        write: impl FnOnce(&Tx<'_>, i64) -> Result<()>,
    ) -> Result<()> {
        phase.millis = t.elapsed().as_millis() as u64;
        let Some(id) = rep.id else {
            rep.phases.push(phase);
            return Ok(());
        };
        phase.committed = true;
        rep.phases.push(phase);
        let row = cycle_row(rep, decayed);
        let result = self.store().transaction(|tx| {
            write(tx, id)?;
            tx.save_cycle(&row)
        });
        if result.is_err() {
            rep.phases.last_mut().expect("pushed").committed = false;
        }
        result
    }

    fn create_summaries(
        &self,
        rep: &mut SleepReport,
        phase: PhaseReport,
        t: Instant,
        summaries: &[SummaryPlan],
        snap: &Snapshot,
        job: &Job,
    ) -> Result<Vec<Option<i64>>> {
        let first = rep.created.len();
        for s in summaries {
            rep.created.push(ProposedMemory {
                id: None,
                kind: Kind::Summary,
                text: s.compression.summary.clone(),
                conversation: s.conversation.clone(),
                session: s.session.clone(),
                details: s.details(),
                derived_from: s.sources.clone(),
                derived_from_proposed: Vec::new(),
                backend: s.backend.clone(),
            });
        }
        if rep.dry_run {
            self.commit_phase(rep, phase, t, false, |_, _| Ok(()))?;
            return Ok(vec![None; summaries.len()]);
        }
        let news: Vec<NewMemory> = summaries.iter().map(new_summary).collect();
        let texts: Vec<String> = news
            .iter()
            .map(|m| embedding_text(m.kind, &m.text, &m.w5h1))
            .collect();
        let vectors = embed_all(self, &texts, job)?;
        job.cancel.check()?;
        let scores: HashMap<i64, f64> = snap.memories.iter().map(|m| (m.id, m.l_score)).collect();
        let mut ids: Vec<Option<i64>> = Vec::new();
        let embedder = self.embedder().clone();
        // Ids are assigned inside the transaction; the row records them in the same one.
        let mut phase = Some(phase);
        let id = rep.id.expect("a real run has an id");
        let mut store = self.store();
        let created = store.transaction(|tx| {
            let now = now_ms();
            let mut out = Vec::new();
            for ((m, v), s) in news.iter().zip(&vectors).zip(summaries) {
                let alive: Vec<i64> = tx
                    .get_memories(&s.sources)?
                    .into_iter()
                    .filter(|e| e.deleted_at.is_none())
                    .map(|e| e.id)
                    .collect();
                if alive.len() != s.sources.len() {
                    out.push(None);
                    continue;
                }
                let parents: Vec<f64> = alive
                    .iter()
                    .filter_map(|i| scores.get(i))
                    .copied()
                    .collect();
                let score = l_score(m.source, &parents);
                let mid = tx.insert_memory(m, score, now)?;
                tx.set_embedding(mid, v)?;
                tx.set_tokens(mid, embedder.count_tokens(&m.text))?;
                tx.record_history(
                    mid,
                    "add",
                    None,
                    Some(&serde_json::json!({"text": m.text})),
                    &actor(id),
                    Some("sleep: compression"),
                    now,
                )?;
                for e in &alive {
                    tx.upsert_link(mid, *e, LinkKind::DerivedFrom, 1.0, now)?;
                }
                out.push(Some(mid));
            }
            let mut r = rep.clone();
            apply_ids(&mut r, first, &out);
            let mut p = phase.take().expect("once");
            p.millis = t.elapsed().as_millis() as u64;
            p.committed = true;
            r.phases.push(p);
            tx.save_cycle(&cycle_row(&r, false))?;
            Ok((out, r))
        })?;
        let (out, r) = created;
        *rep = r;
        let skipped = out.iter().filter(|x| x.is_none()).count();
        if skipped > 0 {
            rep.notes.push(format!(
                "{skipped} summaries skipped: their episodes were deleted during the cycle"
            ));
        }
        self.index_write().catch_up(&store, &Job::default())?;
        ids.extend(out);
        Ok(ids)
    }

    fn create_schemas(
        &self,
        rep: &mut SleepReport,
        phase: PhaseReport,
        t: Instant,
        schemas: &[SchemaPlan],
        summary_ids: &[Option<i64>],
        job: &Job,
    ) -> Result<()> {
        let first = rep.created.len();
        let summary_base = first - summary_ids.len();
        for s in schemas {
            let mut stored = Vec::new();
            let mut proposed = Vec::new();
            for m in &s.members {
                match *m {
                    MemberRef::Stored(id) => stored.push(id),
                    MemberRef::Proposed(i) => match summary_ids[i] {
                        Some(id) => stored.push(id),
                        None if rep.dry_run => proposed.push(summary_base + i),
                        None => {}
                    },
                }
            }
            rep.created.push(ProposedMemory {
                id: None,
                kind: Kind::Schema,
                text: schema_text(s),
                conversation: s.conversation.clone(),
                session: None,
                details: Details::Schema {
                    name: s.draft.name.clone(),
                    description: s.draft.description.clone(),
                    core_concepts: s.draft.core_concepts.clone(),
                    related_memory_ids: stored.clone(),
                    examples: s.draft.examples.clone(),
                    confidence: s.draft.confidence,
                },
                derived_from: stored,
                derived_from_proposed: proposed,
                backend: s.backend.clone(),
            });
        }
        if rep.dry_run {
            return self.commit_phase(rep, phase, t, false, |_, _| Ok(()));
        }
        let texts: Vec<String> = rep.created[first..].iter().map(|p| gist(&p.text)).collect();
        let vectors = embed_all(self, &texts, job)?;
        job.cancel.check()?;
        let id = rep.id.expect("a real run has an id");
        let embedder = self.embedder().clone();
        let mut phase = Some(phase);
        let mut store = self.store();
        let (out, r) = store.transaction(|tx| {
            let now = now_ms();
            let mut out = Vec::new();
            for (p, v) in rep.created[first..].iter().zip(&vectors) {
                if p.derived_from.len() < 2 {
                    out.push(None);
                    continue;
                }
                let parents: Vec<f64> = tx
                    .get_memories(&p.derived_from)?
                    .iter()
                    .map(|m| m.l_score)
                    .collect();
                let mut m = NewMemory::new(Kind::Schema, p.text.clone());
                m.w5h1 = W5H1 {
                    what: Some(gist(&p.text)),
                    ..Default::default()
                };
                m.conversation = p.conversation.clone();
                m.source = Source::AgentInference;
                m.importance = 0.6;
                m.novelty = 0.5;
                m.details = p.details.clone();
                m.tags = vec!["sleep".into()];
                let mid = tx.insert_memory(&m, l_score(m.source, &parents), now)?;
                tx.set_embedding(mid, v)?;
                tx.set_tokens(mid, embedder.count_tokens(&m.text))?;
                tx.record_history(
                    mid,
                    "add",
                    None,
                    Some(&serde_json::json!({"text": m.text})),
                    &actor(id),
                    Some("sleep: schema formation"),
                    now,
                )?;
                for s in &p.derived_from {
                    tx.upsert_link(mid, *s, LinkKind::DerivedFrom, 1.0, now)?;
                }
                out.push(Some(mid));
            }
            let mut r = rep.clone();
            apply_ids(&mut r, first, &out);
            let mut ph = phase.take().expect("once");
            ph.millis = t.elapsed().as_millis() as u64;
            ph.committed = true;
            r.phases.push(ph);
            tx.save_cycle(&cycle_row(&r, false))?;
            Ok((out, r))
        })?;
        *rep = r;
        let _ = out;
        self.index_write().catch_up(&store, &Job::default())?;
        Ok(())
    }

    /// The latest cycles, newest first.
    pub fn sleep_history(&self, limit: usize) -> Result<Vec<SleepReport>> {
        let store = self.store();
        let read = store.read();
        read.list_cycles(limit)?
            .iter()
            .map(|row| report_from_row(&read, row))
            .collect()
    }

    /// One recorded cycle.
    pub fn sleep_report(&self, id: i64) -> Result<SleepReport> {
        let store = self.store();
        let read = store.read();
        let row = read
            .get_cycle(id)?
            .filter(|r| r.op == "sleep")
            .ok_or(Error::CycleNotFound { id })?;
        report_from_row(&read, &row)
    }

    /// The later live cycles that touched what cycle `id` touched (changed, created or
    /// forgot the same memories, or built on what it created): they must be undone first.
    pub fn sleep_undo_blockers(&self, id: i64) -> Result<Vec<i64>> {
        let store = self.store();
        let read = store.read();
        let row = read.get_cycle(id)?.ok_or(Error::CycleNotFound { id })?;
        blockers(&read, &row)
    }

    /// Undoes cycle `id`; with `cascade`, first undoes the later cycles that block it
    /// (and theirs), newest first. Returns the reports of every cycle undone, in order.
    pub fn sleep_undo_cascade(
        &self,
        id: i64,
        cascade: bool,
        job: &Job,
    ) -> Result<Vec<SleepReport>> {
        let _running = Running::claim(self)?;
        if !cascade {
            return Ok(vec![self.undo_claimed(id, job)?]);
        }
        let mut closure: HashSet<i64> = HashSet::from([id]);
        let mut todo = vec![id];
        while let Some(c) = todo.pop() {
            for b in self.sleep_undo_blockers(c)? {
                if closure.insert(b) {
                    todo.push(b);
                }
            }
        }
        let mut order: Vec<i64> = closure.into_iter().collect();
        order.sort_unstable_by(|a, b| b.cmp(a));
        let mut reports = Vec::new();
        for c in order {
            job.cancel.check()?;
            let is_sleep = self
                .store()
                .read()
                .get_cycle(c)?
                .is_some_and(|r| r.op == "sleep");
            // A later curation that touched the same memories is undone in the same order.
            if is_sleep {
                reports.push(self.undo_claimed(c, job)?);
            } else {
                self.curate_undo_claimed(c, job)?;
            }
        }
        Ok(reports)
    }

    /// Reverts a cycle exactly, in one transaction: every changed field gets its old value
    /// back, forgotten memories return, created summaries and schemas (with their links
    /// and history) are removed, and the history the cycle wrote is dropped. Any cycle can
    /// be undone unless a later live cycle touched the same memories
    /// ([`Error::UndoBlocked`] names them; [`Self::sleep_undo_cascade`] undoes them first).
    /// Refused with [`Error::CycleRunning`] for as long as a cycle (or another undo) runs on
    /// this store.
    pub fn sleep_undo(&self, id: i64, job: &Job) -> Result<SleepReport> {
        let _running = Running::claim(self)?;
        self.undo_claimed(id, job)
    }

    /// [`Self::sleep_undo`] once this store's cycle slot is held.
    fn undo_claimed(&self, id: i64, job: &Job) -> Result<SleepReport> {
        let store = self.store();
        let row = store
            .read()
            .get_cycle(id)?
            .filter(|r| r.op == "sleep")
            .ok_or(Error::CycleNotFound { id })?;
        if row.status == "undone" {
            return Err(Error::InvalidInput(format!(
                "sleep cycle {id} is already undone"
            )));
        }
        let later = blockers(&store.read(), &row)?;
        if !later.is_empty() {
            return Err(Error::UndoBlocked { cycle: id, later });
        }
        // Read before the undo: it removes what the cycle created, and the report says
        // what the undo did (the memories it removed, the changes it reverted).
        let report = report_from_row(&store.read(), &row)?;
        drop(store);
        let undone = self.revert(&row, &actor(id), job)?;
        let store = self.store();
        let after = report_from_row(&store.read(), &undone)?;
        let mut report = report;
        (report.status, report.notes) = (after.status, after.notes);
        Ok(report)
    }

    /// Reverts one row of the operation log (a cycle or a curation) in one transaction:
    /// every changed field gets its old value back (last change first), the history its
    /// writer (`actor`) recorded is dropped, what it created is removed, and the row is
    /// marked undone. The index follows: created memories leave it, memories whose soft
    /// delete is reverted return to it, and those whose restore is reverted leave it.
    /// Returns the row as saved. The caller checks blockers and holds the cycle slot.
    pub(super) fn revert(&self, row: &CycleRow, actor: &str, job: &Job) -> Result<CycleRow> {
        let changes: Vec<FieldChange> = serde_json::from_value(row.changed.clone())?;
        let total = (changes.len() + row.created_ids.len()) as u64;
        job.report("undo", 0, total);
        let mut undone = row.clone();
        undone.status = "undone".into();
        undone.undone_at = Some(now_ms());
        if let Some(notes) = undone
            .phase_stats
            .get_mut("notes")
            .and_then(|n| n.as_array_mut())
        {
            notes.push(format!("undone at {}", now_ms()).into());
        }
        let deleted_again: Vec<i64> = changes
            .iter()
            .filter(|c| c.field == "deleted_at" && !c.old.is_null())
            .map(|c| c.memory_id)
            .collect();
        let mut store = self.store();
        store.transaction(|tx| {
            for c in changes.iter().rev() {
                if tx.get_memory(c.memory_id)?.is_some() {
                    tx.set_logged_field(c.memory_id, &c.field, &c.old)?;
                    if c.field == "deleted_at" && c.old.is_null() {
                        // A new change-log position puts the vector back into the index.
                        if let Some(v) = tx.embedding_of(c.memory_id)? {
                            tx.set_embedding(c.memory_id, &v)?;
                        }
                    }
                }
            }
            if let Some(r) = row
                .phase_stats
                .get("relabel")
                .and_then(|v| serde_json::from_value::<ClusterRelabel>(v.clone()).ok())
            {
                if tx.cluster_label(r.cluster)?.is_some() {
                    tx.set_cluster_label(r.cluster, &r.old, r.old_by_person)?;
                }
            }
            if let Some(old) = row.phase_stats.get("settings").and_then(|s| s.get("old")) {
                // An application of settings: the settings it replaced come back.
                let old: crate::settings::Settings = serde_json::from_value(old.clone())?;
                tx.set_meta(crate::settings::SETTINGS_KEY, &serde_json::to_string(&old)?)?;
            }
            tx.delete_history_by(actor)?;
            let undo_actor = format!("undo:{}", row.id);
            for m in row.created_ids.iter().rev() {
                if let Some(created) = tx.get_memory(*m)? {
                    // What the operation created existed until now: its snapshot lets time
                    // travel show it between the operation and this undo.
                    let snapshot = serde_json::to_value(&created)?;
                    let at = undone.undone_at.unwrap_or_default();
                    tx.record_history(
                        *m,
                        "hard_delete",
                        Some(&snapshot),
                        None,
                        &undo_actor,
                        Some("undone"),
                        at,
                    )?;
                    tx.hard_delete(*m)?;
                }
            }
            tx.save_cycle(&undone)
        })?;
        {
            let mut index = self.index_write();
            for m in row.created_ids.iter().chain(&deleted_again) {
                index.remove(*m);
            }
            index.catch_up(&store, job)?;
            index.save()?;
        }
        self.refresh_actors(&store)?;
        if changes.iter().any(|c| c.field == "cluster") {
            self.forget_liquid_cache();
        }
        job.report("undo", total, total);
        Ok(undone)
    }
}

/// Keeps the forget plan's accepted changes only (a reviewed cycle), with its counts.
fn review_forget(plan: &mut plan::ForgetPlan, r: &Review) {
    plan.changes.retain(|c| r.keeps_change(c));
    let states: HashSet<i64> = plan
        .changes
        .iter()
        .filter(|c| c.field == "state")
        .map(|c| c.memory_id)
        .collect();
    plan.forgotten.retain(|id| states.contains(id));
    plan.decayed = plan
        .changes
        .iter()
        .filter(|c| c.field == "importance")
        .count();
    plan.state_changes = states.len();
    plan.lost = plan
        .changes
        .iter()
        .filter(|c| {
            c.field == "state"
                && matches!(c.new.as_str(), Some("archived" | "forgotten"))
                && !matches!(c.old.as_str(), Some("archived" | "forgotten"))
        })
        .count();
}

impl Somna {
    /// Records each phase of a finished sleep cycle: its time, what it counted (replay:
    /// selected; compress: summaries; schemas: schemas; forget: forgotten) and its LLM calls.
    fn record_sleep(&self, rep: &crate::SleepReport, counting: &Counting<'_>) {
        use std::sync::atomic::Ordering::Relaxed;
        for p in &rep.phases {
            let (key, calls) = match p.name.as_str() {
                "replay" => ("selected", 0),
                "compress" => ("summaries", counting.compress.load(Relaxed)),
                "schemas" => ("schemas", counting.schema.load(Relaxed)),
                _ => ("forgotten", 0),
            };
            let cost = Cost {
                items: p.counts.get(key).copied().unwrap_or(0),
                llm_calls: if counting.is_llm() { calls } else { 0 },
                tokens: 0,
            };
            self.record_ms(&format!("sleep:{}", p.name), p.millis as f64, cost);
        }
    }
}

impl Somna {
    /// The stored auto-sleep setting (the defaults, disabled, if none was saved).
    pub fn auto_sleep_settings(&self) -> crate::Result<AutoSleepSettings> {
        self.with_store(|s| match s.get_meta(SETTINGS_KEY)? {
            Some(json) => Ok(serde_json::from_str(&json)?),
            None => Ok(AutoSleepSettings::default()),
        })
    }

    /// Saves the auto-sleep setting in the store.
    pub fn set_auto_sleep_settings(&self, settings: &AutoSleepSettings) -> crate::Result<()> {
        if settings.every == 0 || !(settings.poll_secs.is_finite() && settings.poll_secs > 0.0) {
            return Err(crate::Error::InvalidInput(
                "auto-sleep needs every ≥ 1 and a positive poll interval".into(),
            ));
        }
        let json = serde_json::to_string(settings)?;
        self.store()
            .transaction(|tx| tx.set_meta(SETTINGS_KEY, &json))
    }
}

impl SleepHost for Somna {
    fn waiting_episodes(&self) -> Result<usize> {
        self.with_store(|s| s.read().unconsolidated_episodes())
    }

    fn run_cycle(&self, opts: &SleepOptions, job: &Job) -> Result<SleepReport> {
        self.sleep(opts, job)
    }

    fn saved_settings(&self) -> Result<AutoSleepSettings> {
        self.auto_sleep_settings()
    }

    fn saved_config(&self) -> Result<crate::SleepConfig> {
        Ok(self.settings()?.sleep)
    }
}
