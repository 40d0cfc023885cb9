//! Commands behind the 3D view, the cluster panel and the sleep panel: layouts (kept in
//! memory after a job computes them, handed to the UI as binary), clustering, the liquid
//! loop (a background thread whose steps are emitted as events), and sleep cycles.

use crate::error::{ApiError, ApiResult};
use crate::points;
use crate::state::AppState;
use serde::Serialize;
use somna_engine::{
    ClusterInfo, ClusterMerge, LiquidEvent, LiquidLoop, LiquidParams, ProjectionMethod,
    SleepConfig, SleepOptions, SleepReport,
};
use std::sync::Arc;
use tauri::{AppHandle, Emitter, Manager, State};

#[derive(Debug, Serialize)]
pub struct LayoutSummary {
    pub method: ProjectionMethod,
    pub dims: usize,
    pub points: usize,
    pub placed_incrementally: usize,
    pub computed_at: i64,
}

/// Computes the layout of `method` in `dims` dimensions as a job: the cached one with new
/// memories placed incrementally, or (`full`) a recomputation aligned to the previous one.
#[tauri::command]
pub fn compute_layout(
    app: AppHandle,
    state: State<'_, AppState>,
    method: ProjectionMethod,
    dims: usize,
    full: bool,
) -> ApiResult<u64> {
    let engine = state.engine()?;
    let handle = app.clone();
    Ok(state.jobs.spawn(&app, "layout", move |job| {
        let layout = if full {
            let params = engine
                .layout_params(method, dims)?
                .unwrap_or_else(|| somna_engine::ProjectionParams::new(method, dims));
            engine.project(&params, job)?
        } else {
            engine.layout(method, dims, job)?
        };
        let summary = LayoutSummary {
            method,
            dims,
            points: layout.ids.len(),
            placed_incrementally: layout.placed_incrementally,
            computed_at: layout.computed_at,
        };
        handle
            .state::<AppState>()
            .put_layout(method, dims, Arc::new(layout));
        Ok(summary)
    }))
}

/// The last layout `compute_layout` produced, as an "SMPL" buffer (see points.rs).
#[tauri::command]
pub fn layout_data(
    state: State<'_, AppState>,
    method: ProjectionMethod,
    dims: usize,
) -> ApiResult<tauri::ipc::Response> {
    if let Some(layout) = state.layout(method, dims) {
        return Ok(tauri::ipc::Response::new(points::pack_layout(
            &layout.ids,
            layout.dims,
            &layout.coords,
        )));
    }
    // Not computed in this session yet: the layout cached in the store, as it was saved
    // (read through the early connection while the engine is still opening).
    let read = |store: &somna_engine::store::Store| {
        store
            .read()
            .get_layout(method.as_str(), dims)
            .map(|c| c.map(|c| points::pack_layout(&c.ids, c.dims, &c.coords)))
    };
    let packed = match state.engine() {
        Ok(engine) => engine.with_store(read)?,
        Err(e) if e.code == "not_ready" => {
            let early = state.early.lock().unwrap_or_else(|p| p.into_inner());
            match early.as_ref() {
                Some(store) => read(store)?,
                None => None,
            }
        }
        Err(e) => return Err(e),
    };
    packed.map(tauri::ipc::Response::new).ok_or_else(|| {
        ApiError::new(
            "not_found",
            "no layout computed yet: call compute_layout first",
        )
    })
}

#[tauri::command]
pub fn cluster_run(app: AppHandle, state: State<'_, AppState>, k: Option<usize>) -> ApiResult<u64> {
    let engine = state.engine()?;
    let handle = app.clone();
    Ok(state.jobs.spawn(&app, "cluster", move |job| {
        let report = engine.cluster(k, job)?;
        let _ = handle.emit("somna://clusters-changed", ());
        Ok(report)
    }))
}

#[tauri::command]
pub fn clusters(state: State<'_, AppState>) -> ApiResult<Vec<ClusterInfo>> {
    Ok(state.engine()?.clusters()?)
}

