//! Curation: acting on a selection (merge, delete, restore, pin, tag, importance) with a
//! preview before and an undo after, the curation log, and near-duplicate groups. The app
//! and the CLI send a whole [`CurateRequest`]; agents (MCP tools, REST routes) have the
//! narrower [`MergeArgs`], [`PinArgs`] and [`DuplicatesArgs`]. A merge drafts its text
//! with the chosen sleep backend when the person gives none, and keeps the store clustered.

use crate::limits::SLEEP_HISTORY;
use crate::sleep::Backend;
use crate::Api;
use serde::{Deserialize, Serialize};
use somna_engine::curate::duplicates::{DuplicateGroup, DuplicateQuery};
use somna_engine::curate::{CurateAction, CurationReport};
use somna_engine::sleep::chat::ChatCompressor;
use somna_engine::sleep::Extractive;
use somna_engine::{Job, Result};

/// An action and whether to only preview it (the app, the CLI, MCP `curate_memories`,
/// `POST /api/v1/curate`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CurateRequest {
    pub action: CurateAction,
    /// Compute what it would change without writing anything.
    #[serde(default)]
    pub preview: bool,
}

/// Merge memories into one (MCP `merge_memories`, `POST /api/v1/curate/merge`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    /// The memories to merge (at least two). They are archived, never deleted, and the
    /// merged memory links to each with `derived_from`.
    pub ids: Vec<i64>,
    /// The merged memory's text; left out, the source that says the most is kept.
    #[serde(default)]
    pub text: Option<String>,
    /// Report what the merge would do without writing anything.
    #[serde(default)]
    pub preview: bool,
}

/// Pin or unpin memories (MCP `pin_memory`, `POST /api/v1/curate/pin`). A pinned memory
/// is never compressed, decayed, archived or forgotten by a sleep cycle.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PinArgs {
    pub ids: Vec<i64>,
    /// Unpin instead.
    #[serde(default)]
    pub unpin: bool,
    #[serde(default)]
    pub preview: bool,
}

/// Find groups of near-duplicate memories (MCP `find_duplicates`, `POST /api/v1/duplicates`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct DuplicatesArgs {
    /// Cosine similarity at or above which two memories are near-duplicates (0.5 to 1,
    /// default 0.92).
    pub threshold: Option<f32>,
    /// Only within this conversation.
    pub conversation: Option<String>,
    /// Groups returned, largest first (1 to 10,000, default 500).
    pub limit: Option<usize>,
}

/// Undo a curation (MCP `undo_curation`, `POST /api/v1/curate/{id}/undo`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct CurateUndoArgs {
    pub id: i64,
}

impl Api {
    /// Runs (or previews) a curation; `backend` drafts a merge's text when none is given.
    pub fn curate(&self, req: &CurateRequest, backend: &Backend) -> Result<CurationReport> {
        let report = match backend {
            Backend::Extractive => self.engine().curate(
                &req.action,
                req.preview,
                self.actor(),
                &Extractive::default(),
            ),
            Backend::Chat(c) => self.engine().curate(
                &req.action,
                req.preview,
                self.actor(),
                &ChatCompressor::new(c.clone()),
            ),
        }?;
        if report.merged.as_ref().is_some_and(|m| m.id.is_some()) {
            self.keep_clustered(&Job::default())?;
        }
        Ok(report)
    }

    /// An agent's curation (extractive draft for a merge without text).
    pub fn curate_for_agent(&self, req: &CurateRequest) -> Result<CurationReport> {
        self.curate(req, &Backend::Extractive)
    }

    /// An agent's merge (extractive draft when no text is given).
    pub fn merge(&self, args: &MergeArgs) -> Result<CurationReport> {
        let req = CurateRequest {
            action: CurateAction::Merge {
                ids: args.ids.clone(),
                text: args.text.clone(),
            },
            preview: args.preview,
        };
        self.curate(&req, &Backend::Extractive)
    }

    pub fn pin(&self, args: &PinArgs) -> Result<CurationReport> {
        let ids = args.ids.clone();
        let action = if args.unpin {
            CurateAction::Unpin { ids }
        } else {
            CurateAction::Pin { ids }
        };
        self.curate(
            &CurateRequest {
                action,
                preview: args.preview,
            },
            &Backend::Extractive,
        )
    }

    pub fn curate_undo(&self, args: &CurateUndoArgs, job: &Job) -> Result<CurationReport> {
        self.engine().curate_undo(args.id, job)
    }

    /// The latest curations, newest first.
    pub fn curations(&self, limit: Option<usize>) -> Result<Vec<CurationReport>> {
        self.engine().curations(SLEEP_HISTORY.check(limit)?)
    }

    pub fn duplicates(&self, args: &DuplicatesArgs) -> Result<Vec<DuplicateGroup>> {
        let d = DuplicateQuery::default();
        self.engine().find_duplicates(&DuplicateQuery {
            threshold: args.threshold.unwrap_or(d.threshold),
            conversation: args.conversation.clone(),
            limit: args.limit.unwrap_or(d.limit),
        })
    }
}
