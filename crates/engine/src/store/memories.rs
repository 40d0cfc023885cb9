//! Queries on `memories`.

use super::sql::Dialect;
use super::sql::Value;
use super::sql::{params, OptionalExtension, Row};
use super::stale::confirmed;
use super::{blob_to_vec, vec_to_blob, Change, Tx};
use crate::memory::{Details, Kind, Memory, NewMemory, Source, State, W5H1};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

const COLUMNS: &str =
    "m.id, m.kind, m.text, m.who, m.what, m.\"when\", m.\"where\", m.why, m.how, m.conversation, \
     m.session, m.occurred_at, m.created_at, m.updated_at, m.importance, m.novelty, \
     COALESCE(a.count, 0), a.last_at, m.state, m.tags, m.source, m.l_score, m.metadata, m.details, \
     m.deleted_at, m.tokens, m.pinned, m.valid_from, m.valid_to, m.superseded_by";

/// What [`COLUMNS`] are read from: a memory (`m`) with its access counts (`a`, kept in a
/// narrow table of their own: see migration 0006).
const FROM: &str = "memories m LEFT JOIN memory_access a ON a.memory_id = m.id";

/// What a point of a visualisation needs of one visible memory (see `points`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointRow {
    pub id: i64,
    pub kind: Kind,
    pub state: State,
    /// Cluster id, or -1 when the memory is in no cluster.
    pub cluster: i64,
    /// `occurred_at`, falling back to `created_at`.
    pub time: i64,
    pub access_count: i64,
    pub importance: f64,
    /// Liquid energy as stored (0 when never set) and the step it was stored at.
    pub energy: f64,
    pub energy_step: i64,
}

/// Which memories a listing or search considers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MemoryFilter {
    /// Empty: every kind.
    #[serde(default)]
    pub kinds: Vec<Kind>,
    /// Empty: every state except `forgotten`.
    #[serde(default)]
    pub states: Vec<State>,
    pub who: Option<String>,
    pub conversation: Option<String>,
    /// Inclusive range on `occurred_at` (memories without one are excluded when set).
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// Soft-deleted memories are hidden unless this is set.
    #[serde(default)]
    pub include_deleted: bool,
    /// Only members of this concept cluster. Checked in SQL only: [`MemoryFilter::matches`]
    /// cannot see cluster membership, so searches apply it through the allowed-id set.
    #[serde(default)]
    pub cluster: Option<i64>,
    /// Facts another fact replaced: hidden (the default), included, only those, or only
    /// the stale facts (those and the contested ones: see [`Superseded::Stale`]). Ignored
    /// when `valid_at` is set.
    #[serde(default)]
    pub superseded: Superseded,
    /// For [`Superseded::Stale`]: how many days without confirmation make a contradicted
    /// fact stale (default [`STALE_DAYS`]).
    #[serde(default)]
    pub stale_days: Option<u32>,
    /// What held at this event time (Unix ms): facts valid then (superseded or not), and
    /// other memories that had occurred by then.
    #[serde(default)]
    pub valid_at: Option<i64>,
}

/// What a filter does with superseded facts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Superseded {
    #[default]
    Hide,
    Include,
    Only,
    /// Only stale facts: the superseded ones, and the facts not confirmed in the filter's
    /// `stale_days` while a newer fact contradicts them. A fact is confirmed when it held
    /// from, when it was said again (a re-statement reconciliation kept as a duplicate) and
    /// when a search retrieved it; a contradiction is the pair reconciliation would replace
    /// (the same single-valued attribute with another value, or a negation) found across
    /// conversations, where reconciliation does not replace. Checked in SQL only (like
    /// `cluster`): [`MemoryFilter::matches`] lets every fact through.
    Stale,
}

/// Days without confirmation after which a contradicted fact is stale, by default.
pub const STALE_DAYS: u32 = 30;

impl MemoryFilter {
    /// True when only the default visibility applies (no deleted, no forgotten memories).
    pub fn is_default_visibility(&self) -> bool {
        self.kinds.is_empty()
            && self.states.is_empty()
            && self.who.is_none()
            && self.conversation.is_none()
            && self.from.is_none()
            && self.to.is_none()
            && !self.include_deleted
            && self.cluster.is_none()
            && self.superseded == Superseded::Hide
            && self.valid_at.is_none()
    }

    /// Refuses what a reading of the past cannot answer: the stale rule reads confirmations
    /// and contradictions as they are now.
    pub fn check_as_of(&self) -> Result<()> {
        if self.superseded == Superseded::Stale {
            return Err(Error::InvalidInput(
                "the stale filter reads the store as it is now; it cannot be combined with as_of"
                    .into(),
            ));
        }
        Ok(())
    }

    /// SQL condition (on table alias `m`) and its parameters.
    pub(crate) fn to_sql(&self, d: Dialect) -> (String, Vec<Value>) {
        let mut conds: Vec<String> = Vec::new();
        let mut params: Vec<Value> = Vec::new();
        if !self.include_deleted {
            conds.push("m.deleted_at IS NULL".into());
        }
        if !self.kinds.is_empty() {
            conds.push(format!("m.kind IN ({})", placeholders(self.kinds.len())));
            params.extend(self.kinds.iter().map(|k| Value::Text(k.as_str().into())));
        }
        if self.states.is_empty() {
            conds.push("m.state != 'forgotten'".into());
        } else if State::ALL.iter().all(|s| self.states.contains(s)) {
            // Every state: no condition. `state IN (all five)` leads SQLite to walk the state
            // index over every row (80–150 ms at 100K) instead of a narrower index, such as
            // the superseded one search reads on every query.
        } else {
            conds.push(format!("m.state IN ({})", placeholders(self.states.len())));
            params.extend(self.states.iter().map(|s| Value::Text(s.as_str().into())));
        }
        if let Some(who) = &self.who {
            conds.push("lower(m.who) = lower(?)".into());
            params.push(Value::Text(who.clone()));
        }
        if let Some(c) = &self.conversation {
            conds.push("m.conversation = ?".into());
            params.push(Value::Text(c.clone()));
        }
        if let Some(from) = self.from {
            conds.push("m.occurred_at >= ?".into());
            params.push(Value::Integer(from));
        }
        if let Some(to) = self.to {
            conds.push("m.occurred_at <= ?".into());
            params.push(Value::Integer(to));
        }
        if let Some(c) = self.cluster {
            conds.push(
                "m.id IN (SELECT memory_id FROM cluster_members WHERE cluster_id = ?)".into(),
            );
            params.push(Value::Integer(c));
        }
        match (self.valid_at, self.superseded) {
            (Some(t), _) => {
                conds.push(
                    "(m.kind != 'fact' OR (COALESCE(m.valid_from, m.occurred_at, m.created_at) <= ? \
                     AND (m.valid_to IS NULL OR m.valid_to > ?))) \
                     AND (m.occurred_at IS NULL OR m.occurred_at <= ?)"
                        .into(),
                );
                params.extend([Value::Integer(t), Value::Integer(t), Value::Integer(t)]);
            }
            (None, Superseded::Hide) => conds.push("m.superseded_by IS NULL".into()),
            (None, Superseded::Include) => {}
            (None, Superseded::Only) => conds.push("m.superseded_by IS NOT NULL".into()),
            (None, Superseded::Stale) => {
                conds.push(format!(
                    "(m.superseded_by IS NOT NULL OR (m.kind = 'fact' AND EXISTS \
                     (SELECT 1 FROM fact_contradictions c JOIN memories n ON n.id = c.by_id \
                      WHERE c.fact_id = m.id AND n.deleted_at IS NULL) AND {} < ?))",
                    confirmed(d)
                ));
                let days = i64::from(self.stale_days.unwrap_or(STALE_DAYS));
                params.push(Value::Integer(super::now_ms() - days * 86_400_000));
            }
        }
        let sql = if conds.is_empty() {
            "TRUE".to_string()
        } else {
            conds.join(" AND ")
        };
        (sql, params)
    }

