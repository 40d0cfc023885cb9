//! Tauri commands: one-line adapters over the engine. Long work becomes a job (see jobs.rs)
//! and returns its id at once; everything else returns its value or `{code, message}`.

use crate::error::{ApiError, ApiResult};
use crate::points;
use crate::state::{AppState, EngineSlot};
use serde::Serialize;
use somna_engine::cluster::ClusterUpkeep;
use somna_engine::ingest::{ImportFormat, ImportOutcome};
use somna_engine::store::HistoryEntry;
use somna_engine::{Job, Somna};
use somna_engine::{ListQuery, Memory, MemoryUpdate, SearchQuery, SearchResponse};
use somna_engine::{MemoryDetail, Page, Stats};
use tauri::{AppHandle, Emitter, Manager, State};

/// The bundled demo conversations (assets/demo, written by the Somna team).
const DEMO_JSONL: &str = include_str!("../../assets/demo/demo.jsonl");

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Status {
    #[cfg_attr(test, ts(type = "\"opening\" | \"ready\" | \"failed\""))]
    pub state: &'static str,
    pub error: Option<ApiError>,
    pub db_path: String,
    pub model_dir: String,
    pub stats: Option<Stats>,
    pub demo_if_empty: bool,
}

#[tauri::command]
pub fn status(state: State<'_, AppState>) -> Status {
    let slot = state.engine.read().unwrap_or_else(|p| p.into_inner());
    let (name, error, stats) = match &*slot {
        EngineSlot::Opening => ("opening", None, None),
        EngineSlot::Failed(e) => ("failed", Some(e.clone()), None),
        EngineSlot::Ready(e) => match e.stats() {
            Ok(s) => ("ready", None, Some(s)),
            Err(err) => ("failed", Some(err.into()), None),
        },
    };
    Status {
        state: name,
        error,
        db_path: state.db_path().display().to_string(),
        model_dir: state.model_dir.display().to_string(),
        stats,
        demo_if_empty: state.demo_if_empty,
    }
}

#[tauri::command]
pub fn stats(state: State<'_, AppState>) -> ApiResult<Stats> {
    Ok(state.engine()?.stats()?)
}

#[tauri::command]
pub fn list_memories(state: State<'_, AppState>, query: ListQuery) -> ApiResult<Page> {
    Ok(state.engine()?.list(&query)?)
}

/// Searches without recording accesses: looking at memories in the app is not an agent
/// using them, so it must not change their usage signals.
#[tauri::command]
pub async fn search(state: State<'_, AppState>, query: SearchQuery) -> ApiResult<SearchResponse> {
    let engine = state.engine()?;
    tauri::async_runtime::spawn_blocking(move || engine.search_readonly(&query))
        .await
        .map_err(|e| ApiError::new("internal", e.to_string()))?
        .map_err(Into::into)
}

#[tauri::command]
pub fn get_memory(state: State<'_, AppState>, id: i64) -> ApiResult<MemoryDetail> {
    Ok(state.engine()?.get(id)?)
}

#[tauri::command]
pub fn memory_history(state: State<'_, AppState>, id: i64) -> ApiResult<Vec<HistoryEntry>> {
    Ok(state.engine()?.history(id)?)
}

#[tauri::command]
pub async fn update_memory(
    state: State<'_, AppState>,
    id: i64,
    update: MemoryUpdate,
) -> ApiResult<Memory> {
    let engine = state.engine()?;
    tauri::async_runtime::spawn_blocking(move || engine.update(id, &update, "app"))
        .await
        .map_err(|e| ApiError::new("internal", e.to_string()))?
        .map_err(Into::into)
}

#[tauri::command]
pub fn delete_memory(state: State<'_, AppState>, id: i64, hard: bool) -> ApiResult<()> {
    Ok(state.engine()?.delete(id, hard, "app")?)
}

#[tauri::command]
pub fn restore_memory(state: State<'_, AppState>, id: i64) -> ApiResult<Memory> {
    Ok(state.engine()?.restore(id, "app")?)
}

/// Imports a file's content (the UI reads it from a file picker). Returns the job id.
#[tauri::command]
pub fn import_text(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
    format: Option<ImportFormat>,
    content: String,
) -> ApiResult<u64> {
    let engine = state.engine()?;
    let handle = app.clone();
    Ok(state.jobs.spawn(&app, "import", move |job| {
        let format = match format {
            Some(f) => f,
            None => ImportFormat::detect(&name, &content)?,
        };
        import_and_cluster(&handle, &engine, &name, format, &content, job)
    }))
}

/// Loads the bundled demo conversations. Returns the job id.
#[tauri::command]
pub fn load_demo(app: AppHandle, state: State<'_, AppState>) -> ApiResult<u64> {
    let engine = state.engine()?;
    let handle = app.clone();
    Ok(state.jobs.spawn(&app, "import", move |job| {
        import_and_cluster(
            &handle,
            &engine,
            "demo.jsonl",
            ImportFormat::ChatJsonl,
            DEMO_JSONL,
            job,
        )
    }))
}

