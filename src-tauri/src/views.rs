//! Commands behind the 3D view, the cluster panel and the sleep panel: layouts (handed to
//! the UI as binary), clustering, the liquid loop, sleep cycles and their settings. Each is
//! an adapter over the operations layer; see commands.rs for the conventions.

use crate::commands::{blocking, job, on_engine};
use crate::error::{ApiError, ApiResult};
use crate::jobs::{kinds, JobId};
use crate::points;
use crate::state::AppState;
use somna_api::sleep::Backend;
use somna_api::{
    ClusterRequest, LayoutAsOf, LayoutCoords, LayoutKey, LayoutRequest, LiquidStatus, LlmSettings,
    SetLlmSettings, SleepRunRequest, UndoRequest,
};
use somna_api::{CurateRequest, CurateUndoArgs, DuplicatesArgs};
use somna_engine::curate::duplicates::DuplicateGroup;
use somna_engine::curate::CurationReport;
use somna_engine::sleep::auto::AutoSleepSettings;
use somna_engine::whatif::{WhatIfReport, WhatIfRequest};
use somna_engine::{
    ClusterInfo, ClusterMerge, LiquidParams, SleepConfig, SleepOptions, SleepReport,
};
use somna_engine::{Settings, SettingsChange, SettingsPatch};
use tauri::{AppHandle, Manager};

/// The layout of a method as it was at a past instant (the time scrubber's): today's points
/// where the full computation in force then placed them, as an "SMPL" buffer.
#[tauri::command]
pub async fn layout_as_of(app: AppHandle, req: LayoutAsOf) -> ApiResult<tauri::ipc::Response> {
    let ws = app.state::<AppState>().workspace()?;
    packed(blocking(move || Ok(ws.layout_as_of(req)?)).await?)
}

/// A layout as an "SMPL" buffer (see points.rs), or not_found when none is computed yet.
fn packed(layout: Option<LayoutCoords>) -> ApiResult<tauri::ipc::Response> {
    let l = layout.ok_or_else(|| {
        ApiError::new(
            "not_found",
            "no layout computed yet: call compute_layout first",
        )
    })?;
    Ok(tauri::ipc::Response::new(points::pack_layout(
        &l.ids, l.dims, &l.coords,
    )))
}

/// Computes the layout of a method in 2 or 3 dimensions as a job: the cached one with new
/// memories placed incrementally, or (`full`) a recomputation aligned to the previous one.
#[tauri::command]
pub async fn compute_layout(app: AppHandle, req: LayoutRequest) -> ApiResult<JobId<kinds::Layout>> {
    job(&app, move |ws, job| ws.compute_layout(&req, job))
}

/// The last layout `compute_layout` produced, else the one cached in the store, as an
/// "SMPL" buffer (see points.rs). While the engine opens it is read from the store directly.
#[tauri::command]
pub async fn layout_data(app: AppHandle, req: LayoutKey) -> ApiResult<tauri::ipc::Response> {
    let state = app.state::<AppState>();
    let layout = match state.workspace() {
        Ok(ws) => blocking(move || Ok(ws.layout(req)?)).await?,
        Err(e) if e.code == "not_ready" => match state.early_store() {
            Some(store) => {
                blocking(move || {
                    let store = store.lock().unwrap_or_else(|p| p.into_inner());
                    Ok(somna_api::stored_layout(&store, req)?)
                })
                .await?
            }
            None => None,
        },
        Err(e) => return Err(e),
    };
    packed(layout)
}

#[tauri::command]
pub async fn cluster_run(app: AppHandle, req: ClusterRequest) -> ApiResult<JobId<kinds::Cluster>> {
    // With an LLM endpoint set, it names the clusters (the extractive labels otherwise).
    let backend = match app.state::<AppState>().llm.get() {
        Some(c) => Backend::Chat(c),
        None => Backend::Extractive,
    };
    job(&app, move |ws, job| {
        ws.api().cluster_with(&req, &backend, job)
    })
}

#[tauri::command]
pub async fn clusters(app: AppHandle) -> ApiResult<Vec<ClusterInfo>> {
    on_engine(&app, |ws| ws.api().clusters()).await
}

#[tauri::command]
pub async fn cluster_merges(app: AppHandle) -> ApiResult<Vec<ClusterMerge>> {
    on_engine(&app, |ws| ws.api().cluster_merges()).await
}

#[tauri::command]
pub async fn liquid_defaults(_app: AppHandle) -> ApiResult<LiquidParams> {
    Ok(LiquidParams::default())
}

#[tauri::command]
pub async fn liquid_status(app: AppHandle) -> ApiResult<LiquidStatus> {
    on_engine(&app, |ws| Ok(ws.liquid_status())).await
}

#[tauri::command]
pub async fn liquid_start(app: AppHandle, req: Option<LiquidParams>) -> ApiResult<()> {
    on_engine(&app, move |ws| {
        ws.liquid_start(req);
        Ok(())
    })
    .await
}

#[tauri::command]
pub async fn liquid_pause(app: AppHandle) -> ApiResult<()> {
    on_engine(&app, |ws| {
        ws.liquid_pause();
        Ok(())
    })
    .await
}

#[tauri::command]
pub async fn liquid_step(app: AppHandle, req: Option<LiquidParams>) -> ApiResult<()> {
    on_engine(&app, move |ws| {
        ws.liquid_step(req);
        Ok(())
    })
    .await
}

