//! Queries on `golden_queries`, `golden_runs` and `golden_results`: the retrieval regression
//! suite's saved queries and their runs.

use super::sql::{params, OptionalExtension};
use super::{blob_to_vec, vec_to_blob, Change, Tx};
use crate::Result;
use serde::{Deserialize, Serialize};

/// A saved query and the memories it should find in its top `k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GoldenQuery {
    pub id: i64,
    pub query: String,
    pub expected: Vec<i64>,
    pub k: usize,
    /// Search options as JSON (`filter`, `mode`, `route`), `{}` for the defaults.
    pub options: serde_json::Value,
    pub created_at: i64,
}

/// One query's outcome in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldenResultRow {
    pub query_id: i64,
    pub recall: f64,
    pub ndcg: f64,
    pub ranked: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldenRunRow {
    pub id: i64,
    pub run_at: i64,
    pub stage: String,
    pub cycle_id: Option<i64>,
}

/// One row of `golden_results` as an export holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedGoldenResult {
    pub run_id: i64,
    pub query_id: i64,
    pub recall: f64,
    pub ndcg: f64,
    pub ranked: Vec<i64>,
}

fn json_ids(s: String) -> Vec<i64> {
    serde_json::from_str(&s).unwrap_or_default()
}

fn query_row(r: &super::sql::Row<'_>) -> Result<GoldenQuery> {
    Ok(GoldenQuery {
        id: r.get(0)?,
        query: r.get(1)?,
        expected: json_ids(r.get(2)?),
        k: r.get::<i64>(3)? as usize,
        options: serde_json::from_str(&r.get::<String>(4)?).unwrap_or_default(),
        created_at: r.get(5)?,
    })
}

fn run_row(r: &super::sql::Row<'_>) -> Result<GoldenRunRow> {
    Ok(GoldenRunRow {
        id: r.get(0)?,
        run_at: r.get(1)?,
        stage: r.get(2)?,
        cycle_id: r.get(3)?,
    })
}

