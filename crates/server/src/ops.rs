//! The operations both front ends expose (MCP tools and REST routes): their argument and
//! result types, with JSON schemas generated from these definitions (schemars for MCP,
//! utoipa for OpenAPI), and one async method per operation that runs the engine's blocking
//! call on tokio's blocking pool.

use crate::error::OpError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use somna_engine::store::SortKey;
use somna_engine::{
    AddOptions, Kind, ListQuery, MemoryFilter, MemoryUpdate, Message, Route, ScoreMode,
    SearchQuery, SleepOptions, Somna, Source, State,
};
use std::sync::Arc;
use utoipa::ToSchema;

/// Largest `k` a search accepts.
pub const MAX_K: usize = 200;
/// Largest page a listing returns.
pub const MAX_LIMIT: usize = 1000;
/// Most messages one `add_memory` call takes.
pub const MAX_MESSAGES: usize = 1000;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KindArg {
    Episode,
    Fact,
    Summary,
    Schema,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Self {
        match k {
            KindArg::Episode => Kind::Episode,
            KindArg::Fact => Kind::Fact,
            KindArg::Summary => Kind::Summary,
            KindArg::Schema => Kind::Schema,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateArg {
    Active,
    Warm,
    Cold,
    Archived,
    Forgotten,
}

impl From<StateArg> for State {
    fn from(s: StateArg) -> Self {
        match s {
            StateArg::Active => State::Active,
            StateArg::Warm => State::Warm,
            StateArg::Cold => State::Cold,
            StateArg::Archived => State::Archived,
            StateArg::Forgotten => State::Forgotten,
        }
    }
}

/// Where a write comes from; it sets the memory's provenance score.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceArg {
    /// What the user said (default).
    #[default]
    UserInput,
    ToolOutput,
    System,
    External,
    /// Something the agent inferred.
    AgentInference,
}

impl From<SourceArg> for Source {
    fn from(s: SourceArg) -> Self {
        match s {
            SourceArg::UserInput => Source::UserInput,
            SourceArg::ToolOutput => Source::ToolOutput,
            SourceArg::System => Source::System,
            SourceArg::External => Source::External,
            SourceArg::AgentInference => Source::AgentInference,
        }
    }
}

/// How search results are scored.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModeArg {
    /// Weighted sum of semantic, lexical, recency, actor, usage and graph signals.
    Fusion,
    /// similarity × importance × recency.
    Context,
}

/// Which retrieval route to force; omitted, the router chooses from the query.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteArg {
    Direct,
    Pattern,
    Causal,
    Hybrid,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortArg {
    #[default]
    Id,
    CreatedAt,
    UpdatedAt,
    OccurredAt,
    Importance,
    AccessCount,
    LastAccessed,
}

/// Which memories an operation sees. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    /// Only these kinds (default: every kind).
    #[serde(default)]
    pub kinds: Vec<KindArg>,
    /// Only these states (default: every state except forgotten).
    #[serde(default)]
    pub states: Vec<StateArg>,
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
}

impl Filters {
    fn into_filter(self) -> Result<MemoryFilter, OpError> {
        if let (Some(f), Some(t)) = (self.from, self.to) {
            if f > t {
                return Err(OpError::invalid(format!(
                    "filters.from ({f}) is after filters.to ({t})"
                )));
            }
        }
        Ok(MemoryFilter {
            kinds: self.kinds.into_iter().map(Kind::from).collect(),
            states: self.states.into_iter().map(State::from).collect(),
            who: self.who,
            conversation: self.conversation,
            from: self.from,
            to: self.to,
            include_deleted: self.include_deleted,
            cluster: self.cluster,
        })
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema)]
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
    #[schema(value_type = Object)]
    pub metadata: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMemoryArgs {
    /// The conversation the messages belong to (created when new).
    pub conversation: String,
    /// The messages, oldest first (1 to 1000).
    pub messages: Vec<MessageArg>,
    /// Extract facts from first-person statements (default true).
    pub extract_facts: Option<bool>,
    /// Provenance of the messages (default user_input).
    pub source: Option<SourceArg>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for, in natural language.
    pub query: String,
    /// How many results (1 to 200, default 10).
    pub k: Option<usize>,
    /// Scoring mode (default fusion).
    pub mode: Option<ModeArg>,
    /// Force a retrieval route (default: chosen from the query).
    pub route: Option<RouteArg>,
    /// Restrict the candidates.
    pub filters: Option<Filters>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The memory id.
    pub id: i64,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimilarArgs {
    /// The memory id.
    pub id: i64,
    /// How many (1 to 100, default 8).
    pub k: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema)]
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
    pub state: Option<StateArg>,
    pub tags: Option<Vec<String>>,
    #[schema(value_type = Object)]
    pub metadata: Option<serde_json::Value>,
}

