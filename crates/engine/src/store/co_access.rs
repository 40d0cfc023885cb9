//! Queries on `co_access`: how often two memories were retrieved together.

use super::sql::params;
use super::{Change, Tx};
use crate::Result;
use serde::{Deserialize, Serialize};

/// How often two memories were retrieved together (a < b).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoAccess {
    pub a: i64,
    pub b: i64,
    pub count: i64,
    pub last_at: i64,
}

/// How many of a search's hits, best first, form co-access pairs: at most 45 pairs per
/// search, whatever its k (every pair of k hits would be k(k−1)/2: 19,900 upserts at
/// k = 200, half a million at k = 1000).
///
/// Why the top 10: co-access is read by the liquid loop only (`cluster/liquid.rs`,
/// `add_co_access`), as one term of a memory's affinity to its neighbours, where a
/// co-retrieved memory that is not already among the memory's k = 10 nearest neighbours
/// is added to its neighbour list. Pairs among the top 10 hits are the ones a reader
/// actually saw together; the tail of a wide search (rank 150 with rank 190) is weak
/// evidence, and counting it would add up to k − 1 neighbours to each of k memories per
/// search, drowning the 10 semantic neighbours the flow is computed over. Retrieval and
/// sleep do not read co-access; access counts (and so liquid energies) still count every
/// hit.
pub const CO_ACCESS_TOP_HITS: usize = 10;

impl Tx<'_> {
    /// Counts one joint retrieval of every pair among the first [`CO_ACCESS_TOP_HITS`]
    /// of `ids` (a search's hits, best first); the rest form no pairs.
    pub fn record_co_access(&self, ids: &[i64], now: i64) -> Result<()> {
        let ids = &ids[..ids.len().min(CO_ACCESS_TOP_HITS)];
        self.note(Change::MemoriesAccessed { ids: ids.to_vec() })?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO co_access (a, b, count, last_at) VALUES (?1, ?2, 1, ?3)
             ON CONFLICT (a, b) DO UPDATE SET count = co_access.count + 1, last_at = excluded.last_at",
        )?;
        for (i, &x) in ids.iter().enumerate() {
            for &y in &ids[i + 1..] {
                if x != y {
                    stmt.execute(params![x.min(y), x.max(y), now])?;
                }
            }
        }
        Ok(())
    }

    /// Joint-retrieval count of a pair.
    pub fn co_access_count(&self, x: i64, y: i64) -> Result<i64> {
        self.conn().query_row(
            "SELECT COALESCE((SELECT count FROM co_access WHERE a = ?1 AND b = ?2), 0)",
            params![x.min(y), x.max(y)],
            |r| r.get(0),
        )
    }
}

impl Tx<'_> {
    pub fn all_co_access(&self) -> Result<Vec<CoAccess>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT a, b, count, last_at FROM co_access ORDER BY a, b")?;
        let rows = stmt.query_map([], |r| {
            Ok(CoAccess {
                a: r.get(0)?,
                b: r.get(1)?,
                count: r.get(2)?,
                last_at: r.get(3)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    pub fn restore_co_access(&self, c: &CoAccess) -> Result<()> {
        self.note(Change::MemoriesAccessed {
            ids: vec![c.a, c.b],
        })?;
        self.conn().execute(
            "INSERT INTO co_access (a, b, count, last_at) VALUES (?1, ?2, ?3, ?4)",
            params![c.a, c.b, c.count, c.last_at],
        )?;
        Ok(())
    }
}
