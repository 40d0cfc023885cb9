//! Queries on `links`.

use super::sql::params;
use super::{Change, Tx};
use crate::memory::LinkKind;
use crate::Result;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Link {
    pub src: i64,
    pub dst: i64,
    pub kind: LinkKind,
    pub score: f64,
    pub created_at: i64,
}

impl Tx<'_> {
    /// Inserts or re-scores a link.
    pub fn upsert_link(
        &self,
        src: i64,
        dst: i64,
        kind: LinkKind,
        score: f64,
        now: i64,
    ) -> Result<()> {
        self.note(Change::Links {
            ids: vec![src, dst],
        })?;
        self.conn()
            .prepare_cached(
                "INSERT INTO links (src, dst, kind, score, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (src, dst, kind) DO UPDATE SET score = excluded.score",
            )?
            .execute(params![src, dst, kind.as_str(), score, now])?;
        Ok(())
    }

    /// Inserts or re-scores every link of `links`, as [`Tx::upsert_link`] does each; on
    /// Postgres in statements of a thousand (the last of a key given twice wins).
    pub fn upsert_links(&self, links: &[Link]) -> Result<()> {
        if self.conn().dialect() == super::sql::Dialect::Sqlite {
            for l in links {
                self.upsert_link(l.src, l.dst, l.kind, l.score, l.created_at)?;
            }
            return Ok(());
        }
        for batch in links.chunks(1000) {
            let mut rows = std::collections::BTreeMap::new();
            for l in batch {
                rows.insert((l.src, l.dst, l.kind.as_str()), (l.score, l.created_at));
            }
            self.note(Change::Links {
                ids: rows.keys().flat_map(|k| [k.0, k.1]).collect(),
            })?;
            let rows: Vec<_> = rows
                .into_iter()
                .map(|((src, dst, kind), (score, at))| {
                    serde_json::json!({
                        "src": src, "dst": dst, "kind": kind, "score": score, "created_at": at,
                    })
                })
                .collect();
            self.conn()
                .prepare_cached(
                    "INSERT INTO links (src, dst, kind, score, created_at)
                     SELECT r.src, r.dst, r.kind, r.score, r.created_at
                     FROM json_to_recordset(CAST(?1 AS json)) AS r (src BIGINT, dst BIGINT,
                        kind TEXT, score DOUBLE PRECISION, created_at BIGINT)
                     ON CONFLICT (src, dst, kind) DO UPDATE SET score = excluded.score",
                )?
                .execute([serde_json::to_string(&rows)?])?;
        }
        Ok(())
    }

    /// Links touching `id` in either direction.
    pub fn links_of(&self, id: i64) -> Result<Vec<Link>> {
        self.query_links(
            "SELECT src, dst, kind, score, created_at FROM links WHERE src = ?1
             UNION ALL
             SELECT src, dst, kind, score, created_at FROM links WHERE dst = ?1 AND src != ?1",
            &[&id],
        )
    }

    fn query_links(&self, sql: &str, params: &[&dyn super::sql::ToArg]) -> Result<Vec<Link>> {
        let mut stmt = self.conn().prepare_cached(sql)?;
        let rows = stmt.query_map(params, |r| {
            let kind: String = r.get(2)?;
            Ok((r.get(0)?, r.get(1)?, kind, r.get(3)?, r.get(4)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (src, dst, kind, score, created_at) = row?;
            out.push(Link {
                src,
                dst,
                kind: kind.parse()?,
                score,
                created_at,
            });
        }
        Ok(out)
    }

    /// Outgoing links of `id` of the given kinds, strongest first.
    pub fn neighbours(&self, id: i64, kinds: &[LinkKind]) -> Result<Vec<(i64, f64)>> {
        Ok(self
            .links_of(id)?
            .into_iter()
            .filter(|l| l.src == id && kinds.contains(&l.kind))
            .map(|l| (l.dst, l.score))
            .collect())
    }

    /// Removes the `similar` links of `id` in both directions (before re-linking it).
    pub fn clear_similar_links(&self, id: i64) -> Result<()> {
        self.note(Change::Links { ids: vec![id] })?;
        self.conn().execute(
            "DELETE FROM links WHERE kind = 'similar' AND (src = ?1 OR dst = ?1)",
            [id],
        )?;
        Ok(())
    }

    /// Removes the `derived_from` links of `src` (before re-deriving it).
    pub fn clear_derived_links(&self, src: i64) -> Result<()> {
        self.note(Change::Links { ids: vec![src] })?;
        self.conn().execute(
            "DELETE FROM links WHERE src = ?1 AND kind = 'derived_from'",
            [src],
        )?;
        Ok(())
    }

    /// Whether any causal or derived link exists (uses the kind index).
    pub fn has_causal_links(&self) -> Result<bool> {
        self.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM links WHERE kind IN ('causal', 'derived_from'))",
            [],
            |r| r.get(0),
        )
    }

    pub fn count_links(&self) -> Result<u64> {
        let n: i64 = self
            .conn()
            .query_row("SELECT COUNT(*) FROM links", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// The `limit` visible memories with the most outgoing links, most linked first.
    pub fn most_linked(&self, limit: usize) -> Result<Vec<i64>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT l.src FROM links l JOIN memories m ON m.id = l.src
             WHERE m.deleted_at IS NULL AND m.state != 'forgotten'
             GROUP BY l.src ORDER BY COUNT(*) DESC, l.src LIMIT ?1",
        )?;
        let rows = stmt.query_map([super::sql::count(limit)], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    pub fn all_links(&self) -> Result<Vec<Link>> {
        self.query_links(
            "SELECT src, dst, kind, score, created_at FROM links ORDER BY src, dst, kind",
            &[],
        )
    }
}