/// The fields of an update, without the id (the REST route takes the id from the path).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, ToSchema)]
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
    pub state: Option<StateArg>,
    pub tags: Option<Vec<String>>,
    #[schema(value_type = Object)]
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

#[derive(Debug, Clone, Deserialize, JsonSchema, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The memory id.
    pub id: i64,
    /// Remove it and its links for good (default: a restorable soft delete).
    #[serde(default)]
    pub hard: bool,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    pub filters: Option<Filters>,
    /// Sort key (default id).
    pub sort: Option<SortArg>,
    /// Sort descending.
    #[serde(default)]
    pub descending: bool,
    /// Rows to skip.
    #[serde(default)]
    pub offset: usize,
    /// Page size (1 to 1000, default 100).
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepArgs {
    /// Compute the cycle and report it without writing anything.
    #[serde(default)]
    pub dry_run: bool,
}

/// One search result.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchHit {
    pub id: i64,
    /// 1-based rank.
    pub rank: Option<usize>,
    /// The score the ranking used (fused or context-mode).
    pub score: f64,
    /// How the candidate was found: vector, lexical, both, graph, adjacent.
    pub origin: String,
    pub kind: String,
    pub text: String,
    pub who: Option<String>,
    pub conversation: Option<String>,
    /// Unix milliseconds.
    pub occurred_at: Option<i64>,
    pub importance: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchResult {
    pub query: String,
    pub route: String,
    pub mode: String,
    pub hits: Vec<SearchHit>,
    pub candidates_considered: usize,
    pub total_ms: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeleteResult {
    pub id: i64,
    pub hard: bool,
}

/// An engine value passed through as JSON (a memory, a page, a report); its fields are
/// documented in the README, "JSON output".
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct EngineJson(pub serde_json::Value);

fn to_json<T: Serialize>(v: &T) -> Result<EngineJson, OpError> {
    Ok(EngineJson(serde_json::to_value(v).map_err(|e| {
        OpError::Engine(somna_engine::Error::Json(e))
    })?))
}

/// Called after every write that succeeded (the desktop app refreshes its views on it).
pub type OnWrite = Arc<dyn Fn() + Send + Sync>;

/// The operations over one engine, shared by the MCP and REST front ends.
#[derive(Clone)]
pub struct Ops {
    engine: Arc<Somna>,
    /// Recorded in history as who made each change.
    actor: String,
    on_write: Option<OnWrite>,
}

impl Ops {
    pub fn new(engine: Arc<Somna>, actor: impl Into<String>) -> Self {
        Self {
            engine,
            actor: actor.into(),
            on_write: None,
        }
    }

    /// Calls `f` after every successful write (add, update, delete, a sleep cycle).
    pub fn on_write(mut self, f: OnWrite) -> Self {
        self.on_write = Some(f);
        self
    }

    fn wrote(&self) {
        if let Some(f) = &self.on_write {
            f();
        }
    }

    pub fn engine(&self) -> &Arc<Somna> {
        &self.engine
    }

    /// Runs a blocking engine call on tokio's blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Somna, &str) -> Result<T, OpError> + Send + 'static,
    ) -> Result<T, OpError> {
        let engine = self.engine.clone();
        let actor = self.actor.clone();
        tokio::task::spawn_blocking(move || f(&engine, &actor))
            .await
            .map_err(|e| OpError::Internal(format!("engine task failed: {e}")))?
    }

    pub async fn add(&self, args: AddMemoryArgs) -> Result<EngineJson, OpError> {
        let conversation = args.conversation.trim().to_string();
        if conversation.is_empty() {
            return Err(OpError::invalid("conversation must not be empty"));
        }
        if args.messages.is_empty() || args.messages.len() > MAX_MESSAGES {
            return Err(OpError::invalid(format!(
                "messages must hold 1 to {MAX_MESSAGES} messages (got {})",
                args.messages.len()
            )));
        }
        let messages: Vec<Message> = args
            .messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                if m.text.trim().is_empty() {
                    return Err(OpError::invalid(format!("messages[{i}].text is empty")));
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
            .collect::<Result<_, _>>()?;
        let extract_facts = args.extract_facts.unwrap_or(true);
        let source = Source::from(args.source.unwrap_or_default());
        self.blocking(move |e, actor| {
            let opts = AddOptions {
                source,
                actor: actor.to_string(),
                extract_facts,
                ..AddOptions::default()
            };
            to_json(&e.add(&conversation, &messages, &opts)?)
        })
        .await
        .inspect(|_| self.wrote())
    }

    pub async fn search(&self, args: SearchArgs) -> Result<SearchResult, OpError> {
        if args.query.trim().is_empty() {
            return Err(OpError::invalid("query must not be empty"));
        }
        let k = args.k.unwrap_or(10);
        if !(1..=MAX_K).contains(&k) {
            return Err(OpError::invalid(format!(
                "k must be 1 to {MAX_K} (got {k})"
            )));
        }
        let mut q = SearchQuery::new(args.query);
        q.k = k;
        q.mode = match args.mode {
            Some(ModeArg::Context) => ScoreMode::Context,
            Some(ModeArg::Fusion) | None => ScoreMode::Fusion,
        };
        q.route = args.route.map(|r| match r {
            RouteArg::Direct => Route::Direct,
            RouteArg::Pattern => Route::Pattern,
            RouteArg::Causal => Route::Causal,
            RouteArg::Hybrid => Route::Hybrid,
        });
        q.filter = args.filters.unwrap_or_default().into_filter()?;
        self.blocking(move |e, _| {
            let r = e.search(&q)?;
            Ok(SearchResult {
                route: snake(&r.route),
                mode: snake(&r.mode),
                hits: r
                    .hits
                    .into_iter()
                    .map(|h| SearchHit {
                        id: h.memory.id,
                        rank: h.rank,
                        score: h.score,
                        origin: snake(&h.origin),
                        kind: h.memory.kind.to_string(),
                        text: h.memory.text,
                        who: h.memory.w5h1.who,
                        conversation: h.memory.conversation,
                        occurred_at: h.memory.occurred_at,
                        importance: h.memory.importance,
                    })
                    .collect(),
                query: r.query,
                candidates_considered: r.candidates_considered,
                total_ms: r.timings.total_ms,
            })
        })
        .await
    }

    pub async fn get(&self, id: i64) -> Result<EngineJson, OpError> {
        self.blocking(move |e, _| to_json(&e.get(id)?)).await
    }

    /// The memories nearest to memory `id` in embedding space, most similar first:
    /// `{id, similar: [{id, similarity, memory}]}`.
    pub async fn similar(&self, id: i64, k: Option<usize>) -> Result<EngineJson, OpError> {
        let k = k.unwrap_or(8);
        if !(1..=100).contains(&k) {
            return Err(OpError::invalid(format!("k must be 1 to 100, not {k}")));
        }
        self.blocking(move |e, _| {
            to_json(&serde_json::json!({ "id": id, "similar": e.similar_to(id, k)? }))
        })
        .await
    }

    pub async fn update(&self, id: i64, f: UpdateFields) -> Result<EngineJson, OpError> {
        let upd = MemoryUpdate {
            text: f.text,
            who: f.who,
            when: f.when,
            where_: f.where_,
            why: f.why,
            how: f.how,
            importance: f.importance,
            state: f.state.map(State::from),
            tags: f.tags,
            metadata: f.metadata,
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
            return Err(OpError::invalid(
                "nothing to update: give at least one field besides id",
            ));
        }
        self.blocking(move |e, actor| to_json(&e.update(id, &upd, actor)?))
            .await
            .inspect(|_| self.wrote())
    }

    pub async fn delete(&self, id: i64, hard: bool) -> Result<DeleteResult, OpError> {
        self.blocking(move |e, actor| {
            e.delete(id, hard, actor)?;
            Ok(DeleteResult { id, hard })
        })
        .await
        .inspect(|_| self.wrote())
    }

    pub async fn list(&self, args: ListArgs) -> Result<EngineJson, OpError> {
        let limit = args.limit.unwrap_or(100);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(OpError::invalid(format!(
                "limit must be 1 to {MAX_LIMIT} (got {limit})"
            )));
        }
        let q = ListQuery {
            filter: args.filters.unwrap_or_default().into_filter()?,
            sort: match args.sort.unwrap_or_default() {
                SortArg::Id => SortKey::Id,
                SortArg::CreatedAt => SortKey::CreatedAt,
                SortArg::UpdatedAt => SortKey::UpdatedAt,
                SortArg::OccurredAt => SortKey::OccurredAt,
                SortArg::Importance => SortKey::Importance,
                SortArg::AccessCount => SortKey::AccessCount,
                SortArg::LastAccessed => SortKey::LastAccessed,
            },
            descending: args.descending,
            offset: args.offset,
            limit,
        };
        self.blocking(move |e, _| to_json(&e.list(&q)?)).await
    }

    pub async fn history(&self, id: i64) -> Result<EngineJson, OpError> {
        self.blocking(move |e, _| {
            let h = e.history(id)?;
            to_json(&serde_json::json!({ "id": id, "history": h }))
        })
        .await
    }

    pub async fn sleep(&self, args: SleepArgs) -> Result<EngineJson, OpError> {
        let dry_run = args.dry_run;
        self.blocking(move |e, _| {
            let opts = SleepOptions {
                dry_run: args.dry_run,
                trigger: "agent".into(),
                ..SleepOptions::default()
            };
            to_json(&e.sleep(&opts, &somna_engine::Job::default())?)
        })
        .await
        .inspect(|_| {
            if !dry_run {
                self.wrote()
            }
        })
    }
}

/// The snake_case name of a serde unit enum value (route, mode, origin).
fn snake<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
