//! The MCP server: one tool per operation, on rmcp's tool macros. Argument schemas are
//! generated from the operations layer's types (`somna-api`, schemars). Arguments that do
//! not deserialise into them (an unknown argument, a wrong type, a missing field) are
//! refused with a JSON-RPC `invalid_params` error naming the problem, exactly as the
//! operations layer refuses values out of range: one kind of refusal for every bad input.

use crate::ops::Ops;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData};
use serde::Serialize;
use somna_api::{
    AddMemoryArgs, CurateRequest, CurateUndoArgs, DeleteArgs, DuplicatesArgs, GetArgs, IdArgs,
    ListArgs, MergeArgs, PinArgs, SearchArgs, SimilarArgs, SleepArgs, UpdateArgs,
};
use somna_engine::whatif::WhatIfRequest;

/// A tool's arguments, deserialised into the operations layer's type `P`. rmcp's own
/// `Parameters` turns a deserialisation failure into a tool result with `isError`, while
/// values out of range come back as `invalid_params`; this one refuses both the same way.
/// (The tool macros find the argument schema by this type's name.)
pub struct Parameters<P>(pub P);

impl<P: schemars::JsonSchema> schemars::JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<S, P: serde::de::DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<P> {
    fn from_context_part(context: &mut ToolCallContext<S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        serde_json::from_value(serde_json::Value::Object(arguments))
            .map(Parameters)
            .map_err(|e| {
                let data = serde_json::json!({ "code": "invalid_input", "kind": "invalid" });
                ErrorData::invalid_params(format!("invalid arguments: {e}"), Some(data))
            })
    }
}

/// The MCP tool server over one engine (cheap to clone: the engine is shared).
#[derive(Clone)]
pub struct SomnaMcp {
    ops: Ops,
    tool_router: ToolRouter<Self>,
}

fn structured<T: Serialize>(v: T) -> Result<CallToolResult, ErrorData> {
    let value = serde_json::to_value(v)
        .map_err(|e| ErrorData::internal_error(format!("serialising the result: {e}"), None))?;
    Ok(CallToolResult::structured(value))
}

#[tool_router]
impl SomnaMcp {
    pub fn new(ops: Ops) -> Self {
        Self {
            ops,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Store conversation messages as memories: each message becomes an episode; first-person statements also yield facts. Returns the ids created."
    )]
    async fn add_memory(
        &self,
        Parameters(args): Parameters<AddMemoryArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.add(args).await?.0)
    }

    #[tool(
        description = "Search memories by meaning and keywords. Returns the top k with their scores (mode fusion or context; optional filters by kind, state, actor, conversation, time). With as_of (Unix ms), searches the store as it was then."
    )]
    async fn search_memory(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.search(args).await?)
    }

    #[tool(
        description = "Get one memory with its links, history and provenance chain; with as_of (Unix ms), the memory as it was then."
    )]
    async fn get_memory(
        &self,
        Parameters(args): Parameters<GetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.get(args.id, args.as_of).await?.0)
    }

    #[tool(
        description = "The store's span in time and what happened in it (imports, sleep cycles, curations, undos), oldest first: the instants as_of can go back to."
    )]
    async fn memory_timeline(&self) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.timeline().await?.0)
    }

    #[tool(
        description = "The memories nearest to one memory in embedding space (k, default 8), most similar first, with their cosine similarity: related memories, near-duplicates, context around a memory."
    )]
    async fn similar_memories(
        &self,
        Parameters(args): Parameters<SimilarArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.similar(args).await?.0)
    }

    #[tool(
        description = "Change a memory's text, 5W1H fields, importance, state, tags or metadata. A new text is re-embedded and re-linked; the change is recorded in its history."
    )]
    async fn update_memory(
        &self,
        Parameters(args): Parameters<UpdateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let (id, fields) = args.split();
        structured(self.ops.update(id, fields).await?.0)
    }

    #[tool(
        description = "Delete a memory: a restorable soft delete, or with hard=true removal of it and its links."
    )]
    async fn delete_memory(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.delete(args).await?)
    }

    #[tool(
        description = "List memories page by page, filtered and sorted. Returns {total, offset, memories}; with as_of (Unix ms), the store as it was then."
    )]
    async fn list_memories(
        &self,
        Parameters(args): Parameters<ListArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.list(args).await?.0)
    }

    #[tool(
        description = "Run a sleep cycle: consolidate episodes into summaries and schemas and forget what is no longer useful (dry_run=true only reports what it would do)."
    )]
    async fn run_sleep_cycle(
        &self,
        Parameters(args): Parameters<SleepArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.sleep(args).await?.0)
    }

    #[tool(
        description = "What-if: what a change of settings would do, writing nothing. patch {decay: exponential|power_law, half_life_days, decay_alpha, importance_floor, warm_after_days, cold_after_days, archive_after_days, forget_importance, forget_max_words, weights}; query? ranks a search both ways; horizon_days? (default 180). Returns the state changes over time, golden queries before → after and the search before → after."
    )]
    async fn what_if(
        &self,
        Parameters(req): Parameters<WhatIfRequest>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.what_if(req).await?.0)
    }

    #[tool(
        description = "Merge near-duplicate memories into one. The sources are archived (never deleted) and linked from the merged memory; text is the merged wording (default: the source that says the most). preview=true only reports. Returns the curation report; its id undoes it."
    )]
    async fn merge_memories(
        &self,
        Parameters(args): Parameters<MergeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.merge(args).await?.0)
    }

    #[tool(
        description = "Curate memories: action {op: merge|delete|restore|pin|unpin|tag|set_importance|relabel_cluster, ids | cluster, …}; preview=true reports what it would change without writing. Every curation is undone exactly with undo_curation(id)."
    )]
    async fn curate_memories(
        &self,
        Parameters(req): Parameters<CurateRequest>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.curate(req).await?.0)
    }

    #[tool(
        description = "Undo a curation exactly (refused with undo_blocked while a later operation on the same memories stands)."
    )]
    async fn undo_curation(
        &self,
        Parameters(args): Parameters<CurateUndoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.curate_undo(args).await?.0)
    }

    #[tool(
        description = "Pin memories (unpin=true to release them): a pinned memory is never compressed, decayed, archived or forgotten by a sleep cycle."
    )]
    async fn pin_memory(
        &self,
        Parameters(args): Parameters<PinArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.pin(args).await?.0)
    }

    #[tool(
        description = "Find groups of near-duplicate memories (same kind and speaker, cosine >= threshold, default 0.92). Returns {groups: [{ids, kind, who, min_similarity, texts}]}, largest first."
    )]
    async fn find_duplicates(
        &self,
        Parameters(args): Parameters<DuplicatesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.duplicates(args).await?.0)
    }

    #[tool(description = "Every change of a memory, oldest first (also after a hard delete).")]
    async fn memory_history(
        &self,
        Parameters(args): Parameters<IdArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        structured(self.ops.history(args.id).await?.0)
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for SomnaMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("somna", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Somna is a long-term memory store. Call add_memory with the messages worth \
                 remembering, search_memory before answering questions about the past, and \
                 get_memory / memory_history for details.",
            )
    }
}

/// Serves MCP over stdin/stdout until the client disconnects.
pub async fn serve_stdio(ops: Ops) -> Result<(), crate::ServerError> {
    use rmcp::ServiceExt;
    let service = SomnaMcp::new(ops)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| crate::ServerError::Transport(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| crate::ServerError::Transport(e.to_string()))?;
    Ok(())
}