    /// True when `m` passes this filter (the in-memory twin of `to_sql`).
    pub fn matches(&self, m: &Memory) -> bool {
        (self.include_deleted || m.deleted_at.is_none())
            && (self.kinds.is_empty() || self.kinds.contains(&m.kind))
            && if self.states.is_empty() {
                m.state != State::Forgotten
            } else {
                self.states.contains(&m.state)
            }
            && self.who.as_ref().is_none_or(|w| {
                m.w5h1
                    .who
                    .as_ref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(w))
            })
            && self
                .conversation
                .as_ref()
                .is_none_or(|c| m.conversation.as_ref() == Some(c))
            && self
                .from
                .is_none_or(|f| m.occurred_at.is_some_and(|t| t >= f))
            && self
                .to
                .is_none_or(|t| m.occurred_at.is_some_and(|o| o <= t))
            && match (self.valid_at, self.superseded) {
                (Some(t), _) => m.valid_at(t),
                (None, Superseded::Hide) => m.superseded_by.is_none(),
                (None, Superseded::Include) => true,
                (None, Superseded::Only) => m.superseded_by.is_some(),
                (None, Superseded::Stale) => m.superseded_by.is_some() || m.kind == Kind::Fact,
            }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    #[default]
    Id,
    CreatedAt,
    UpdatedAt,
    OccurredAt,
    Importance,
    AccessCount,
    LastAccessed,
}

impl SortKey {
    fn column(self) -> &'static str {
        match self {
            SortKey::Id => "m.id",
            SortKey::CreatedAt => "m.created_at",
            SortKey::UpdatedAt => "m.updated_at",
            SortKey::OccurredAt => "m.occurred_at",
            SortKey::Importance => "m.importance",
            SortKey::AccessCount => "COALESCE(a.count, 0)",
            SortKey::LastAccessed => "a.last_at",
        }
    }
}

/// A page of a filtered, sorted listing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ListQuery {
    #[serde(default)]
    pub filter: MemoryFilter,
    #[serde(default)]
    pub sort: SortKey,
    #[serde(default)]
    pub descending: bool,
    #[serde(default)]
    pub offset: usize,
    /// 0 means 100.
    #[serde(default)]
    pub limit: usize,
}

/// Fields a user may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct MemoryUpdate {
    pub text: Option<String>,
    pub who: Option<String>,
    pub when: Option<String>,
    #[serde(rename = "where")]
    pub where_: Option<String>,
    pub why: Option<String>,
    pub how: Option<String>,
    pub importance: Option<f64>,
    pub state: Option<State>,
    pub tags: Option<Vec<String>>,
    pub metadata: Option<serde_json::Value>,
}

impl MemoryUpdate {
    /// Whether applying this update changes what is embedded.
    pub fn changes_embedding(&self) -> bool {
        self.text.is_some() || self.who.is_some() || self.why.is_some() || self.how.is_some()
    }

    /// `m` with this update applied.
    pub fn apply(&self, m: &Memory) -> Memory {
        let mut out = m.clone();
        if let Some(t) = &self.text {
            out.text = t.clone();
            out.w5h1.what = Some(t.clone());
        }
        let set = |field: &mut Option<String>, v: &Option<String>| {
            if let Some(v) = v {
                *field = (!v.is_empty()).then(|| v.clone());
            }
        };
        set(&mut out.w5h1.who, &self.who);
        set(&mut out.w5h1.when, &self.when);
        set(&mut out.w5h1.where_, &self.where_);
        set(&mut out.w5h1.why, &self.why);
        set(&mut out.w5h1.how, &self.how);
        if let Some(i) = self.importance {
            out.importance = i;
        }
        if let Some(s) = self.state {
            out.state = s;
        }
        if let Some(t) = &self.tags {
            out.tags = t.clone();
        }
        if let Some(md) = &self.metadata {
            out.metadata = md.clone();
        }
        out
    }
}

pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn parse_col<T: std::str::FromStr<Err = Error>>(row: &Row<'_>, i: usize) -> Result<T> {
    row.with_str(i, |s| {
        s.parse()
            .map_err(|e: Error| Error::Internal(format!("column {i} of a memory: {e}")))
    })
}

fn json_col<T: serde::de::DeserializeOwned>(row: &Row<'_>, i: usize) -> Result<T> {
    let s: String = row.get(i)?;
    serde_json::from_str(&s)
        .map_err(|e| Error::Internal(format!("column {i} of a memory is not JSON: {e}")))
}

fn row_to_memory(row: &Row<'_>) -> Result<Memory> {
    Ok(Memory {
        id: row.get(0)?,
        kind: parse_col::<Kind>(row, 1)?,
        text: row.get(2)?,
        w5h1: W5H1 {
            who: row.get(3)?,
            what: row.get(4)?,
            when: row.get(5)?,
            where_: row.get(6)?,
            why: row.get(7)?,
            how: row.get(8)?,
        },
        conversation: row.get(9)?,
        session: row.get(10)?,
        occurred_at: row.get(11)?,
        created_at: row.get(12)?,
        updated_at: row.get(13)?,
        importance: row.get(14)?,
        novelty: row.get(15)?,
        access_count: row.get(16)?,
        last_accessed: row.get(17)?,
        state: parse_col::<State>(row, 18)?,
        tags: json_col(row, 19)?,
        source: parse_col::<Source>(row, 20)?,
        l_score: row.get(21)?,
        metadata: json_col(row, 22)?,
        details: json_col::<Details>(row, 23)?,
        deleted_at: row.get(24)?,
        tokens: row.get(25)?,
        pinned: row.get(26)?,
        valid_from: row.get(27)?,
        valid_to: row.get(28)?,
        superseded_by: row.get(29)?,
    })
}