#[tauri::command]
pub fn cluster_merges(state: State<'_, AppState>) -> ApiResult<Vec<ClusterMerge>> {
    Ok(state.engine()?.cluster_merges()?)
}

#[tauri::command]
pub fn liquid_defaults() -> LiquidParams {
    LiquidParams::default()
}

#[derive(Debug, Serialize)]
pub struct LiquidStatus {
    pub running: bool,
    pub params: LiquidParams,
}

#[tauri::command]
pub fn liquid_status(state: State<'_, AppState>) -> LiquidStatus {
    let liquid = state.liquid.lock().unwrap_or_else(|p| p.into_inner());
    LiquidStatus {
        running: liquid.as_ref().is_some_and(|l| l.handle.is_running()),
        params: liquid
            .as_ref()
            .map(|l| l.params.clone())
            .unwrap_or_default(),
    }
}

/// The running loop, spawned on first use; its events go to the UI as
/// `somna://liquid-step` and `somna://liquid-state`.
fn with_loop<T>(
    app: &AppHandle,
    state: &AppState,
    params: Option<LiquidParams>,
    f: impl FnOnce(&LiquidLoop) -> T,
) -> ApiResult<T> {
    let engine = state.engine()?;
    let mut slot = state.liquid.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        let emitter = app.clone();
        let handle = LiquidLoop::spawn(engine, params.clone().unwrap_or_default(), move |event| {
            let _ = match event {
                LiquidEvent::Step(step) => {
                    let _ = emitter.emit("somna://liquid-step", &step);
                    if !step.moved.is_empty() || !step.merged.is_empty() {
                        emitter.emit("somna://clusters-changed", ())
                    } else {
                        Ok(())
                    }
                }
                LiquidEvent::State { running } => emitter.emit(
                    "somna://liquid-state",
                    serde_json::json!({ "running": running }),
                ),
                LiquidEvent::Error { code, message } => {
                    emitter.emit("somna://liquid-error", ApiError::new(&code, message))
                }
            };
        });
        *slot = Some(crate::state::Liquid {
            handle,
            params: params.clone().unwrap_or_default(),
        });
    }
    let liquid = slot.as_mut().expect("spawned above");
    if let Some(p) = params {
        liquid.params = p.clone();
        liquid.handle.set_params(p);
    }
    Ok(f(&liquid.handle))
}

#[tauri::command]
pub fn liquid_start(
    app: AppHandle,
    state: State<'_, AppState>,
    params: Option<LiquidParams>,
) -> ApiResult<()> {
    with_loop(&app, &state, params, |l| l.start())
}

#[tauri::command]
pub fn liquid_pause(app: AppHandle, state: State<'_, AppState>) -> ApiResult<()> {
    with_loop(&app, &state, None, |l| l.pause())
}

#[tauri::command]
pub fn liquid_step(
    app: AppHandle,
    state: State<'_, AppState>,
    params: Option<LiquidParams>,
) -> ApiResult<()> {
    with_loop(&app, &state, params, |l| l.step())
}

#[tauri::command]
pub fn liquid_set_params(
    app: AppHandle,
    state: State<'_, AppState>,
    params: LiquidParams,
) -> ApiResult<()> {
    with_loop(&app, &state, Some(params), |_| ())
}

#[tauri::command]
pub fn sleep_config() -> SleepConfig {
    SleepConfig::default()
}

/// The LLM endpoint as the UI may see it: everything but the key.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LlmSettings {
    pub base_url: String,
    pub model: String,
    pub has_key: bool,
    pub timeout_secs: u64,
}

#[tauri::command]
pub fn llm_settings(state: State<'_, AppState>) -> Option<LlmSettings> {
    let llm = state.llm.lock().unwrap_or_else(|p| p.into_inner());
    llm.as_ref().map(|c| LlmSettings {
        base_url: c.base_url.clone(),
        model: c.model.clone(),
        has_key: c.api_key.is_some(),
        timeout_secs: c.timeout_secs,
    })
}

