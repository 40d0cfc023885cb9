//! Writing and reading memories: add, import, get, list, update, delete, restore, history,
//! similar. Every write keeps the store clustered (see [`Api::keep_clustered`]).

use crate::limits::{ADD_MESSAGES, LIST_LIMIT, SIMILAR_K};
use crate::Api;
use serde::{Deserialize, Serialize};
use somna_engine::cluster::ClusterUpkeep;
use somna_engine::ingest::{ImportFormat, ImportOutcome};
use somna_engine::points::Similar;
use somna_engine::store::{HistoryEntry, SortKey, Superseded};
use somna_engine::{
    AddOptions, AddReport, Error, Job, Kind, ListQuery, Memory, MemoryDetail, MemoryFilter,
    MemoryUpdate, Message, Page, Result, Source, State,
};

/// Which memories an operation sees. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct Filters {
    /// Only these kinds (default: every kind).
    #[serde(default)]
    pub kinds: Vec<Kind>,
    /// Only these states (default: every state except forgotten).
    #[serde(default)]
    pub states: Vec<State>,
    /// Only memories about this actor (speaker name).
    pub who: Option<String>,
    /// Only memories of this conversation.
    pub conversation: Option<String>,
    /// Occurred at or after this time (Unix milliseconds).
    pub from: Option<i64>,
    /// Occurred at or before this time (Unix milliseconds).
    pub to: Option<i64>,
    /// Include soft-deleted memories.
    #[serde(default)]
    pub include_deleted: bool,
    /// Only members of this concept cluster.
    pub cluster: Option<i64>,
    /// Facts another fact replaced: hide (default), include, only those, or stale (those,
    /// and facts not confirmed in `stale_days` while a newer fact contradicts them).
    pub superseded: Option<Superseded>,
    /// With `superseded: stale`: days without confirmation (1 to 3650, default 30).
    pub stale_days: Option<u32>,
    /// What held at this event time (Unix milliseconds): facts valid then, superseded or
    /// not, and other memories that had occurred by then.
    pub valid_at: Option<i64>,
}

impl Filters {
    /// `stale_days`, if it is in range and the filter asks for stale facts.
    fn stale_days(&self) -> Result<Option<u32>> {
        let Some(days) = self.stale_days else {
            return Ok(None);
        };
        if self.superseded != Some(Superseded::Stale) {
            return Err(Error::InvalidInput(
                "filters.stale_days applies only with filters.superseded = stale".into(),
            ));
        }
        crate::limits::STALE_DAYS.check(Some(days as usize))?;
        Ok(Some(days))
    }

    /// The engine's filter, after checking that the time range is not reversed.
    pub fn to_filter(&self) -> Result<MemoryFilter> {
        if let (Some(f), Some(t)) = (self.from, self.to) {
            if f > t {
                return Err(Error::InvalidInput(format!(
                    "filters.from ({f}) is after filters.to ({t})"
                )));
            }
        }
        Ok(MemoryFilter {
            kinds: self.kinds.clone(),
            states: self.states.clone(),
            who: self.who.clone(),
            conversation: self.conversation.clone(),
            from: self.from,
            to: self.to,
            include_deleted: self.include_deleted,
            cluster: self.cluster,
            superseded: self.superseded.unwrap_or_default(),
            stale_days: self.stale_days()?,
            valid_at: self.valid_at,
        })
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct MessageArg {
    /// The message text.
    pub text: String,
    /// "user", "assistant", "system", "tool" (default "user").
    pub role: Option<String>,
    /// Who said it (a name); defaults to the role.
    pub speaker: Option<String>,
    /// Session id within the conversation.
    pub session: Option<String>,
    /// When it was said (Unix milliseconds); default now.
    pub occurred_at: Option<i64>,
    /// The message's id in its source: a message whose id is already stored is skipped.
    pub external_id: Option<String>,
    /// Free-form JSON kept with the message.
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub metadata: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct AddMemoryArgs {
    /// The conversation the messages belong to (created when new).
    pub conversation: String,
    /// The messages, oldest first (1 to 1000).
    pub messages: Vec<MessageArg>,
    /// Extract facts from first-person statements (default true).
    pub extract_facts: Option<bool>,
    /// Provenance of the messages (default user_input).
    pub source: Option<Source>,
    /// Memories the messages derive from (lowers their provenance score).
    #[serde(default)]
    pub parents: Vec<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The memory id.
    pub id: i64,
}

/// One memory, now or as it was.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// The memory id.
    pub id: i64,
    /// The memory as it was at this instant (Unix milliseconds): its fields then, the
    /// links and history up to then. Not found if it did not exist then.
    pub as_of: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct SimilarArgs {
    /// The memory id.
    pub id: i64,
    /// How many (1 to 100, default 8).
    pub k: Option<usize>,
}

/// The memories nearest to one memory in embedding space, most similar first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SimilarResult {
    pub id: i64,
    #[cfg_attr(feature = "schema", schema(value_type = Vec<Object>))]
    pub similar: Vec<Similar>,
}

/// A change of a memory: the id and the fields to change (at least one).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The memory id.
    pub id: i64,
    /// New text (re-embeds and re-links the memory).
    pub text: Option<String>,
    pub who: Option<String>,
    pub when: Option<String>,
    #[serde(rename = "where")]
    pub where_: Option<String>,
    pub why: Option<String>,
    pub how: Option<String>,
    /// 0 to 1.
    pub importance: Option<f64>,
    pub state: Option<State>,
    pub tags: Option<Vec<String>>,
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub metadata: Option<serde_json::Value>,
}

/// The fields of an update, without the id (the REST route takes the id from the path).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct UpdateFields {
    /// New text (re-embeds and re-links the memory).
    pub text: Option<String>,
    pub who: Option<String>,
    pub when: Option<String>,
    #[serde(rename = "where")]
    pub where_: Option<String>,
    pub why: Option<String>,
    pub how: Option<String>,
    /// 0 to 1.
    pub importance: Option<f64>,
    pub state: Option<State>,
    pub tags: Option<Vec<String>>,
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub metadata: Option<serde_json::Value>,
}

