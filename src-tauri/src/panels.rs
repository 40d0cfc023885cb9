//! Commands behind the golden-query panel and the ledger panel: saved queries (listed with
//! the memories they expect, added from a search, removed), their runs (a run is a job) and
//! the stored history of runs, and the cost and latency ledger. Each is an adapter over the
//! operations layer; see commands.rs for the conventions.

use crate::commands::{job, on_engine};
use crate::error::ApiResult;
use crate::jobs::{kinds, JobId};
use somna_api::{
    GoldenAddArgs, GoldenHistoryArgs, IdArgs, LedgerArgs, LedgerReport, SearchDefaults,
};
use somna_engine::golden::{GoldenEntry, GoldenRun};
use somna_engine::store::GoldenQuery;
use tauri::AppHandle;

/// Every golden query with the memories it expects.
#[tauri::command]
pub async fn golden_list(app: AppHandle) -> ApiResult<Vec<GoldenEntry>> {
    on_engine(&app, |ws| ws.api().golden_entries()).await
}

/// Saves a golden query from a search and the hits marked as expected.
#[tauri::command]
pub async fn golden_add(app: AppHandle, req: GoldenAddArgs) -> ApiResult<GoldenQuery> {
    on_engine(&app, move |ws| ws.api().golden_add_from(&req)).await
}

#[tauri::command]
pub async fn golden_remove(app: AppHandle, req: IdArgs) -> ApiResult<()> {
    on_engine(&app, move |ws| ws.api().golden_remove(req.id)).await
}

/// Runs every golden query as a job (stored as a manual run); its result is the run.
#[tauri::command]
pub async fn golden_run(app: AppHandle) -> ApiResult<JobId<kinds::Golden>> {
    job(&app, |ws, job| ws.api().golden_run(job))
}

/// The latest stored runs, newest first (by hand and before/after each sleep cycle).
#[tauri::command]
pub async fn golden_history(app: AppHandle, req: GoldenHistoryArgs) -> ApiResult<Vec<GoldenRun>> {
    on_engine(&app, move |ws| ws.api().golden_history(&req)).await
}

/// The ledger over the last hours, by operation and by hour.
#[tauri::command]
pub async fn ledger(app: AppHandle, req: LedgerArgs) -> ApiResult<LedgerReport> {
    on_engine(&app, move |ws| ws.api().ledger_report(&req)).await
}

/// The default fusion weights and context window (what the X-ray's tuning resets to).
#[tauri::command]
pub async fn search_defaults(_app: AppHandle) -> ApiResult<SearchDefaults> {
    Ok(SearchDefaults::default())
}