/// Sets (or, with an empty base URL, clears) the endpoint, and saves it in the data
/// directory (`llm.json`, owner-only). An empty `api_key` keeps the current key.
#[tauri::command]
pub fn set_llm_settings(
    state: State<'_, AppState>,
    base_url: String,
    model: String,
    api_key: Option<String>,
    timeout_secs: u64,
) -> ApiResult<()> {
    let mut llm = state.llm.lock().unwrap_or_else(|p| p.into_inner());
    let base_url = base_url.trim().trim_end_matches('/').to_string();
    let data_dir = somna_engine::paths::data_dir();
    if base_url.is_empty() {
        somna_engine::sleep::endpoint::save(&data_dir, None)?;
        *llm = None;
        return Ok(());
    }
    somna_engine::sleep::chat::check_base_url(&base_url)?;
    if model.trim().is_empty() {
        return Err(ApiError::new("invalid_input", "give the model name"));
    }
    let key = api_key
        .filter(|k| !k.is_empty())
        .or_else(|| llm.as_ref().and_then(|c| c.api_key.clone()));
    let config = somna_engine::sleep::chat::ChatConfig {
        base_url,
        model: model.trim().into(),
        api_key: key,
        timeout_secs: timeout_secs.clamp(1, 600),
    };
    somna_engine::sleep::endpoint::save(&data_dir, Some(&config))?;
    *llm = Some(config);
    Ok(())
}

#[tauri::command]
pub fn sleep_run(
    app: AppHandle,
    state: State<'_, AppState>,
    dry_run: bool,
    config: Option<SleepConfig>,
    backend: Option<String>,
) -> ApiResult<u64> {
    let engine = state.engine()?;
    let handle = app.clone();
    let chat = match backend.as_deref().unwrap_or("extractive") {
        "extractive" => None,
        "chat" => Some(
            state
                .llm
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
                .ok_or_else(|| {
                    ApiError::new("invalid_input", "no LLM endpoint is set (Settings)")
                })?,
        ),
        other => {
            return Err(ApiError::new(
                "invalid_input",
                format!("unknown backend {other:?}: extractive or chat"),
            ))
        }
    };
    Ok(state.jobs.spawn(&app, "sleep", move |job| {
        let opts = SleepOptions {
            dry_run,
            trigger: "app".into(),
            config: config.unwrap_or_default(),
        };
        let report = match chat {
            Some(c) => engine.sleep_with(
                &opts,
                &somna_engine::sleep::chat::ChatCompressor::new(c),
                job,
            )?,
            None => engine.sleep(&opts, job)?,
        };
        if !dry_run {
            let _ = handle.emit("somna://memories-changed", ());
        }
        Ok(report)
    }))
}

#[tauri::command]
pub fn sleep_history(state: State<'_, AppState>, limit: usize) -> ApiResult<Vec<SleepReport>> {
    Ok(state.engine()?.sleep_history(limit.min(1000))?)
}

#[tauri::command]
pub fn sleep_undo(app: AppHandle, state: State<'_, AppState>, id: i64) -> ApiResult<u64> {
    let engine = state.engine()?;
    Ok(state.jobs.spawn(&app, "sleep-undo", move |job| {
        Ok(engine.sleep_undo(id, job)?)
    }))
}

/// The store's auto-sleep setting.
#[tauri::command]
pub fn auto_sleep_settings(
    state: State<'_, AppState>,
) -> ApiResult<somna_engine::sleep::auto::AutoSleepSettings> {
    Ok(state.engine()?.auto_sleep_settings()?)
}

/// Saves the auto-sleep setting in the store and starts or stops auto-sleep to match.
#[tauri::command]
pub fn set_auto_sleep(
    state: State<'_, AppState>,
    settings: somna_engine::sleep::auto::AutoSleepSettings,
) -> ApiResult<()> {
    let engine = state.engine()?;
    engine.set_auto_sleep_settings(&settings)?;
    Ok(state.restart_auto_sleep(Some(engine))?)
}