impl Tx<'_> {
    pub fn insert_golden(
        &self,
        query: &str,
        expected: &[i64],
        k: usize,
        options: &serde_json::Value,
        now: i64,
    ) -> Result<i64> {
        self.note(Change::Golden)?;
        self.conn().query_row(
            "INSERT INTO golden_queries (query, expected, k, options, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
            params![
                query,
                serde_json::to_string(expected)?,
                k as i64,
                options.to_string(),
                now
            ],
            |r| r.get(0),
        )
    }

    pub fn golden_queries(&self) -> Result<Vec<GoldenQuery>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, query, expected, k, options, created_at FROM golden_queries ORDER BY id",
        )?;
        let rows = stmt.query_map([], query_row)?;
        rows.collect::<Result<_>>()
    }

    pub fn get_golden(&self, id: i64) -> Result<Option<GoldenQuery>> {
        self.conn()
            .query_row(
                "SELECT id, query, expected, k, options, created_at FROM golden_queries
                 WHERE id = ?1",
                [id],
                query_row,
            )
            .optional()
    }

    /// Saves the vector `model` gives `text`, the text a search embeds for golden query `id`
    /// (it replaces one from another model or of another text).
    pub fn set_golden_vector(
        &self,
        id: i64,
        model: &str,
        text: &str,
        vector: &[f32],
    ) -> Result<()> {
        self.note(Change::Golden)?;
        self.conn().execute(
            "UPDATE golden_queries SET vector = ?1, vector_model = ?2, vector_text = ?3
             WHERE id = ?4",
            params![vec_to_blob(vector), model, text, id],
        )?;
        Ok(())
    }

    /// The saved golden vectors `model` made, each with the text it was made from (the
    /// query as written for a vector saved before that text was kept).
    pub fn golden_vectors(&self, model: &str) -> Result<Vec<(String, Vec<f32>)>> {
        let mut stmt = self.conn().prepare(
            "SELECT COALESCE(vector_text, query), vector FROM golden_queries
             WHERE vector_model = ?1 AND vector IS NOT NULL ORDER BY id",
        )?;
        let rows = stmt.query_map([model], |r| Ok((r.get::<String>(0)?, r.get::<Vec<u8>>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (text, blob) = row?;
            if let Some(v) = blob_to_vec(&blob) {
                out.push((text, v));
            }
        }
        Ok(out)
    }

    /// Removes a saved query and its past results; false when there was none.
    pub fn delete_golden(&self, id: i64) -> Result<bool> {
        self.note(Change::Golden)?;
        Ok(self
            .conn()
            .execute("DELETE FROM golden_queries WHERE id = ?1", [id])?
            > 0)
    }

    /// Records a run and its per-query results; returns the run's id.
    pub fn insert_golden_run(
        &self,
        run_at: i64,
        stage: &str,
        cycle_id: Option<i64>,
        results: &[GoldenResultRow],
    ) -> Result<i64> {
        self.note(Change::Golden)?;
        let run: i64 = self.conn().query_row(
            "INSERT INTO golden_runs (run_at, stage, cycle_id) VALUES (?1, ?2, ?3) RETURNING id",
            params![run_at, stage, cycle_id],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO golden_results (run_id, query_id, recall, ndcg, ranked)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for r in results {
            stmt.execute(params![
                run,
                r.query_id,
                r.recall,
                r.ndcg,
                serde_json::to_string(&r.ranked)?
            ])?;
        }
        Ok(run)
    }

    /// A query's latest result before run `before` (any earlier run), if any.
    pub fn previous_golden_result(
        &self,
        query_id: i64,
        before: i64,
    ) -> Result<Option<GoldenResultRow>> {
        self.conn()
            .query_row(
                "SELECT query_id, recall, ndcg, ranked FROM golden_results
                 WHERE query_id = ?1 AND run_id < ?2 ORDER BY run_id DESC LIMIT 1",
                params![query_id, before],
                |r| {
                    Ok(GoldenResultRow {
                        query_id: r.get(0)?,
                        recall: r.get(1)?,
                        ndcg: r.get(2)?,
                        ranked: json_ids(r.get(3)?),
                    })
                },
            )
            .optional()
    }

    pub fn golden_results(&self, run: i64) -> Result<Vec<GoldenResultRow>> {
        let mut stmt = self.conn().prepare(
            "SELECT query_id, recall, ndcg, ranked FROM golden_results WHERE run_id = ?1
             ORDER BY query_id",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok(GoldenResultRow {
                query_id: r.get(0)?,
                recall: r.get(1)?,
                ndcg: r.get(2)?,
                ranked: json_ids(r.get(3)?),
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Writes an exported saved query as it was, id included (a taken id is a constraint
    /// error).
    pub fn restore_golden(&self, q: &GoldenQuery) -> Result<()> {
        self.note(Change::Golden)?;
        self.conn().execute(
            "INSERT INTO golden_queries (id, query, expected, k, options, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                q.id,
                q.query,
                serde_json::to_string(&q.expected)?,
                q.k as i64,
                q.options.to_string(),
                q.created_at
            ],
        )?;
        Ok(())
    }

    /// Every run of the suite, by id.
    pub fn all_golden_runs(&self) -> Result<Vec<GoldenRunRow>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, run_at, stage, cycle_id FROM golden_runs ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok(GoldenRunRow {
                id: r.get(0)?,
                run_at: r.get(1)?,
                stage: r.get(2)?,
                cycle_id: r.get(3)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Every result of every run, by run and query.
    pub fn all_golden_results(&self) -> Result<Vec<ExportedGoldenResult>> {
        let mut stmt = self.conn().prepare(
            "SELECT run_id, query_id, recall, ndcg, ranked FROM golden_results
             ORDER BY run_id, query_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ExportedGoldenResult {
                run_id: r.get(0)?,
                query_id: r.get(1)?,
                recall: r.get(2)?,
                ndcg: r.get(3)?,
                ranked: json_ids(r.get(4)?),
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Writes an exported run and its results as they were (taken keys are constraint
    /// errors).
    pub fn restore_golden_run(
        &self,
        run: &GoldenRunRow,
        results: &[&ExportedGoldenResult],
    ) -> Result<()> {
        self.note(Change::Golden)?;
        self.conn().execute(
            "INSERT INTO golden_runs (id, run_at, stage, cycle_id) VALUES (?1, ?2, ?3, ?4)",
            params![run.id, run.run_at, run.stage, run.cycle_id],
        )?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO golden_results (run_id, query_id, recall, ndcg, ranked)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for r in results {
            stmt.execute(params![
                r.run_id,
                r.query_id,
                r.recall,
                r.ndcg,
                serde_json::to_string(&r.ranked)?
            ])?;
        }
        Ok(())
    }

    /// Runs around a sleep cycle, oldest first.
    pub fn golden_runs_for_cycle(&self, cycle_id: i64) -> Result<Vec<GoldenRunRow>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, run_at, stage, cycle_id FROM golden_runs WHERE cycle_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([cycle_id], run_row)?;
        rows.collect::<Result<_>>()
    }

    /// The latest `limit` runs (manual ones and those around sleep cycles), newest first.
    pub fn golden_runs(&self, limit: usize) -> Result<Vec<GoldenRunRow>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, run_at, stage, cycle_id FROM golden_runs ORDER BY id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit.min(i64::MAX as usize) as i64], run_row)?;
        rows.collect::<Result<_>>()
    }
}
