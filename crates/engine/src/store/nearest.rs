//! Nearest memories by vector, answered by the database itself where it can: on Postgres,
//! pgvector's HNSW index (`memory_vectors_hnsw`, cosine) shared by every process that opens
//! the store. SQLite keeps its vectors in the engine's own index (`index/`).

use super::sql::{params_from_iter, Dialect, Value};
use super::{vec_to_blob, Tx};
use crate::Result;
use std::collections::HashSet;

/// Which memories a database k-NN may return, besides being current (not deleted) and
/// embedded.
#[derive(Debug, Clone, Copy)]
pub enum VectorScope<'a> {
    All,
    /// All but these.
    Except(&'a HashSet<i64>),
    /// Only these.
    Only(&'a [i64]),
}

impl Tx<'_> {
    /// Whether k-NN runs in the database ([`Tx::nearest_in_database`]) rather than in the
    /// engine's index.
    pub fn vectors_in_database(&self) -> bool {
        self.conn().dialect() == Dialect::Postgres
    }

    /// The `k` memories nearest `vector` among `scope`, best first, as (id, cosine), and
    /// whether they were found by an exact scan.
    ///
    /// A scope of at most `exact_up_to` ids is scanned exactly (a materialised subquery
    /// the planner cannot answer from the index); anything larger walks pgvector's HNSW
    /// index with `hnsw.ef_search = ef` and `hnsw.iterative_scan = strict_order`, so a
    /// filter that rejects many neighbours still yields `k` results, in order.
    pub fn nearest_in_database(
        &self,
        vector: &[f32],
        k: usize,
        ef: usize,
        scope: VectorScope<'_>,
        exact_up_to: usize,
    ) -> Result<(Vec<(i64, f32)>, bool)> {
        let conn = self.conn();
        if conn.dialect() != Dialect::Postgres {
            return Err(crate::Error::Internal(
                "a database k-NN was asked of a store that keeps its vectors in the engine".into(),
            ));
        }
        if k == 0 {
            return Ok((Vec::new(), true));
        }
        let ids_json = |ids: &[i64]| Value::Text(serde_json::to_string(ids).unwrap_or_default());
        let mut params = vec![Value::Blob(vec_to_blob(vector)), Value::Integer(k as i64)];
        // Embeddings live in `memory_vectors` (postgres/schema.sql); the memory's row says
        // whether it is current.
        const FROM: &str = "memory_vectors v JOIN memories m ON m.id = v.id";
        let exact = matches!(scope, VectorScope::Only(ids) if ids.len() <= exact_up_to);
        let sql = if let (VectorScope::Only(ids), true) = (scope, exact) {
            params.push(ids_json(ids));
            format!(
                "WITH scope AS MATERIALIZED (
                     SELECT v.id, v.embedding <=> ?1 AS distance FROM {FROM}
                     WHERE v.id IN ({}) AND m.deleted_at IS NULL)
                 SELECT id, CAST(1 - distance AS REAL) FROM scope
                 ORDER BY distance, id LIMIT ?2",
                conn.json_ids("?3")
            )
        } else {
            // The index path: the scope, if any, is a condition the iterative scan checks.
            let condition = match scope {
                VectorScope::Only(ids) => Some(("IN", ids_json(ids))),
                VectorScope::Except(hidden) if !hidden.is_empty() => {
                    let hidden: Vec<i64> = hidden.iter().copied().collect();
                    Some(("NOT IN", ids_json(&hidden)))
                }
                VectorScope::All | VectorScope::Except(_) => None,
            };
            let condition = condition.map_or(String::new(), |(op, ids)| {
                params.push(ids);
                format!("AND v.id {op} ({})", conn.json_ids("?3"))
            });
            format!(
                "SELECT v.id, CAST(1 - (v.embedding <=> ?1) AS REAL) FROM {FROM}
                 WHERE m.deleted_at IS NULL {condition}
                 ORDER BY v.embedding <=> ?1 LIMIT ?2"
            )
        };
        // Transaction-local: the setting ends with the snapshot or write it is read in.
        conn.execute_batch(&format!(
            "SET LOCAL hnsw.ef_search = {}; SET LOCAL hnsw.iterative_scan = strict_order",
            ef.clamp(k, 1000)
        ))?;
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params_from_iter(params), |r| {
            Ok((r.get::<i64>(0)?, r.get::<f64>(1)? as f32))
        })?;
        Ok((rows.collect::<Result<_>>()?, exact))
    }
    /// Before a bulk load into a store without vectors: on Postgres, drops pgvector's
    /// index so that the load does not insert into it row by row ([`Tx::restore_vector_index`]
    /// builds it once at the end, in the same transaction, so no other connection ever sees
    /// the store without it). Whether it was dropped: never on SQLite, nor when the store
    /// holds vectors already.
    pub fn defer_vector_index(&self) -> Result<bool> {
        let conn = self.conn();
        if conn.dialect() != Dialect::Postgres {
            return Ok(false);
        }
        let empty: bool = conn.query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM memory_vectors)",
            [],
            |r| r.get(0),
        )?;
        if empty {
            conn.execute_batch("DROP INDEX IF EXISTS memory_vectors_hnsw")?;
        }
        Ok(empty)
    }

    /// Builds the index [`Tx::defer_vector_index`] dropped, over everything loaded since,
    /// with room to build its graph in memory: pgvector builds one that outgrows
    /// `maintenance_work_mem` on disk, many times slower. About 2.5 kB a vector (the
    /// vector and its neighbour lists at pgvector's default m = 16), between 1 GB and
    /// 8 GB, never less than the server allows already.
    pub fn restore_vector_index(&self) -> Result<()> {
        let conn = self.conn();
        let (vectors, allowed): (i64, i64) = conn.query_row(
            "SELECT (SELECT COUNT(*) FROM memory_vectors),
                    pg_size_bytes(current_setting('maintenance_work_mem'))",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let mb = ((vectors * 2560) >> 20)
            .clamp(1024, 8192)
            .max(allowed >> 20);
        conn.execute_batch(&format!(
            "SET LOCAL maintenance_work_mem = '{mb}MB'; {}",
            super::postgres::VECTOR_INDEX
        ))
    }
}
