//! Queries on `clusters`, `cluster_members`, `cluster_merges` and `memory_energy`.

use super::sql::{params, OptionalExtension};
use super::{blob_to_vec, vec_to_blob, Change, Tx};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A cluster as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRow {
    pub id: i64,
    pub label: String,
    pub centroid: Vec<f32>,
    pub energy: f32,
    pub merged_into: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One merge of two clusters: `from_id` was absorbed into `into_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClusterMerge {
    pub id: i64,
    pub from_id: i64,
    pub into_id: i64,
    pub similarity: f32,
    pub merged_at: i64,
}

/// A memory's liquid-clustering energy as of step `at_step`, and the access count it has
/// been credited for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyRow {
    pub memory_id: i64,
    pub energy: f32,
    pub at_step: i64,
    pub accesses: i64,
}

/// The concept clusters as an export holds them: every row of `clusters`,
/// `cluster_members`, `cluster_merges` and `memory_energy`, each column as stored (real
/// numbers as SQLite holds them, so nothing is rounded on the way).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportedClusters {
    pub clusters: Vec<ExportedCluster>,
    pub members: Vec<ExportedMember>,
    pub merges: Vec<ExportedMerge>,
    pub energies: Vec<ExportedEnergy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedCluster {
    pub id: i64,
    pub label: String,
    pub label_by_person: bool,
    pub centroid: Vec<f32>,
    pub energy: f64,
    pub merged_into: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMember {
    pub memory_id: i64,
    pub cluster_id: i64,
    pub confidence: f64,
    pub by_person: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMerge {
    pub id: i64,
    pub from_id: i64,
    pub into_id: i64,
    pub similarity: f64,
    pub merged_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedEnergy {
    pub memory_id: i64,
    pub energy: f64,
    pub at_step: i64,
    pub accesses: i64,
}

impl Tx<'_> {
    /// Every cluster, membership, merge and energy row, by key: what an export holds.
    pub fn export_clusters(&self) -> Result<ExportedClusters> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, label, label_by_person, centroid, energy, merged_into, created_at, updated_at
             FROM clusters ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<bool>(2)?,
                r.get::<Vec<u8>>(3)?,
                r.get::<f64>(4)?,
                r.get::<Option<i64>>(5)?,
                r.get::<i64>(6)?,
                r.get::<i64>(7)?,
            ))
        })?;
        let mut clusters = Vec::new();
        for row in rows {
            let (id, label, label_by_person, blob, energy, merged_into, created_at, updated_at) =
                row?;
            let centroid = blob_to_vec(&blob).ok_or_else(|| {
                Error::InvalidInput(format!("cluster {id} has a malformed centroid"))
            })?;
            clusters.push(ExportedCluster {
                id,
                label,
                label_by_person,
                centroid,
                energy,
                merged_into,
                created_at,
                updated_at,
            });
        }
        let mut stmt = conn.prepare(
            "SELECT memory_id, cluster_id, confidence, by_person FROM cluster_members
             ORDER BY memory_id",
        )?;
        let members = stmt
            .query_map([], |r| {
                Ok(ExportedMember {
                    memory_id: r.get(0)?,
                    cluster_id: r.get(1)?,
                    confidence: r.get(2)?,
                    by_person: r.get(3)?,
                })
            })?
            .collect::<Result<_>>()?;
        let mut stmt = conn.prepare(
            "SELECT id, from_id, into_id, similarity, merged_at FROM cluster_merges ORDER BY id",
        )?;
        let merges = stmt
            .query_map([], |r| {
                Ok(ExportedMerge {
                    id: r.get(0)?,
                    from_id: r.get(1)?,
                    into_id: r.get(2)?,
                    similarity: r.get(3)?,
                    merged_at: r.get(4)?,
                })
            })?
            .collect::<Result<_>>()?;
        let mut stmt = conn.prepare(
            "SELECT memory_id, energy, at_step, accesses FROM memory_energy ORDER BY memory_id",
        )?;
        let energies = stmt
            .query_map([], |r| {
                Ok(ExportedEnergy {
                    memory_id: r.get(0)?,
                    energy: r.get(1)?,
                    at_step: r.get(2)?,
                    accesses: r.get(3)?,
                })
            })?
            .collect::<Result<_>>()?;
        Ok(ExportedClusters {
            clusters,
            members,
            merges,
            energies,
        })
    }

    /// Writes exported clusters as they were, ids included. A row whose key is already
    /// taken is a constraint error: nothing is replaced. `merged_into` is set once every
    /// cluster exists, so a cluster may name one exported after it.
    pub fn restore_clusters(&self, c: &ExportedClusters) -> Result<()> {
        if c.clusters.is_empty()
            && c.members.is_empty()
            && c.merges.is_empty()
            && c.energies.is_empty()
        {
            return Ok(());
        }
        self.note(Change::Clusters {
            ids: c.clusters.iter().map(|x| x.id).collect(),
        })?;
        self.note(Change::Energies {
            ids: c.energies.iter().map(|e| e.memory_id).collect(),
        })?;
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "INSERT INTO clusters (id, label, label_by_person, centroid, energy, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for x in &c.clusters {
            stmt.execute(params![
                x.id,
                x.label,
                x.label_by_person,
                vec_to_blob(&x.centroid),
                x.energy,
                x.created_at,
                x.updated_at
            ])?;
        }
        let mut stmt = conn.prepare_cached("UPDATE clusters SET merged_into = ?2 WHERE id = ?1")?;
        for x in c.clusters.iter().filter(|x| x.merged_into.is_some()) {
            stmt.execute(params![x.id, x.merged_into])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO cluster_members (memory_id, cluster_id, confidence, by_person)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for m in &c.members {
            stmt.execute(params![
                m.memory_id,
                m.cluster_id,
                m.confidence,
                m.by_person
            ])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO cluster_merges (id, from_id, into_id, similarity, merged_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for m in &c.merges {
            stmt.execute(params![
                m.id,
                m.from_id,
                m.into_id,
                m.similarity,
                m.merged_at
            ])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO memory_energy (memory_id, energy, at_step, accesses) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for e in &c.energies {
            stmt.execute(params![e.memory_id, e.energy, e.at_step, e.accesses])?;
        }
        Ok(())
    }

    /// Removes every cluster, membership and merge record (before a full re-clustering).
    pub fn clear_clusters(&self) -> Result<()> {
        let ids = self.all_clusters()?.iter().map(|c| c.id).collect();
        self.note(Change::Clusters { ids })?;
        self.conn().execute_batch(
            "DELETE FROM cluster_members; DELETE FROM cluster_merges; DELETE FROM clusters;",
        )?;
        Ok(())
    }

    pub fn insert_cluster(
        &self,
        label: &str,
        centroid: &[f32],
        energy: f32,
        now: i64,
    ) -> Result<i64> {
        let id: i64 = self.conn().query_row(
            "INSERT INTO clusters (label, centroid, energy, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?4) RETURNING id",
            params![label, vec_to_blob(centroid), energy as f64, now],
            |r| r.get(0),
        )?;
        self.note(Change::Clusters { ids: vec![id] })?;
        Ok(id)
    }

    pub fn update_cluster(
        &self,
        id: i64,
        label: &str,
        centroid: &[f32],
        energy: f32,
        now: i64,
    ) -> Result<()> {
        self.note(Change::Clusters { ids: vec![id] })?;
        // A label a person gave is kept (see migration 0007).
        self.conn().execute(
            "UPDATE clusters SET label = CASE WHEN label_by_person = 1 THEN label ELSE ?2 END,
                centroid = ?3, energy = ?4, updated_at = ?5 WHERE id = ?1",
            params![id, label, vec_to_blob(centroid), energy as f64, now],
        )?;
        Ok(())
    }

    /// Every live cluster's label and whether a person gave it, by id.
    pub fn cluster_labels(&self) -> Result<Vec<(i64, String, bool)>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT id, label, label_by_person FROM clusters WHERE merged_into IS NULL ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_>>()
    }

    /// One live cluster's label and whether a person gave it.
    pub fn cluster_label(&self, id: i64) -> Result<Option<(String, bool)>> {
        self.conn()
            .query_row(
                "SELECT label, label_by_person FROM clusters WHERE id = ?1 AND merged_into IS NULL",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
    }

    /// Sets a cluster's label and whether it is a person's (kept by liquid steps).
    pub fn set_cluster_label(&self, id: i64, label: &str, by_person: bool) -> Result<()> {
        self.note(Change::Clusters { ids: vec![id] })?;
        self.conn().execute(
            "UPDATE clusters SET label = ?2, label_by_person = ?3 WHERE id = ?1",
            params![id, label, by_person],
        )?;
        Ok(())
    }

    /// Records that `from` was merged into `into` and marks `from` as merged.
    pub fn record_merge(
        &self,
        from: i64,
        into: i64,
        similarity: f32,
        now: i64,
    ) -> Result<ClusterMerge> {
        self.note(Change::Clusters {
            ids: vec![from, into],
        })?;
        self.conn().execute(
            "UPDATE clusters SET merged_into = ?2, updated_at = ?3 WHERE id = ?1",
            params![from, into, now],
        )?;
        let id = self.conn().query_row(
            "INSERT INTO cluster_merges (from_id, into_id, similarity, merged_at) VALUES (?1, ?2, ?3, ?4)
             RETURNING id",
            params![from, into, similarity as f64, now],
            |r| r.get(0),
        )?;
        Ok(ClusterMerge {
            id,
            from_id: from,
            into_id: into,
            similarity,
            merged_at: now,
        })
    }

    /// Moves every member of cluster `from` into `into`.
    pub fn reassign_cluster(&self, from: i64, into: i64) -> Result<()> {
        self.note(Change::Clusters {
            ids: vec![from, into],
        })?;
        self.conn().execute(
            "UPDATE cluster_members SET cluster_id = ?2 WHERE cluster_id = ?1",
            params![from, into],
        )?;
        Ok(())
    }

    /// Every cluster, merged ones included, by id.
    pub fn all_clusters(&self) -> Result<Vec<ClusterRow>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, label, centroid, energy, merged_into, created_at, updated_at
             FROM clusters ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<Vec<u8>>(2)?,
                r.get::<f64>(3)?,
                r.get::<Option<i64>>(4)?,
                r.get::<i64>(5)?,
                r.get::<i64>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, label, blob, energy, merged_into, created_at, updated_at) = row?;
            let centroid = blob_to_vec(&blob).ok_or_else(|| {
                Error::InvalidInput(format!("cluster {id} has a malformed centroid"))
            })?;
            out.push(ClusterRow {
                id,
                label,
                centroid,
                energy: energy as f32,
                merged_into,
                created_at,
                updated_at,
            });
        }
        Ok(out)
    }

    /// Sets (or moves) the cluster of each memory: (memory_id, cluster_id, confidence).
    pub fn set_members(&self, members: &[(i64, i64, f32)]) -> Result<()> {
        self.note(Change::Clusters {
            ids: members.iter().map(|m| m.1).collect(),
        })?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO cluster_members (memory_id, cluster_id, confidence) VALUES (?1, ?2, ?3)
             ON CONFLICT (memory_id) DO UPDATE SET cluster_id = excluded.cluster_id,
             confidence = excluded.confidence WHERE cluster_members.by_person = 0",
        )?;
        for &(m, c, conf) in members {
            stmt.execute(params![m, c, conf as f64])?;
        }
        Ok(())
    }

    /// The memories a person placed in a cluster.
    pub fn person_placed(&self) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT memory_id FROM cluster_members WHERE by_person = 1")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Each memory's membership as a logged operation records it: `{cluster, confidence,
    /// by_person}`, or null for a memory in no cluster.
    pub fn memberships(&self, ids: &[i64]) -> Result<HashMap<i64, serde_json::Value>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT cluster_id, confidence, by_person FROM cluster_members WHERE memory_id = ?1",
        )?;
        let mut out = HashMap::new();
        for &id in ids {
            let v = stmt
                .query_row([id], |r| {
                    Ok(serde_json::json!({
                        "cluster": r.get::<i64>(0)?,
                        "confidence": r.get::<f64>(1)?,
                        "by_person": r.get::<bool>(2)?,
                    }))
                })
                .optional()?
                .unwrap_or(serde_json::Value::Null);
            out.insert(id, v);
        }
        Ok(out)
    }

    /// Sets a memory's membership to a value of [`Tx::memberships`] (null: no cluster).
    pub(crate) fn set_membership(&self, id: i64, v: &serde_json::Value) -> Result<()> {
        match v {
            serde_json::Value::Null => {
                self.conn()
                    .execute("DELETE FROM cluster_members WHERE memory_id = ?1", [id])?;
            }
            serde_json::Value::Object(o) => {
                let cluster = o.get("cluster").and_then(|c| c.as_i64()).ok_or_else(|| {
                    Error::InvalidInput(format!("a membership names its cluster: {v}"))
                })?;
                self.note(Change::Clusters { ids: vec![cluster] })?;
                self.conn().execute(
                    "INSERT INTO cluster_members (memory_id, cluster_id, confidence, by_person)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (memory_id) DO UPDATE SET cluster_id = excluded.cluster_id,
                       confidence = excluded.confidence, by_person = excluded.by_person",
                    params![
                        id,
                        cluster,
                        o.get("confidence").and_then(|c| c.as_f64()).unwrap_or(1.0),
                        o.get("by_person")
                            .and_then(|b| b.as_bool())
                            .unwrap_or(false),
                    ],
                )?;
            }
            other => {
                return Err(Error::InvalidInput(format!(
                    "not a cluster membership: {other}"
                )))
            }
        }
        Ok(())
    }

    /// Every (memory_id, cluster_id, confidence), by memory id.
    pub fn cluster_assignments(&self) -> Result<Vec<(i64, i64, f32)>> {
        let mut stmt = self.conn().prepare(
            "SELECT memory_id, cluster_id, confidence FROM cluster_members ORDER BY memory_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<f64>(2)? as f32)))?;
        rows.collect::<Result<_>>()
    }

    /// Members of a cluster, most confident first.
    pub fn cluster_members(&self, cluster_id: i64, limit: usize) -> Result<Vec<i64>> {
        let mut stmt = self.conn().prepare(
            "SELECT memory_id FROM cluster_members WHERE cluster_id = ?1
             ORDER BY confidence DESC, memory_id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![cluster_id, super::sql::count(limit)], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Member count of every cluster that has members.
    pub fn cluster_sizes(&self) -> Result<Vec<(i64, usize)>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT cluster_id, COUNT(*) FROM cluster_members GROUP BY cluster_id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<i64>(1)? as usize)))?;
        rows.collect::<Result<_>>()
    }

    pub fn cluster_merges(&self) -> Result<Vec<ClusterMerge>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, from_id, into_id, similarity, merged_at FROM cluster_merges ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ClusterMerge {
                id: r.get(0)?,
                from_id: r.get(1)?,
                into_id: r.get(2)?,
                similarity: r.get::<f64>(3)? as f32,
                merged_at: r.get(4)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    pub fn energies(&self) -> Result<Vec<EnergyRow>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT memory_id, energy, at_step, accesses FROM memory_energy")?;
        let rows = stmt.query_map([], |r| {
            Ok(EnergyRow {
                memory_id: r.get(0)?,
                energy: r.get::<f64>(1)? as f32,
                at_step: r.get(2)?,
                accesses: r.get(3)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    pub fn put_energies(&self, rows: &[EnergyRow]) -> Result<()> {
        self.note(Change::Energies {
            ids: rows.iter().map(|e| e.memory_id).collect(),
        })?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO memory_energy (memory_id, energy, at_step, accesses)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (memory_id) DO UPDATE SET energy = excluded.energy,
                 at_step = excluded.at_step, accesses = excluded.accesses",
        )?;
        for e in rows {
            stmt.execute(params![e.memory_id, e.energy as f64, e.at_step, e.accesses])?;
        }
        Ok(())
    }

    /// (id, access_count) of the memories accessed at or after `since` (Unix ms).
    pub fn accessed_since(&self, since: i64) -> Result<Vec<(i64, i64)>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT memory_id, count FROM memory_access WHERE last_at >= ?1")?;
        let rows = stmt.query_map([since], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_>>()
    }

    /// (memory, other, count) of the co-access pairs touching any of `since` onwards.
    pub fn co_access_since(&self, since: i64) -> Result<Vec<(i64, i64, i64)>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT a, b, count FROM co_access WHERE last_at >= ?1")?;
        let rows = stmt.query_map([since], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_>>()
    }

    /// (id, text, access_count) of every visible memory.
    pub fn texts_and_accesses(&self) -> Result<Vec<(i64, String, i64)>> {
        let mut stmt = self.conn().prepare(
            "SELECT m.id, m.text, COALESCE(a.count, 0)
             FROM memories m LEFT JOIN memory_access a ON a.memory_id = m.id
             WHERE m.deleted_at IS NULL AND m.state != 'forgotten'",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_>>()
    }

    /// The texts of `ids` (missing ones are skipped).
    pub fn texts_of(&self, ids: &[i64]) -> Result<Vec<String>> {
        let mut out = Vec::with_capacity(ids.len());
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT text FROM memories WHERE id = ?1")?;
        for id in ids {
            if let Some(t) = stmt.query_row([id], |r| r.get::<String>(0)).optional()? {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// (id, occurred_at or else created_at, access_count) of every visible memory.
    pub fn memory_times(&self) -> Result<Vec<(i64, i64, i64)>> {
        let mut stmt = self.conn().prepare(
            "SELECT m.id, COALESCE(m.occurred_at, m.created_at), COALESCE(a.count, 0)
             FROM memories m LEFT JOIN memory_access a ON a.memory_id = m.id
             WHERE m.deleted_at IS NULL AND m.state != 'forgotten'",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_>>()
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn clusters_and_merges_round_trip() {
        let mut store = Store::open_in_memory().unwrap();
        let (a, b) = store
            .transaction(|tx| {
                let a = tx.insert_cluster("a", &[1.0, 0.0], 0.5, 10)?;
                let b = tx.insert_cluster("b", &[0.0, 1.0], 0.25, 10)?;
                tx.record_merge(b, a, 0.9, 20)?;
                Ok((a, b))
            })
            .unwrap();
        let all = store.read().all_clusters().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].merged_into, Some(a));
        assert_eq!(all[0].centroid, vec![1.0, 0.0]);
        let merges = store.read().cluster_merges().unwrap();
        assert_eq!((merges[0].from_id, merges[0].into_id), (b, a));
    }
}
