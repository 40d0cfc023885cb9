//! The façade's golden-query methods: saving, listing and removing golden queries, and
//! running them (searching each without access bookkeeping). The data and scoring are in
//! `crate::golden`; sleep cycles run the suite before and after themselves.

use super::Somna;
use crate::embed::Embedder;
use crate::events::Job;
use crate::golden::{
    assemble, recent_runs, runs_for_cycle, score, search_query_of, GoldenEntry, GoldenOptions,
    GoldenRun,
};
use crate::store::{now_ms, GoldenQuery, GoldenRunRow};
use crate::{Error, Result};
use std::collections::HashSet;

impl Somna {
    /// Saves a golden query. Every expected id must be a stored memory.
    pub fn golden_add(
        &self,
        query: &str,
        expected: &[i64],
        k: usize,
        options: &GoldenOptions,
    ) -> Result<GoldenQuery> {
        if query.trim().is_empty() {
            return Err(Error::InvalidInput("the query is empty".into()));
        }
        if expected.is_empty() {
            return Err(Error::InvalidInput(
                "a golden query needs at least one expected memory".into(),
            ));
        }
        if k == 0 || k > 1000 {
            return Err(Error::InvalidInput("k must be between 1 and 1000".into()));
        }
        let query = query.trim();
        // The vector of the text its search embeds is saved with it: a process that ranks
        // the saved queries reads it instead of embedding it again (`recall_golden_vectors`).
        let text = self.golden_text(query);
        let vector = self.query_embedder().embed_one(&text)?;
        let mut store = self.store();
        let mut ids = expected.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let options = serde_json::to_value(options)?;
        let id = store.transaction(|tx| {
            for id in &ids {
                tx.require_memory(*id)?;
            }
            let id = tx.insert_golden(query, &ids, k, &options, now_ms())?;
            tx.set_golden_vector(id, self.embedder.model_id(), &text, &vector)?;
            Ok(id)
        })?;
        store.read().get_golden(id)?.ok_or(Error::NotFound { id })
    }

    /// The text a search embeds for the golden query `query` (see
    /// [`retrieve::embedded_question`](crate::retrieve::embedded_question)): its saved vector
    /// is that text's.
    pub(crate) fn golden_text(&self, query: &str) -> String {
        let actors = self.actors.read().unwrap_or_else(|p| p.into_inner());
        golden_text_among(query, &actors)
    }

    /// Puts the saved golden queries' vectors (those this engine's model made) in front of
    /// the query embedder, each under the text it was made from, so that ranking the queries
    /// embeds none of them again while their searches embed those texts; returns the texts
    /// that had one. A process's first what-if simulation or golden run would
    /// otherwise embed every query first (about a third of a simulation at 100K memories).
    pub(crate) fn recall_golden_vectors(&self) -> Result<HashSet<String>> {
        let saved = self
            .store()
            .read()
            .golden_vectors(self.embedder.model_id())?;
        Ok(saved
            .into_iter()
            .map(|(text, v)| {
                self.recent.put(&text, &v);
                text
            })
            .collect())
    }

    pub fn golden_list(&self) -> Result<Vec<GoldenQuery>> {
        self.store().read().golden_queries()
    }

    /// Every golden query with the memories it expects, read in one go.
    pub fn golden_entries(&self) -> Result<Vec<GoldenEntry>> {
        let store = self.store();
        let read = store.read();
        read.golden_queries()?
            .into_iter()
            .map(|golden| {
                let memories = read.get_memories(&golden.expected)?;
                Ok(GoldenEntry { golden, memories })
            })
            .collect()
    }

    /// Removes a golden query and its past results.
    pub fn golden_remove(&self, id: i64) -> Result<()> {
        if self.store().transaction(|tx| tx.delete_golden(id))? {
            Ok(())
        } else {
            Err(Error::InvalidInput(format!(
                "there is no golden query {id}"
            )))
        }
    }

    /// Runs every golden query (with the saved fusion weights), stores the run and compares
    /// it with the previous one.
    /// Progress stage "golden"; cancellable between queries (nothing is stored then).
    pub fn golden_run(&self, stage: &str, cycle_id: Option<i64>, job: &Job) -> Result<GoldenRun> {
        let started = std::time::Instant::now();
        let queries = self.golden_list()?;
        let saved = self.recall_golden_vectors()?;
        let weights = self.settings()?.weights;
        let mut rows = Vec::with_capacity(queries.len());
        job.report("golden", 0, queries.len() as u64);
        for (i, g) in queries.iter().enumerate() {
            job.cancel.check()?;
            let mut sq = search_query_of(g);
            sq.weights = weights;
            let ranked: Vec<i64> = self
                .search_readonly(&sq)?
                .hits
                .iter()
                .take(g.k)
                .map(|h| h.memory.id)
                .collect();
            rows.push(score(g, ranked));
            job.report("golden", i as u64 + 1, queries.len() as u64);
        }
        let run_at = now_ms();
        let mut store = self.store();
        // The vectors of queries saved before vectors were (or by another model), embedded
        // by this run's searches, are saved with the run.
        let unsaved: Vec<(i64, String, Vec<f32>)> = queries
            .iter()
            .map(|g| (g.id, self.golden_text(&g.query)))
            .filter(|(_, text)| !saved.contains(text))
            .filter_map(|(id, text)| self.recent.get(&text).map(|v| (id, text, v)))
            .collect();
        let model = self.embedder.model_id();
        let id = store.transaction(|tx| {
            for (query, text, vector) in &unsaved {
                tx.set_golden_vector(*query, model, text, vector)?;
            }
            tx.insert_golden_run(run_at, stage, cycle_id, &rows)
        })?;
        let read = store.read();
        let run = GoldenRunRow {
            id,
            run_at,
            stage: stage.to_string(),
            cycle_id,
        };
        let run = assemble(&read, &run, &queries, rows)?;
        drop(store);
        self.record("golden", started, crate::ledger::Cost::items(queries.len()));
        Ok(run)
    }

    /// The golden runs stored around a sleep cycle (before, after), oldest first.
    pub fn golden_runs_for_cycle(&self, cycle_id: i64) -> Result<Vec<GoldenRun>> {
        let store = self.store();
        let read = store.read();
        runs_for_cycle(&read, cycle_id)
    }

    /// The latest `limit` golden runs (manual and around sleep cycles), newest first, each
    /// query's outcome compared with its result in the run before.
    pub fn golden_history(&self, limit: usize) -> Result<Vec<GoldenRun>> {
        let store = self.store();
        let read = store.read();
        recent_runs(&read, limit)
    }

    /// Runs the suite around a sleep cycle when golden queries exist (the run is stored
    /// with the cycle's id); a failure becomes a note of the cycle instead of failing it.
    pub(crate) fn golden_around_sleep(&self, stage: &str, cycle_id: i64, notes: &mut Vec<String>) {
        // The store guard must be gone before the run locks the store again.
        let queries = self.store().read().golden_queries();
        let outcome = queries.and_then(|q| match q.is_empty() {
            true => Ok(()),
            false => self
                .golden_run(stage, Some(cycle_id), &Job::default())
                .map(|_| ()),
        });
        if let Err(e) = outcome {
            notes.push(format!("golden queries ({stage}) failed: {e}"));
        }
    }
}

/// The text a search embeds for the golden query `query` when the store's speakers are
/// `actors`.
pub(crate) fn golden_text_among(query: &str, actors: &[String]) -> String {
    crate::retrieve::embedded_question(&crate::retrieve::SearchQuery::new(query), actors)
}