impl UpdateArgs {
    pub fn split(self) -> (i64, UpdateFields) {
        (
            self.id,
            UpdateFields {
                text: self.text,
                who: self.who,
                when: self.when,
                where_: self.where_,
                why: self.why,
                how: self.how,
                importance: self.importance,
                state: self.state,
                tags: self.tags,
                metadata: self.metadata,
            },
        )
    }
}

impl UpdateFields {
    /// The engine's update, refused when it changes nothing.
    pub fn to_update(self) -> Result<MemoryUpdate> {
        let upd = MemoryUpdate {
            text: self.text,
            who: self.who,
            when: self.when,
            where_: self.where_,
            why: self.why,
            how: self.how,
            importance: self.importance,
            state: self.state,
            tags: self.tags,
            metadata: self.metadata,
        };
        let empty = upd.text.is_none()
            && upd.who.is_none()
            && upd.when.is_none()
            && upd.where_.is_none()
            && upd.why.is_none()
            && upd.how.is_none()
            && upd.importance.is_none()
            && upd.state.is_none()
            && upd.tags.is_none()
            && upd.metadata.is_none();
        if empty {
            return Err(Error::InvalidInput(
                "nothing to update: give at least one field besides id".into(),
            ));
        }
        Ok(upd)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The memory id.
    pub id: i64,
    /// Remove it and its links for good (default: a restorable soft delete).
    #[serde(default)]
    pub hard: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeleteResult {
    pub id: i64,
    pub hard: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    pub filters: Option<Filters>,
    /// Sort key (default id).
    pub sort: Option<SortKey>,
    /// Sort descending.
    #[serde(default)]
    pub descending: bool,
    /// Rows to skip.
    #[serde(default)]
    pub offset: usize,
    /// Page size (1 to 1000, default 100).
    pub limit: Option<usize>,
    /// List the store as it was at this instant (Unix milliseconds): the memories that
    /// existed then, as they were.
    pub as_of: Option<i64>,
}

/// A file's content to import; `format` left out is detected from the name and content.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The file's name (names it in errors; the default conversation of chat JSONL).
    pub name: String,
    pub format: Option<ImportFormat>,
    pub content: String,
}

/// What an import did: the format it read, what it stored, and how the concept clusters
/// were kept current afterwards.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportDone {
    pub format: ImportFormat,
    #[serde(flatten)]
    pub outcome: ImportOutcome,
    pub clusters: ClusterUpkeep,
}

