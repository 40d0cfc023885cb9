//! Somna's operations layer. Every operation the command-line tool, the MCP/REST server and
//! the desktop app expose is defined here once: its request and response types (with JSON
//! schemas behind the `schema` feature and TypeScript declarations behind `ts`), its limits
//! and validation ([`limits`]), and the rules around it (which sleep backend runs, how LLM
//! settings are checked, that every write keeps the store clustered). The front ends are
//! thin adapters: they parse their own input into these requests, call [`Api`], and render
//! the result. Calls are blocking (the engine is synchronous): async front ends run them on
//! their runtime's blocking pool.
//!
//! Errors are the engine's [`somna_engine::Error`]; a refused request is `invalid_input`
//! with a message that names the field.

mod curate;
mod golden;
pub mod limits;
pub mod llm;
mod memories;
mod search;
mod settings;
pub mod sleep;
mod views;
pub mod workspace;

pub use curate::{CurateRequest, CurateUndoArgs, DuplicatesArgs, MergeArgs, PinArgs};
pub use golden::{GoldenAddArgs, GoldenHistoryArgs, LedgerArgs, LedgerReport};
pub use llm::{LlmEndpoint, LlmSettings, SetLlmSettings};
pub use memories::{
    AddMemoryArgs, DeleteArgs, DeleteResult, Filters, GetArgs, IdArgs, ImportDone, ImportRequest,
    ListArgs, MessageArg, SimilarArgs, SimilarResult, UpdateArgs, UpdateFields,
};
pub use search::{
    SearchArgs, SearchDefaults, SearchHit, SearchOptions, SearchResult, TunedSearchArgs,
};
pub use sleep::{Backend, SleepArgs, SleepRunRequest, UndoRequest};
pub use views::{
    expand_home, positions_then, stored_layout, stored_points, ClusterRequest, LayoutAsOf,
    LayoutCoords, LayoutKey, LayoutRequest, LayoutSummary, NeighbourhoodRequest,
};
pub use workspace::{load_policies, LiquidSink, LiquidStatus, Workspace};

use somna_engine::Somna;
use std::sync::Arc;

/// The operations over one open engine, on behalf of one front end. Cheap to clone.
#[derive(Clone)]
pub struct Api {
    engine: Arc<Somna>,
    /// Recorded in history as who made each change ("app", "mcp", "http", "user").
    actor: Arc<str>,
}

impl Api {
    pub fn new(engine: Arc<Somna>, actor: &str) -> Self {
        Self {
            engine,
            actor: Arc::from(actor),
        }
    }

    pub fn engine(&self) -> &Arc<Somna> {
        &self.engine
    }

    pub fn actor(&self) -> &str {
        &self.actor
    }
}