/// What an import job did: the format it read, what it stored, and how the concept
/// clusters were kept current afterwards.
#[derive(Serialize)]
struct ImportDone {
    format: ImportFormat,
    #[serde(flatten)]
    outcome: ImportOutcome,
    clusters: ClusterUpkeep,
}

fn import_and_cluster(
    app: &AppHandle,
    engine: &Somna,
    name: &str,
    format: ImportFormat,
    content: &str,
    job: &Job,
) -> ApiResult<ImportDone> {
    let outcome = engine.import_text(name, format, content, job)?;
    let clusters = engine.keep_clustered(job)?;
    if !matches!(clusters, ClusterUpkeep::TooFew { .. }) {
        let _ = app.emit("somna://clusters-changed", ());
    }
    Ok(ImportDone {
        format,
        outcome,
        clusters,
    })
}

/// Writes the whole store as a Somna export to `path`; returns the number of memories.
#[tauri::command]
pub async fn export_store(state: State<'_, AppState>, path: String) -> ApiResult<usize> {
    let engine = state.engine()?;
    tauri::async_runtime::spawn_blocking(move || {
        let doc = engine.export()?;
        let n = doc.memories.len();
        let text = serde_json::to_string_pretty(&doc).map_err(somna_engine::Error::from)?;
        let path = expand_home(&path);
        std::fs::write(&path, text).map_err(|source| somna_engine::Error::Io { path, source })?;
        Ok::<_, somna_engine::Error>(n)
    })
    .await
    .map_err(|e| ApiError::new("internal", e.to_string()))?
    .map_err(Into::into)
}

fn expand_home(p: &str) -> std::path::PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
        _ => std::path::PathBuf::from(p),
    }
}

#[tauri::command]
pub fn cancel_job(state: State<'_, AppState>, job: u64) -> bool {
    state.jobs.cancel(job)
}

/// Every visible memory's attributes, packed for the GPU (see points.rs for the layout).
#[tauri::command]
pub async fn point_attributes(
    app: AppHandle,
    state: State<'_, AppState>,
) -> ApiResult<tauri::ipc::Response> {
    let engine = match state.engine() {
        Ok(e) => Some(e),
        Err(e) if e.code == "not_ready" => None,
        Err(e) => return Err(e),
    };
    let attrs = tauri::async_runtime::spawn_blocking(move || match engine {
        Some(engine) => Ok(engine.point_attributes()?),
        None => {
            let state = app.state::<AppState>();
            let early = state.early.lock().unwrap_or_else(|p| p.into_inner());
            match early.as_ref() {
                Some(store) => Ok(somna_engine::points::attributes(store)?),
                None => Err(ApiError::not_ready()),
            }
        }
    })
    .await
    .map_err(|e| ApiError::new("internal", e.to_string()))??;
    Ok(tauri::ipc::Response::new(points::pack_attributes(&attrs)))
}

#[tauri::command]
pub fn similar(
    state: State<'_, AppState>,
    id: i64,
    k: usize,
) -> ApiResult<Vec<somna_engine::points::Similar>> {
    Ok(state.engine()?.similar_to(id, k)?)
}

#[tauri::command]
pub fn neighbourhood(
    state: State<'_, AppState>,
    seeds: Vec<i64>,
    depth: usize,
    limit: usize,
) -> ApiResult<somna_engine::points::Neighbourhood> {
    Ok(state
        .engine()?
        .neighbourhood(&seeds, depth.min(4), limit.min(2000))?)
}

#[tauri::command]
pub fn actors(state: State<'_, AppState>) -> ApiResult<Vec<String>> {
    Ok(state.engine()?.actors())
}

/// Opens (or creates) the store at `path` in place of the current one. Returns the job id.
#[tauri::command]
pub fn open_store(app: AppHandle, state: State<'_, AppState>, path: String) -> ApiResult<u64> {
    let path = expand_home(path.trim());
    if path.as_os_str().is_empty() || path.is_dir() {
        return Err(ApiError::new(
            "invalid_input",
            "give the path of a SQLite file (it is created if missing)",
        ));
    }
    let model_dir = state.model_dir.clone();
    let handle = app.clone();
    Ok(state.jobs.spawn(&app, "open", move |job| {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ApiError::new("io", e.to_string()))?;
        }
        let engine = somna_engine::Somna::open(&somna_engine::Config::new(&path, &model_dir), job)?;
        let state = handle.state::<AppState>();
        state.set(EngineSlot::Ready(std::sync::Arc::new(engine)));
        *state.db_path.write().unwrap_or_else(|p| p.into_inner()) = path.clone();
        crate::live::follow_store_switch(&handle)?;
        Ok(path.display().to_string())
    }))
}

#[tauri::command]
pub fn memory_sleep_history(
    state: State<'_, AppState>,
    id: i64,
) -> ApiResult<Vec<somna_engine::points::MemorySleepEvent>> {
    Ok(state.engine()?.memory_sleep_history(id, 200)?)
}