#[tauri::command]
pub async fn liquid_set_params(app: AppHandle, req: LiquidParams) -> ApiResult<()> {
    on_engine(&app, move |ws| {
        ws.liquid_set_params(req);
        Ok(())
    })
    .await
}

/// The knobs a cycle runs with: the saved settings'.
#[tauri::command]
pub async fn sleep_config(app: AppHandle) -> ApiResult<SleepConfig> {
    on_engine(&app, move |ws| ws.api().sleep_config()).await
}

/// The LLM endpoint without its key.
#[tauri::command]
pub async fn llm_settings(app: AppHandle) -> ApiResult<Option<LlmSettings>> {
    Ok(app.state::<AppState>().llm.view())
}

/// Sets (or, with an empty base URL, clears) the endpoint and saves it in the data
/// directory (`llm.json`, owner-only). An empty `api_key` keeps the current key.
#[tauri::command]
pub async fn set_llm_settings(app: AppHandle, req: SetLlmSettings) -> ApiResult<()> {
    blocking(move || Ok(app.state::<AppState>().llm.set(req)?)).await
}

#[tauri::command]
pub async fn sleep_run(app: AppHandle, req: SleepRunRequest) -> ApiResult<JobId<kinds::Sleep>> {
    let llm = &app.state::<AppState>().llm;
    let backend = Backend::choose(req.backend.as_deref(), || Ok(llm.get()))?;
    job(&app, move |ws, job| {
        let config = match req.config {
            Some(c) => c,
            None => ws.api().sleep_config()?,
        };
        let opts = SleepOptions {
            dry_run: req.dry_run,
            trigger: if req.review.is_some() {
                "app:review"
            } else {
                "app"
            }
            .into(),
            config,
            force: req.force,
            review: req.review,
        };
        ws.api().sleep(&opts, &backend, job)
    })
}

/// Runs (or previews) a curation of the selection; a merge without text keeps the source
/// that says the most (the person edits it in the preview).
#[tauri::command]
pub async fn curate(app: AppHandle, req: CurateRequest) -> ApiResult<CurationReport> {
    on_engine(&app, move |ws| ws.api().curate(&req, &Backend::Extractive)).await
}

#[tauri::command]
pub async fn curate_undo(app: AppHandle, req: CurateUndoArgs) -> ApiResult<CurationReport> {
    on_engine(&app, move |ws| {
        ws.api().curate_undo(&req, &somna_engine::Job::default())
    })
    .await
}

/// The latest curations, newest first.
#[tauri::command]
pub async fn curations(app: AppHandle, req: usize) -> ApiResult<Vec<CurationReport>> {
    on_engine(&app, move |ws| ws.api().curations(Some(req))).await
}

#[tauri::command]
pub async fn duplicates(app: AppHandle, req: DuplicatesArgs) -> ApiResult<Vec<DuplicateGroup>> {
    on_engine(&app, move |ws| ws.api().duplicates(&req)).await
}

#[tauri::command]
pub async fn sleep_history(app: AppHandle, req: usize) -> ApiResult<Vec<SleepReport>> {
    on_engine(&app, move |ws| ws.api().sleep_history(Some(req))).await
}

/// Undoes a cycle as a job; its result is the report of the cycle undone.
#[tauri::command]
pub async fn sleep_undo(app: AppHandle, req: UndoRequest) -> ApiResult<JobId<kinds::SleepUndo>> {
    job(&app, move |ws, job| {
        let mut undone = ws.api().sleep_undo(&req, job)?;
        undone.pop().ok_or_else(|| {
            somna_engine::Error::Internal(format!("undoing cycle {} returned no report", req.id))
        })
    })
}

/// The store's auto-sleep setting.
#[tauri::command]
pub async fn auto_sleep_settings(app: AppHandle) -> ApiResult<AutoSleepSettings> {
    on_engine(&app, |ws| ws.api().auto_sleep_settings()).await
}

/// Saves the auto-sleep setting in the store and starts or stops auto-sleep to match.
#[tauri::command]
pub async fn set_auto_sleep(app: AppHandle, req: AutoSleepSettings) -> ApiResult<()> {
    on_engine(&app, move |ws| ws.set_auto_sleep(&req)).await
}

/// The saved settings (sleep knobs and fusion weights).
#[tauri::command]
pub async fn settings(app: AppHandle) -> ApiResult<Settings> {
    on_engine(&app, |ws| ws.api().settings()).await
}

/// What a change of settings would do, written nowhere (the What-if panel).
#[tauri::command]
pub async fn what_if(app: AppHandle, req: WhatIfRequest) -> ApiResult<WhatIfReport> {
    on_engine(&app, move |ws| ws.api().what_if(&req)).await
}

/// Saves a change of settings (recorded, undoable); auto-sleep picks the new knobs up.
#[tauri::command]
pub async fn apply_settings(app: AppHandle, req: SettingsPatch) -> ApiResult<SettingsChange> {
    on_engine(&app, move |ws| ws.apply_settings(&req)).await
}

/// Puts back the settings an application replaced.
#[tauri::command]
pub async fn settings_undo(app: AppHandle, req: i64) -> ApiResult<SettingsChange> {
    on_engine(&app, move |ws| ws.undo_settings(req)).await
}

/// The latest applications of settings, newest first.
#[tauri::command]
pub async fn settings_history(app: AppHandle, req: usize) -> ApiResult<Vec<SettingsChange>> {
    on_engine(&app, move |ws| ws.api().settings_history(Some(req))).await
}