impl Api {
    /// Stores conversation messages (at most [`ADD_MESSAGES`] per call), then keeps the
    /// store clustered.
    pub fn add(&self, args: AddMemoryArgs) -> Result<AddReport> {
        let conversation = args.conversation.trim().to_string();
        if conversation.is_empty() {
            return Err(Error::InvalidInput("conversation must not be empty".into()));
        }
        ADD_MESSAGES.check(Some(args.messages.len()))?;
        let messages: Vec<Message> = args
            .messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                if m.text.trim().is_empty() {
                    return Err(Error::InvalidInput(format!("messages[{i}].text is empty")));
                }
                Ok(Message {
                    role: m.role.unwrap_or_else(|| "user".into()),
                    speaker: m.speaker,
                    text: m.text,
                    session: m.session,
                    occurred_at: m.occurred_at,
                    external_id: m.external_id,
                    metadata: m.metadata.unwrap_or(serde_json::Value::Null),
                })
            })
            .collect::<Result<_>>()?;
        let opts = AddOptions {
            source: args.source.unwrap_or(Source::UserInput),
            actor: self.actor().to_string(),
            extract_facts: args.extract_facts.unwrap_or(true),
            parents: args.parents,
        };
        let report = self.engine().add(&conversation, &messages, &opts)?;
        self.keep_clustered(&Job::default())?;
        Ok(report)
    }

    /// Imports a file's content (format detected when not given), then keeps the store
    /// clustered. A malformed input imports nothing.
    pub fn import(&self, req: &ImportRequest, job: &Job) -> Result<ImportDone> {
        let format = match req.format {
            Some(f) => f,
            None => ImportFormat::detect(&req.name, &req.content)?,
        };
        let outcome = self
            .engine()
            .import_text(&req.name, format, &req.content, job)?;
        let clusters = self.keep_clustered(job)?;
        Ok(ImportDone {
            format,
            outcome,
            clusters,
        })
    }

    /// After a write: a store without clusters is clustered once it holds enough memories;
    /// otherwise new memories join their nearest cluster. Every write path calls this.
    pub fn keep_clustered(&self, job: &Job) -> Result<ClusterUpkeep> {
        self.engine().keep_clustered(job)
    }

    pub fn get(&self, id: i64) -> Result<MemoryDetail> {
        self.engine().get(id)
    }

    /// Memory `id` as it was at `at` (Unix ms), or now when `at` is `None`.
    pub fn get_at(&self, id: i64, at: Option<i64>) -> Result<MemoryDetail> {
        match at {
            Some(at) => self.engine().get_as_of(id, at),
            None => self.get(id),
        }
    }

    pub fn history(&self, id: i64) -> Result<Vec<HistoryEntry>> {
        self.engine().history(id)
    }

    pub fn similar(&self, args: &SimilarArgs) -> Result<SimilarResult> {
        let k = SIMILAR_K.check(args.k)?;
        Ok(SimilarResult {
            id: args.id,
            similar: self.engine().similar_to(args.id, k)?,
        })
    }

    pub fn list(&self, args: &ListArgs) -> Result<Page> {
        let limit = LIST_LIMIT.check(args.limit)?;
        let q = ListQuery {
            filter: args.filters.clone().unwrap_or_default().to_filter()?,
            sort: args.sort.unwrap_or_default(),
            descending: args.descending,
            offset: args.offset,
            limit,
        };
        match args.as_of {
            Some(at) => self.engine().list_as_of(&q, at),
            None => self.engine().list(&q),
        }
    }

    pub fn update(&self, id: i64, fields: UpdateFields) -> Result<Memory> {
        let upd = fields.to_update()?;
        self.engine().update(id, &upd, self.actor())
    }

    pub fn delete(&self, args: &DeleteArgs) -> Result<DeleteResult> {
        self.engine().delete(args.id, args.hard, self.actor())?;
        Ok(DeleteResult {
            id: args.id,
            hard: args.hard,
        })
    }

    pub fn restore(&self, id: i64) -> Result<Memory> {
        self.engine().restore(id, self.actor())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reversed_time_range_is_refused_naming_both_ends() {
        let f = Filters {
            from: Some(10),
            to: Some(5),
            ..Filters::default()
        };
        let e = f.to_filter().unwrap_err();
        assert!(e.to_string().contains("filters.from (10)"), "{e}");
    }

    #[test]
    fn an_update_without_fields_is_refused() {
        let e = UpdateFields::default().to_update().unwrap_err();
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains("nothing to update"), "{e}");
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        let e = serde_json::from_str::<ListArgs>(r#"{"colour": "red"}"#).unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }
}