impl Tx<'_> {
    /// Inserts a memory with the given provenance score; returns its id.
    pub fn insert_memory(&self, m: &NewMemory, l_score: f64, now: i64) -> Result<i64> {
        self.insert_memory_with_id(None, m, l_score, now, now)
    }

    /// Inserts with an explicit id and creation time (used by the lossless JSON import).
    pub fn insert_memory_with_id(
        &self,
        id: Option<i64>,
        m: &NewMemory,
        l_score: f64,
        created_at: i64,
        updated_at: i64,
    ) -> Result<i64> {
        let id: i64 = self.conn().query_row(
            "INSERT INTO memories (id, kind, text, who, what, \"when\", \"where\", why, how, conversation,
                session, occurred_at, created_at, updated_at, importance, novelty, tags, source,
                l_score, metadata, details, valid_from)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                ?19, ?20, ?21, ?22)
             RETURNING id",
            params![
                id,
                m.kind.as_str(),
                m.text,
                m.w5h1.who,
                m.w5h1.what,
                m.w5h1.when,
                m.w5h1.where_,
                m.w5h1.why,
                m.w5h1.how,
                m.conversation,
                m.session,
                m.occurred_at,
                created_at,
                updated_at,
                m.importance.clamp(0.0, 1.0),
                m.novelty.clamp(0.0, 1.0),
                serde_json::to_string(&m.tags)?,
                m.source.as_str(),
                l_score,
                serde_json::to_string(&m.metadata)?,
                serde_json::to_string(&m.details)?,
                // A fact holds from the time of the message that said it.
                (m.kind == Kind::Fact).then(|| m.occurred_at.unwrap_or(created_at)),
            ],
            |r| r.get(0),
        )?;
        self.note(Change::MemoriesAdded { ids: vec![id] })?;
        Ok(id)
    }

    /// Memories whose token count has not been recorded.
    pub fn ids_without_tokens(&self) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id FROM memories WHERE tokens IS NULL ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Records the token count of a memory's text.
    pub fn set_tokens(&self, id: i64, tokens: usize) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![id] })?;
        self.conn()
            .prepare_cached("UPDATE memories SET tokens = ?2 WHERE id = ?1")?
            .execute(params![id, tokens as i64])?;
        Ok(())
    }

    /// Stores an embedding and stamps it with the next change-log position.
    pub fn set_embedding(&self, id: i64, embedding: &[f32]) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![id] })?;
        let conn = self.conn();
        conn.execute(
            conn.pick(
                "UPDATE memories SET embedding = ?1,
                    embed_seq = (SELECT COALESCE(MAX(embed_seq), 0) + 1 FROM memories)
                 WHERE id = ?2",
                // Postgres keeps embeddings in a table of their own (postgres/schema.sql).
                "WITH stored AS (
                     INSERT INTO memory_vectors (id, embedding) VALUES (?2, ?1)
                     ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding)
                 UPDATE memories
                 SET embed_seq = (SELECT COALESCE(MAX(embed_seq), 0) + 1 FROM memories)
                 WHERE id = ?2",
            ),
            params![vec_to_blob(embedding), id],
        )?;
        Ok(())
    }

    pub fn get_memory(&self, id: i64) -> Result<Option<Memory>> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM {FROM} WHERE m.id = ?1"),
                [id],
                row_to_memory,
            )
            .optional()
    }

    pub fn require_memory(&self, id: i64) -> Result<Memory> {
        self.get_memory(id)?.ok_or(Error::NotFound { id })
    }

    /// The memories with these ids, in the order given (missing ids are skipped).
    pub fn get_memories(&self, ids: &[i64]) -> Result<Vec<Memory>> {
        let mut found = std::collections::HashMap::with_capacity(ids.len());
        // The ids travel as one JSON array, so the statement text is the same for any count
        // and stays in the prepared-statement cache (a placeholder per id made a new
        // statement, prepared afresh, for every different count).
        let list = serde_json::to_string(ids)?;
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT {COLUMNS} FROM {FROM} WHERE m.id IN ({})",
            self.conn().json_ids("?1")
        ))?;
        for m in stmt.query_map([list], row_to_memory)? {
            let m = m?;
            found.insert(m.id, m);
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    pub fn list_memories(&self, q: &ListQuery) -> Result<Vec<Memory>> {
        self.list_memories_created_by(q, None)
    }

    /// [`Tx::list_memories`] over the memories created at or before `by` (Unix ms; `None`:
    /// all), for a listing as of an instant.
    pub fn list_memories_created_by(&self, q: &ListQuery, by: Option<i64>) -> Result<Vec<Memory>> {
        let (mut cond, mut params) = q.filter.to_sql(self.conn().dialect());
        if let Some(by) = by {
            cond = format!("({cond}) AND m.created_at <= ?");
            params.push(Value::Integer(by));
        }
        let limit = if q.limit == 0 { 100 } else { q.limit };
        let dir = if q.descending { "DESC" } else { "ASC" };
        let sql = format!(
            "SELECT {COLUMNS} FROM {FROM} WHERE {cond} ORDER BY {} {dir} NULLS LAST, m.id {dir} LIMIT ? OFFSET ?",
            q.sort.column()
        );
        params.push(Value::Integer(super::sql::count(limit)));
        params.push(Value::Integer(super::sql::count(q.offset)));
        let mut stmt = self.conn().prepare(&sql)?;
        let rows = stmt.query_map(super::sql::params_from_iter(params), row_to_memory)?;
        rows.collect::<Result<_>>()
    }

    pub fn count_memories(&self, filter: &MemoryFilter) -> Result<u64> {
        self.count_memories_created_by(filter, None)
    }

    /// [`Tx::count_memories`] over the memories created at or before `by` (`None`: all).
    /// The creation time is counted, not filtered on: as a condition it led the planner to
    /// the `memories_created` index and a row lookup per memory, three times the plain scan.
    pub fn count_memories_created_by(&self, filter: &MemoryFilter, by: Option<i64>) -> Result<u64> {
        let (cond, mut params) = filter.to_sql(self.conn().dialect());
        let counted = match by {
            Some(by) => {
                params.insert(0, Value::Integer(by));
                "COALESCE(SUM(CASE WHEN m.created_at <= ? THEN 1 ELSE 0 END), 0)"
            }
            None => "COUNT(*)",
        };
        let n: i64 = self.conn().query_row(
            &format!("SELECT {counted} FROM memories m WHERE {cond}"),
            super::sql::params_from_iter(params),
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// The latest live episode of `conversation` stored before `id`.
    pub fn previous_episode(&self, conversation: &str, id: i64) -> Result<Option<i64>> {
        use super::sql::OptionalExtension;
        self.conn()
            .prepare_cached(
                "SELECT id FROM memories WHERE conversation = ?1 AND kind = 'episode'
                   AND id < ?2 AND deleted_at IS NULL ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![conversation, id], |r| r.get(0))
            .optional()
    }

    /// The live episodes said just before and just after each of the memories `ids` in
    /// its conversation and session, by id; memories that are not found are left out.
    /// One statement for all of them (ids as one JSON array, as in `get_memories`).
    pub fn adjacent_episodes(&self, ids: &[i64]) -> Result<HashMap<i64, [Option<i64>; 2]>> {
        let list = serde_json::to_string(ids)?;
        let conn = self.conn();
        // The same conversation and session (NULL matching NULL), in a form each database
        // answers from an index: SQLite's `IS NOT DISTINCT FROM` uses `memories_turns`;
        // Postgres's does not use any, so there it compares the coalesced columns, indexed
        // as they are (`memories_turns_coalesced`).
        let same = |other: &str| match conn.dialect() {
            super::sql::Dialect::Sqlite => format!(
                "{other}.conversation IS NOT DISTINCT FROM m.conversation
                 AND {other}.session IS NOT DISTINCT FROM m.session"
            ),
            super::sql::Dialect::Postgres => format!(
                "COALESCE({other}.conversation, '') = COALESCE(m.conversation, '')
                 AND COALESCE({other}.session, '') = COALESCE(m.session, '')"
            ),
        };
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT m.id,
               (SELECT p.id FROM memories p WHERE {} AND p.kind = 'episode' AND p.id < m.id
                  AND p.deleted_at IS NULL ORDER BY p.id DESC LIMIT 1),
               (SELECT n.id FROM memories n WHERE {} AND n.kind = 'episode' AND n.id > m.id
                  AND n.deleted_at IS NULL ORDER BY n.id ASC LIMIT 1)
             FROM memories m WHERE m.id IN ({})",
            same("p"),
            same("n"),
            conn.json_ids("?1")
        ))?;
        let rows = stmt.query_map([list], |r| Ok((r.get(0)?, [r.get(1)?, r.get(2)?])))?;
        rows.collect::<Result<_>>()
    }

    /// Every episode id of `conversation`, deleted ones included, in the order stored.
    pub fn conversation_episodes(&self, conversation: &str) -> Result<Vec<i64>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT id FROM memories WHERE conversation = ?1 AND kind = 'episode' ORDER BY id",
        )?;
        let rows = stmt.query_map([conversation], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// The live rolling summaries of `conversation`: (id, window, episodes it covers).
    pub fn window_summaries(&self, conversation: &str) -> Result<Vec<(i64, usize, usize)>> {
        let conn = self.conn();
        let window = conn.json_int("metadata", "$.conversation_window");
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT id, {window}, {}
             FROM memories WHERE conversation = ?1 AND kind = 'summary' AND deleted_at IS NULL
               AND {window} IS NOT NULL",
            conn.json_int("metadata", "$.episodes")
        ))?;
        let rows = stmt.query_map([conversation], |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<i64>(1)? as usize,
                r.get::<i64>(2)? as usize,
            ))
        })?;
        rows.collect::<Result<_>>()
    }

    /// The latest `occurred_at` of each conversation.
    pub fn last_turn_times(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self.conn().prepare(
            "SELECT conversation, MAX(occurred_at) FROM memories
             WHERE conversation IS NOT NULL AND occurred_at IS NOT NULL GROUP BY conversation",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_>>()
    }

    /// Ids of at most `limit` memories passing `filter` that happened between `from` and
    /// `to` (Unix ms, inclusive), the most important first.
    pub fn occurred_between(
        &self,
        filter: &MemoryFilter,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<i64>> {
        let (cond, mut params) = filter.to_sql(self.conn().dialect());
        params.extend([from, to, super::sql::count(limit)].map(Value::Integer));
        let mut stmt = self.conn().prepare(&format!(
            "SELECT m.id FROM memories m WHERE {cond} AND m.occurred_at BETWEEN ? AND ?
             ORDER BY m.importance DESC, m.id LIMIT ?"
        ))?;
        let rows = stmt.query_map(super::sql::params_from_iter(params), |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Ids of the memories passing `filter`.
    pub fn filter_ids(&self, filter: &MemoryFilter) -> Result<Vec<i64>> {
        let (cond, params) = filter.to_sql(self.conn().dialect());
        let mut stmt = self
            .conn()
            .prepare(&format!("SELECT m.id FROM memories m WHERE {cond}"))?;
        let rows = stmt.query_map(super::sql::params_from_iter(params), |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Ids of the memories `filter` selects that belong to no cluster, ascending: what
    /// incremental clustering has left to place, among `ids` when given (the arrivals of
    /// an upkeep: the cost follows them) or in the whole store (one anti-join over it).
    pub fn unclustered_ids(
        &self,
        filter: &MemoryFilter,
        among: Option<&[i64]>,
    ) -> Result<Vec<i64>> {
        if among.is_some_and(|ids| ids.is_empty()) {
            return Ok(Vec::new());
        }
        let (mut cond, mut params) = filter.to_sql(self.conn().dialect());
        if let Some(ids) = among {
            cond = format!("{cond} AND m.id IN ({})", self.conn().json_ids("?"));
            params.push(Value::Text(serde_json::to_string(ids)?));
        }
        let mut stmt = self.conn().prepare(&format!(
            "SELECT m.id FROM memories m WHERE {cond} AND NOT EXISTS
               (SELECT 1 FROM cluster_members c WHERE c.memory_id = m.id)
             ORDER BY m.id"
        ))?;
        let rows = stmt.query_map(super::sql::params_from_iter(params), |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Writes every user-editable field of `m` (after `MemoryUpdate::apply`).
    pub fn write_memory_fields(&self, m: &Memory, now: i64) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![m.id] })?;
        self.conn().execute(
            "UPDATE memories SET text = ?2, who = ?3, what = ?4, \"when\" = ?5, \"where\" = ?6,
                why = ?7, how = ?8, importance = ?9, state = ?10, tags = ?11, metadata = ?12,
                updated_at = ?13
             WHERE id = ?1",
            params![
                m.id,
                m.text,
                m.w5h1.who,
                m.w5h1.what,
                m.w5h1.when,
                m.w5h1.where_,
                m.w5h1.why,
                m.w5h1.how,
                m.importance.clamp(0.0, 1.0),
                m.state.as_str(),
                serde_json::to_string(&m.tags)?,
                serde_json::to_string(&m.metadata)?,
                now,
            ],
        )?;
        Ok(())
    }

    /// Rewrites what a regenerated summary derives: its details, time and provenance score.
    pub fn set_summary_fields(
        &self,
        id: i64,
        details: &Details,
        occurred_at: Option<i64>,
        l_score: f64,
    ) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![id] })?;
        self.conn().execute(
            "UPDATE memories SET details = ?2, occurred_at = ?3, l_score = ?4 WHERE id = ?1",
            params![id, serde_json::to_string(details)?, occurred_at, l_score],
        )?;
        Ok(())
    }

    pub fn set_deleted(&self, id: i64, deleted_at: Option<i64>) -> Result<()> {
        self.note(match deleted_at {
            Some(_) => Change::MemoriesRemoved { ids: vec![id] },
            None => Change::MemoriesUpdated { ids: vec![id] },
        })?;
        self.conn().execute(
            "UPDATE memories SET deleted_at = ?2, updated_at = COALESCE(CAST(?2 AS BIGINT), ?3)
             WHERE id = ?1",
            params![id, deleted_at, super::now_ms()],
        )?;
        Ok(())
    }

    pub fn hard_delete(&self, id: i64) -> Result<()> {
        self.note(Change::MemoriesRemoved { ids: vec![id] })?;
        self.note(Change::Links { ids: vec![id] })?;
        self.conn().execute(
            "UPDATE messages SET memory_id = NULL WHERE memory_id = ?1",
            [id],
        )?;
        self.conn()
            .execute("DELETE FROM memories WHERE id = ?1", [id])?;
        Ok(())
    }

    /// Counts one access of each memory (an id listed twice counts once).
    pub fn touch(&self, ids: &[i64], now: i64) -> Result<()> {
        self.note(Change::MemoriesAccessed { ids: ids.to_vec() })?;
        // One statement for every id (as one JSON array): a search at k = 200 touched its
        // hits with 200 statements.
        let list = serde_json::to_string(ids)?;
        let conn = self.conn();
        conn.prepare_cached(&format!(
            "INSERT INTO memory_access (memory_id, count, last_at)
             SELECT DISTINCT value, 1, CAST(?2 AS BIGINT) FROM ({}) AS ids
             WHERE value IN (SELECT id FROM memories)
             ON CONFLICT (memory_id) DO UPDATE SET count = memory_access.count + 1,
                 last_at = excluded.last_at",
            conn.json_ids("?1")
        ))?
        .execute(params![list, now])?;
        Ok(())
    }

    /// Sets a memory's last access and keeps its count (a sleep cycle's replay, its undo).
    pub(crate) fn set_last_access(&self, id: i64, last_at: Option<i64>) -> Result<()> {
        let count: Option<i64> = self
            .conn()
            .prepare_cached("SELECT count FROM memory_access WHERE memory_id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        self.set_access(id, count.unwrap_or(0), last_at)
    }

    /// Sets a memory's access count and last access (restoring a memory as it was). A
    /// memory never accessed has no row.
    pub(crate) fn set_access(&self, id: i64, count: i64, last_at: Option<i64>) -> Result<()> {
        self.writing()?;
        if count == 0 && last_at.is_none() {
            self.conn()
                .execute("DELETE FROM memory_access WHERE memory_id = ?1", [id])?;
        } else {
            self.conn().execute(
                "INSERT INTO memory_access (memory_id, count, last_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (memory_id) DO UPDATE SET count = excluded.count, last_at = excluded.last_at",
                params![id, count, last_at],
            )?;
        }
        Ok(())
    }

    /// Every embedded memory whose embedding changed after `after_seq`, in change order:
    /// (id, vector, embed_seq). Used to build and catch up the vector index.
    pub fn embeddings_since(&self, after_seq: i64) -> Result<Vec<(i64, Vec<f32>, i64)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(conn.pick(
            "SELECT id, embedding, embed_seq FROM memories
             WHERE embedding IS NOT NULL AND deleted_at IS NULL AND embed_seq > ?1 ORDER BY embed_seq",
            "SELECT m.id, v.embedding, m.embed_seq FROM memories m JOIN memory_vectors v ON v.id = m.id
             WHERE m.deleted_at IS NULL AND m.embed_seq > ?1 ORDER BY m.embed_seq",
        ))?;
        let rows = stmt.query_map([after_seq], |r| {
            let blob: Vec<u8> = r.get(1)?;
            Ok((r.get::<i64>(0)?, blob, r.get::<i64>(2)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, blob, seq) = row?;
            let v = blob_to_vec(&blob).ok_or_else(|| {
                Error::InvalidInput(format!("memory {id} has a malformed embedding BLOB"))
            })?;
            out.push((id, v, seq));
        }
        Ok(out)
    }

    /// The highest memory id ever given, hard-deleted ones included (ids are never
    /// reused); `None` before the first memory. SQLite dialect: AUTOINCREMENT keeps it in
    /// `sqlite_sequence` (Postgres: the sequence of `memories.id`).
    pub fn last_memory_id(&self) -> Result<Option<i64>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                conn.pick(
                    "SELECT seq FROM sqlite_sequence WHERE name = 'memories'",
                    "SELECT pg_sequence_last_value('memories_id_seq')",
                ),
                [],
                |r| r.get::<Option<i64>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Makes `last` the highest memory id given so far unless a higher one was: a restored
    /// store never reuses an id its source gave to a memory removed since.
    pub fn raise_last_memory_id(&self, last: i64) -> Result<()> {
        self.writing()?;
        if self.conn().dialect() == Dialect::Postgres {
            if last > self.last_memory_id()?.unwrap_or(0) {
                self.conn()
                    .query_row("SELECT setval('memories_id_seq', ?1)", [last], |r| {
                        r.get::<i64>(0)
                    })?;
            }
            return Ok(());
        }
        let updated = self.conn().execute(
            "UPDATE sqlite_sequence SET seq = MAX(seq, ?1) WHERE name = 'memories'",
            [last],
        )?;
        if updated == 0 {
            self.conn().execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('memories', ?1)",
                [last],
            )?;
        }
        Ok(())
    }

    pub fn max_embed_seq(&self) -> Result<i64> {
        self.conn().query_row(
            "SELECT COALESCE(MAX(embed_seq), 0) FROM memories",
            [],
            |r| r.get(0),
        )
    }

    pub fn embedding_of(&self, id: i64) -> Result<Option<Vec<f32>>> {
        let conn = self.conn();
        let blob: Option<Vec<u8>> = conn
            .query_row(
                conn.pick(
                    "SELECT embedding FROM memories WHERE id = ?1",
                    "SELECT embedding FROM memory_vectors WHERE id = ?1",
                ),
                [id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        Ok(blob.and_then(|b| blob_to_vec(&b)))
    }

    /// Memories (not deleted) that have an embedding.
    pub fn count_embedded(&self) -> Result<usize> {
        let conn = self.conn();
        let n: i64 = conn.query_row(
            conn.pick(
                "SELECT COUNT(*) FROM memories WHERE embedding IS NOT NULL AND deleted_at IS NULL",
                "SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.id = v.id
                 WHERE m.deleted_at IS NULL",
            ),
            [],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// The embeddings of those of `ids` that have one, in one query.
    pub fn embeddings_of(&self, ids: &[i64]) -> Result<Vec<(i64, Vec<f32>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.conn();
        let sql = format!(
            "{} WHERE id IN ({})",
            conn.pick(
                "SELECT id, embedding FROM memories",
                "SELECT id, embedding FROM memory_vectors"
            ),
            conn.json_ids("?1")
        );
        let mut stmt = conn.prepare(&sql)?;
        let ids = serde_json::to_string(ids)?;
        let rows = stmt.query_map([ids], |r| {
            Ok((r.get::<i64>(0)?, r.get::<Option<Vec<u8>>>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            if let (id, Some(v)) = row? {
                out.extend(blob_to_vec(&v).map(|v| (id, v)));
            }
        }
        Ok(out)
    }

    /// Ids of memories that have text but no embedding yet (an interrupted import).
    pub fn unembedded_ids(&self) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(conn.pick(
            "SELECT id FROM memories WHERE embedding IS NULL ORDER BY id",
            "SELECT id FROM memories m
             WHERE NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.id = m.id) ORDER BY id",
        ))?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }
}

impl Tx<'_> {
    /// Restores exported memories exactly (see [`Tx::restore_memory`]), in order. On
    /// Postgres the batch is written in one statement and its vectors in one more, each
    /// row once: a row inserted and then updated twice cost three round trips and left
    /// two dead versions behind it (a restored `memories` three times its size).
    pub fn restore_memories(&self, batch: &[(&Memory, Option<&[f32]>)]) -> Result<()> {
        if self.conn().dialect() == Dialect::Sqlite {
            for (m, embedding) in batch {
                self.restore_memory(m, *embedding)?;
            }
            return Ok(());
        }
        self.note(Change::MemoriesAdded {
            ids: batch.iter().map(|(m, _)| m.id).collect(),
        })?;
        let mut embedded = 0;
        let mut rows = Vec::with_capacity(batch.len());
        let mut vectors = Vec::new();
        let mut access = Vec::new();
        for (m, embedding) in batch {
            let order = embedding.map(|v| {
                embedded += 1;
                vectors.push(serde_json::json!({ "id": m.id, "embedding": v }));
                embedded
            });
            if m.access_count != 0 || m.last_accessed.is_some() {
                access.push(serde_json::json!({
                    "id": m.id, "count": m.access_count, "last_at": m.last_accessed,
                }));
            }
            rows.push(serde_json::json!({
                "id": m.id,
                "kind": m.kind.as_str(),
                "text": m.text,
                "who": m.w5h1.who,
                "what": m.w5h1.what,
                "when": m.w5h1.when,
                "where": m.w5h1.where_,
                "why": m.w5h1.why,
                "how": m.w5h1.how,
                "conversation": m.conversation,
                "session": m.session,
                "occurred_at": m.occurred_at,
                "created_at": m.created_at,
                "updated_at": m.updated_at,
                "importance": m.importance.clamp(0.0, 1.0),
                "novelty": m.novelty.clamp(0.0, 1.0),
                "state": m.state.as_str(),
                "tags": serde_json::to_string(&m.tags)?,
                "source": m.source.as_str(),
                "l_score": m.l_score,
                "metadata": serde_json::to_string(&m.metadata)?,
                "details": serde_json::to_string(&m.details)?,
                "embedded": order,
                "deleted_at": m.deleted_at,
                "tokens": m.tokens,
                "pinned": i64::from(m.pinned),
                // As `insert_memory_with_id` sets it when the export has none.
                "valid_from": m.valid_from.or_else(|| {
                    (m.kind == Kind::Fact).then(|| m.occurred_at.unwrap_or(m.created_at))
                }),
                "valid_to": m.valid_to,
                "superseded_by": m.superseded_by,
            }));
        }
        let conn = self.conn();
        conn.prepare_cached(
            "INSERT INTO memories (id, kind, text, who, what, \"when\", \"where\", why, how,
                conversation, session, occurred_at, created_at, updated_at, importance, novelty,
                state, tags, source, l_score, metadata, details, embed_seq, deleted_at, tokens,
                pinned, valid_from, valid_to, superseded_by)
             SELECT r.id, r.kind, r.text, r.who, r.what, r.\"when\", r.\"where\", r.why, r.how,
                r.conversation, r.session, r.occurred_at, r.created_at, r.updated_at,
                r.importance, r.novelty, r.state, r.tags, r.source, r.l_score, r.metadata,
                r.details, b.seq + r.embedded, r.deleted_at, r.tokens, r.pinned, r.valid_from,
                r.valid_to, r.superseded_by
             FROM json_to_recordset(CAST(?1 AS json)) AS r (id BIGINT, kind TEXT, text TEXT,
                who TEXT, what TEXT, \"when\" TEXT, \"where\" TEXT, why TEXT, how TEXT,
                conversation TEXT, session TEXT, occurred_at BIGINT, created_at BIGINT,
                updated_at BIGINT, importance DOUBLE PRECISION, novelty DOUBLE PRECISION,
                state TEXT, tags TEXT, source TEXT, l_score DOUBLE PRECISION, metadata TEXT,
                details TEXT, embedded BIGINT, deleted_at BIGINT, tokens BIGINT, pinned BIGINT,
                valid_from BIGINT, valid_to BIGINT, superseded_by BIGINT),
                (SELECT COALESCE(MAX(embed_seq), 0) AS seq FROM memories) AS b",
        )?
        .execute([serde_json::to_string(&rows)?])?;
        if !vectors.is_empty() {
            // A JSON array of numbers is also pgvector's text form of a vector.
            conn.prepare_cached(
                "INSERT INTO memory_vectors (id, embedding)
                 SELECT r.id, CAST(r.embedding AS vector)
                 FROM json_to_recordset(CAST(?1 AS json)) AS r (id BIGINT, embedding TEXT)",
            )?
            .execute([serde_json::to_string(&vectors)?])?;
        }
        if !access.is_empty() {
            conn.prepare_cached(
                "INSERT INTO memory_access (memory_id, count, last_at)
                 SELECT r.id, r.count, r.last_at
                 FROM json_to_recordset(CAST(?1 AS json)) AS r (id BIGINT, count BIGINT,
                    last_at BIGINT)",
            )?
            .execute([serde_json::to_string(&access)?])?;
        }
        Ok(())
    }

    /// Restores an exported memory exactly: id, times, counters, state and embedding.
    pub fn restore_memory(&self, m: &Memory, embedding: Option<&[f32]>) -> Result<()> {
        let new = NewMemory {
            kind: m.kind,
            text: m.text.clone(),
            w5h1: m.w5h1.clone(),
            conversation: m.conversation.clone(),
            session: m.session.clone(),
            occurred_at: m.occurred_at,
            importance: m.importance,
            novelty: m.novelty,
            tags: m.tags.clone(),
            source: m.source,
            parents: Vec::new(),
            metadata: m.metadata.clone(),
            details: m.details.clone(),
        };
        self.insert_memory_with_id(Some(m.id), &new, m.l_score, m.created_at, m.updated_at)?;
        self.conn().execute(
            "UPDATE memories SET state = ?2, deleted_at = ?3, tokens = ?4, pinned = ?5,
                valid_from = COALESCE(?6, valid_from), valid_to = ?7, superseded_by = ?8 WHERE id = ?1",
            params![
                m.id,
                m.state.as_str(),
                m.deleted_at,
                m.tokens,
                m.pinned,
                m.valid_from,
                m.valid_to,
                m.superseded_by
            ],
        )?;
        self.set_access(m.id, m.access_count, m.last_accessed)?;
        if let Some(v) = embedding {
            self.set_embedding(m.id, v)?;
        }
        Ok(())
    }

    /// Every member of cluster `cluster`, whatever its state (deleted, forgotten and
    /// superseded ones too): what time travel checks a memory of the past against.
    pub fn cluster_member_ids(&self, cluster: i64) -> Result<HashSet<i64>> {
        Ok(self
            .filter_ids(&MemoryFilter {
                cluster: Some(cluster),
                include_deleted: true,
                states: State::ALL.to_vec(),
                superseded: Superseded::Include,
                ..Default::default()
            })?
            .into_iter()
            .collect())
    }

    /// Closes fact `old`'s validity at `valid_to`: fact `new` replaced it.
    pub fn supersede(&self, old: i64, new: i64, valid_to: i64) -> Result<()> {
        self.note(Change::MemoriesUpdated { ids: vec![old] })?;
        self.conn().execute(
            "UPDATE memories SET valid_to = ?2, superseded_by = ?3 WHERE id = ?1",
            params![old, valid_to, new],
        )?;
        Ok(())
    }

    /// Ids of the memories created after `at` (Unix ms), in no order, by the
    /// `memories_created` index alone.
    pub fn ids_created_after(&self, at: i64) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT id FROM memories WHERE created_at > ?1")?;
        let rows = stmt.query_map([at], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }

    /// Every memory, deleted ones included, by id (for export).
    pub fn all_memories(&self) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn()
            .prepare(&format!("SELECT {COLUMNS} FROM {FROM} ORDER BY m.id"))?;
        let rows = stmt.query_map([], row_to_memory)?;
        rows.collect::<Result<_>>()
    }

    /// Every memory not deleted whose id is in `ids`, by id, without its 5W1H, tags,
    /// metadata and details (left empty), pushed onto `out`: what the lifecycle rules read
    /// (replay, batching, decay, forgetting) at a fraction of [`Tx::all_memories`]' cost,
    /// most of which is those columns' strings and JSON. Two ranges can be read on two
    /// connections at once, and the rows of both go into one list made large enough.
    pub fn memories_for_lifecycle(
        &self,
        ids: std::ops::Range<i64>,
        out: &mut Vec<Memory>,
    ) -> Result<()> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT m.id, m.kind, m.text, m.conversation, m.session, m.occurred_at, m.created_at,
                    m.updated_at, m.importance, m.novelty, COALESCE(a.count, 0), a.last_at,
                    m.state, m.source, m.l_score, m.deleted_at, m.tokens, m.pinned,
                    m.valid_from, m.valid_to, m.superseded_by
             FROM {FROM} WHERE m.deleted_at IS NULL AND m.id >= ?1 AND m.id < ?2
             ORDER BY m.id"
        ))?;
        // Each row straight onto `out` (`query_map` would first collect every row in a list
        // of its own: 60 MB more at 100K memories, written and then copied).
        stmt.for_each([ids.start, ids.end], |row| {
            out.push(Memory {
                id: row.get(0)?,
                kind: parse_col::<Kind>(row, 1)?,
                text: row.get(2)?,
                w5h1: W5H1::default(),
                conversation: row.get(3)?,
                session: row.get(4)?,
                occurred_at: row.get(5)?,
                created_at: row.get(6)?,
                updated_at: row.get(7)?,
                importance: row.get(8)?,
                novelty: row.get(9)?,
                access_count: row.get(10)?,
                last_accessed: row.get(11)?,
                state: parse_col::<State>(row, 12)?,
                tags: Vec::new(),
                source: parse_col::<Source>(row, 13)?,
                l_score: row.get(14)?,
                metadata: serde_json::Value::Null,
                details: Details::None,
                deleted_at: row.get(15)?,
                tokens: row.get(16)?,
                pinned: row.get(17)?,
                valid_from: row.get(18)?,
                valid_to: row.get(19)?,
                superseded_by: row.get(20)?,
            });
            Ok(true)
        })
    }

    /// The lowest and highest memory id and how many memories there are, deleted ones
    /// included (`(0, 0, 0)` when the store has none): where [`Tx::memories_for_lifecycle`]'s
    /// reads can be split, and how many rows they can return at most.
    pub fn memory_id_bounds(&self) -> Result<(i64, i64, usize)> {
        self.conn().query_row(
            "SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0), COUNT(*) FROM memories",
            [],
            |r| {
                let count: i64 = r.get(2)?;
                Ok((r.get(0)?, r.get(1)?, usize::try_from(count).unwrap_or(0)))
            },
        )
    }

    /// Every visible (not deleted, not forgotten) memory's point attributes, by id, handed
    /// to `each` row by row (a store of millions is read without a list of rows).
    pub fn point_rows(&self, each: &mut dyn FnMut(PointRow)) -> Result<()> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT m.id, m.kind, m.state, COALESCE(c.cluster_id, -1),
                    COALESCE(m.occurred_at, m.created_at), COALESCE(a.count, 0), m.importance,
                    COALESCE(e.energy, 0), COALESCE(e.at_step, 0)
             FROM memories m
             LEFT JOIN memory_access a ON a.memory_id = m.id
             LEFT JOIN cluster_members c ON c.memory_id = m.id
             LEFT JOIN memory_energy e ON e.memory_id = m.id
             WHERE m.deleted_at IS NULL AND m.state != 'forgotten'
             ORDER BY m.id",
        )?;
        stmt.for_each([], |r| {
            let kind: String = r.get(1)?;
            let state: String = r.get(2)?;
            each(PointRow {
                id: r.get(0)?,
                kind: kind.parse()?,
                state: state.parse()?,
                cluster: r.get(3)?,
                time: r.get(4)?,
                access_count: r.get(5)?,
                importance: r.get(6)?,
                energy: r.get(7)?,
                energy_step: r.get(8)?,
            });
            Ok(true)
        })
    }

    /// Distinct speaker names of episodes and facts.
    pub fn actors(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn().prepare(
            "SELECT DISTINCT who FROM memories WHERE who IS NOT NULL AND who != '' ORDER BY who",
        )?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_>>()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Store;
    use super::{MemoryFilter, Superseded};
    use crate::memory::{Kind, NewMemory, State};
    use crate::store::sql::Dialect;

    #[test]
    fn a_filter_over_every_state_adds_no_state_condition_so_search_reads_the_superseded_index() {
        let superseded = MemoryFilter {
            states: State::ALL.to_vec(),
            include_deleted: true,
            superseded: Superseded::Only,
            ..Default::default()
        };
        let (cond, _) = superseded.to_sql(Dialect::Sqlite);
        assert!(!cond.contains("m.state"), "{cond}");
        let store = Store::open_in_memory().unwrap();
        let plan: String = store
            .snapshot(|tx| {
                let (cond, _) = superseded.to_sql(Dialect::Sqlite);
                tx.conn().query_row(
                    &format!("EXPLAIN QUERY PLAN SELECT m.id FROM memories m WHERE {cond}"),
                    [],
                    |r| r.get::<String>(3),
                )
            })
            .unwrap();
        assert!(plan.contains("memories_superseded"), "{plan}");
        let (cond, _) = MemoryFilter {
            states: vec![State::Forgotten],
            ..Default::default()
        }
        .to_sql(Dialect::Sqlite);
        assert!(cond.contains("m.state IN"), "{cond}");
    }

    #[test]
    fn a_listing_and_a_count_by_an_instant_leave_out_what_was_created_after_it() {
        let mut store = Store::open_in_memory().unwrap();
        let ids = store
            .transaction(|tx| {
                let mut ids = Vec::new();
                for (i, created) in [30, 10, 20, 40].into_iter().enumerate() {
                    let mut m = NewMemory::new(Kind::Episode, format!("m{i}"));
                    m.conversation = Some(if i == 2 { "b" } else { "a" }.into());
                    ids.push(tx.insert_memory(&m, 1.0, created)?);
                }
                Ok(ids)
            })
            .unwrap();
        let in_a = MemoryFilter {
            conversation: Some("a".into()),
            ..Default::default()
        };
        let q = super::ListQuery {
            filter: in_a.clone(),
            limit: 10,
            ..Default::default()
        };
        let (listed, counted, all, later) = store
            .snapshot(|tx| {
                let listed: Vec<i64> = tx
                    .list_memories_created_by(&q, Some(30))?
                    .iter()
                    .map(|m| m.id)
                    .collect();
                let mut later = tx.ids_created_after(20)?;
                later.sort_unstable();
                Ok((
                    listed,
                    tx.count_memories_created_by(&in_a, Some(30))?,
                    tx.count_memories_created_by(&in_a, None)?,
                    later,
                ))
            })
            .unwrap();
        assert_eq!(
            listed,
            vec![ids[0], ids[1]],
            "created by 30, in a: newest id first"
        );
        assert_eq!((counted, all), (2, 3));
        assert_eq!(later, vec![ids[0], ids[3]]);
        let none_yet = store
            .snapshot(|tx| tx.count_memories_created_by(&in_a, Some(5)))
            .unwrap();
        assert_eq!(none_yet, 0);
    }

    #[test]
    fn memories_that_happened_between_two_times_come_most_important_first_within_the_filter() {
        let mut store = Store::open_in_memory().unwrap();
        let day = 86_400_000;
        let ids = store
            .transaction(|tx| {
                let mut ids = Vec::new();
                for (i, (at, conversation, importance)) in [
                    (Some(10 * day), "a", 0.2),
                    (Some(11 * day), "a", 0.9),
                    (Some(11 * day), "b", 0.9),
                    (Some(40 * day), "a", 1.0),
                    (None, "a", 1.0),
                ]
                .into_iter()
                .enumerate()
                {
                    let mut m = NewMemory::new(Kind::Episode, format!("m{i}"));
                    m.occurred_at = at;
                    m.conversation = Some(conversation.into());
                    m.importance = importance;
                    ids.push(tx.insert_memory(&m, 1.0, 0)?);
                }
                Ok(ids)
            })
            .unwrap();
        let in_a = MemoryFilter {
            conversation: Some("a".into()),
            ..Default::default()
        };
        let found = store
            .snapshot(|tx| tx.occurred_between(&in_a, 10 * day, 12 * day, 10))
            .unwrap();
        assert_eq!(found, vec![ids[1], ids[0]]);
        let first = store
            .snapshot(|tx| tx.occurred_between(&in_a, 10 * day, 12 * day, 1))
            .unwrap();
        assert_eq!(first, vec![ids[1]]);
    }
}
