//! The operations both front ends expose (MCP tools and REST routes), one async method per
//! operation: each runs one call of the operations layer (`somna-api`, which owns the
//! argument types, limits and validation) on tokio's blocking pool.

use crate::error::OpError;
use serde::Serialize;
use somna_api::{
    AddMemoryArgs, Api, CurateRequest, CurateUndoArgs, DeleteArgs, DeleteResult, DuplicatesArgs,
    ListArgs, MergeArgs, PinArgs, SearchArgs, SearchOptions, SearchResult, SimilarArgs, SleepArgs,
    UpdateFields,
};
use somna_engine::whatif::WhatIfRequest;
use somna_engine::{CancelToken, Somna};
use std::sync::Arc;
use utoipa::ToSchema;

/// An engine value passed through as JSON (a memory, a page, a report); its fields are
/// documented in the README, "JSON output".
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct EngineJson(pub serde_json::Value);

fn to_json<T: Serialize>(v: &T) -> Result<EngineJson, somna_engine::Error> {
    Ok(EngineJson(serde_json::to_value(v)?))
}

/// Cancels a request's work when the request is dropped before it finished (its client
/// went away).
struct CancelOnDrop(Option<CancelToken>);

impl CancelOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(t) = &self.0 {
            t.cancel();
        }
    }
}

/// The operations over one engine, shared by the MCP and REST front ends.
#[derive(Clone)]
pub struct Ops {
    api: Api,
}

impl Ops {
    /// `actor` is recorded in history as who made each change.
    pub fn new(engine: Arc<Somna>, actor: &str) -> Self {
        Self {
            api: Api::new(engine, actor),
        }
    }

    pub fn engine(&self) -> &Arc<Somna> {
        self.api.engine()
    }

    /// Runs `f` on tokio's blocking pool with a job that is cancelled if this future is
    /// dropped first.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Api, &somna_engine::Job) -> somna_engine::Result<T> + Send + 'static,
    ) -> Result<T, OpError> {
        let api = self.api.clone();
        let job = somna_engine::Job::default();
        let guard = CancelOnDrop(Some(job.cancel.clone()));
        let out = tokio::task::spawn_blocking(move || f(&api, &job))
            .await
            .map_err(|e| OpError::Internal(format!("engine task failed: {e}")))?;
        guard.disarm();
        Ok(out?)
    }

    pub async fn add(&self, args: AddMemoryArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.add(args)?)).await
    }

    pub async fn search(&self, args: SearchArgs) -> Result<SearchResult, OpError> {
        self.blocking(move |api, _| Ok(api.search(&args, SearchOptions::default())?.into()))
            .await
    }

    /// One memory, or with `as_of` the memory as it was then.
    pub async fn get(&self, id: i64, as_of: Option<i64>) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.get_at(id, as_of)?))
            .await
    }

    /// The store's span in time and its imports and operations.
    pub async fn timeline(&self) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.timeline()?)).await
    }

    /// `{id, similar: [{id, similarity, memory}]}`, most similar first.
    pub async fn similar(&self, args: SimilarArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.similar(&args)?))
            .await
    }

    pub async fn update(&self, id: i64, fields: UpdateFields) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.update(id, fields)?))
            .await
    }

    pub async fn delete(&self, args: DeleteArgs) -> Result<DeleteResult, OpError> {
        self.blocking(move |api, _| api.delete(&args)).await
    }

    pub async fn list(&self, args: ListArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.list(&args)?))
            .await
    }

    /// `{id, history}`, oldest first.
    pub async fn history(&self, id: i64) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| {
            to_json(&serde_json::json!({ "id": id, "history": api.history(id)? }))
        })
        .await
    }

    pub async fn sleep(&self, args: SleepArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, job| to_json(&api.sleep_for_agent(&args, job)?))
            .await
    }

    /// The curation's report: `{id, op, status, changed, merged, notes}`.
    pub async fn merge(&self, args: MergeArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.merge(&args)?))
            .await
    }

    pub async fn curate(&self, req: CurateRequest) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.curate_for_agent(&req)?))
            .await
    }

    pub async fn pin(&self, args: PinArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.pin(&args)?)).await
    }

    pub async fn curate_undo(&self, args: CurateUndoArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, job| to_json(&api.curate_undo(&args, job)?))
            .await
    }

    /// What a change of settings would do, written nowhere (the what-if report).
    pub async fn what_if(&self, req: WhatIfRequest) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| to_json(&api.what_if(&req)?))
            .await
    }

    /// `{groups: [{ids, kind, who, min_similarity, texts}]}`, largest first.
    pub async fn duplicates(&self, args: DuplicatesArgs) -> Result<EngineJson, OpError> {
        self.blocking(move |api, _| {
            to_json(&serde_json::json!({ "groups": api.duplicates(&args)? }))
        })
        .await
    }
}
