//! Tauri commands over memories and the store: one-line adapters over the operations layer
//! (`somna-api`). Every command takes the app handle and one request value (`req`, listed
//! with its response type in rpc.rs) and runs its engine call on the blocking pool, never on
//! the main thread. Long work becomes a job (see jobs.rs) and returns its id at once.

use crate::error::{ApiError, ApiResult};
use crate::jobs::{kinds, JobId, JobKind};
use crate::points;
use crate::state::{AppState, Engine};
use serde::{Deserialize, Serialize};
use somna_api::{
    DeleteArgs, DeleteResult, GetArgs, IdArgs, ImportRequest, ListArgs, NeighbourhoodRequest,
    SimilarArgs, SimilarResult, TunedSearchArgs, UpdateArgs, Workspace,
};
use somna_engine::ingest::ImportFormat;
use somna_engine::points::{MemorySleepEvent, Neighbourhood};
use somna_engine::store::HistoryEntry;
use somna_engine::{
    Job, Memory, MemoryDetail, Page, SearchResponse, Stats, Timeline, VisibilitySteps,
};
use tauri::{AppHandle, Manager};

/// The bundled demo conversations (assets/demo, written by the Somna team).
const DEMO_JSONL: &str = include_str!("../../assets/demo/demo.jsonl");

/// Runs `f` on the blocking pool.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(ApiError::internal)?
}

/// Runs `f` over the open store's workspace on the blocking pool.
pub async fn on_engine<T: Send + 'static>(
    app: &AppHandle,
    f: impl FnOnce(&Workspace) -> somna_engine::Result<T> + Send + 'static,
) -> ApiResult<T> {
    let ws = app.state::<AppState>().workspace()?;
    blocking(move || Ok(f(&ws)?)).await
}

/// Starts `work` over the open store's workspace as a job of kind `K`; returns its id.
pub fn job<K: JobKind>(
    app: &AppHandle,
    work: impl FnOnce(&Workspace, &Job) -> somna_engine::Result<K::Output> + Send + 'static,
) -> ApiResult<JobId<K>> {
    let state = app.state::<AppState>();
    let ws = state.workspace()?;
    Ok(state
        .jobs
        .spawn::<K, _>(app, move |job| Ok(work(&ws, job)?)))
}

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
pub async fn status(app: AppHandle) -> ApiResult<Status> {
    let state = app.state::<AppState>();
    let (db_path, model_dir, demo_if_empty) = (
        somna_engine::store::shown_location(&state.db_path()),
        state.model_dir.display().to_string(),
        state.demo_if_empty,
    );
    let (name, error, stats) = match state.workspace() {
        Err(e) if e.code == "not_ready" => ("opening", None, None),
        Err(e) => ("failed", Some(e), None),
        Ok(ws) => match blocking(move || Ok(ws.api().stats()?)).await {
            Ok(s) => ("ready", None, Some(s)),
            Err(e) => ("failed", Some(e), None),
        },
    };
    Ok(Status {
        state: name,
        error,
        db_path,
        model_dir,
        stats,
        demo_if_empty,
    })
}

#[tauri::command]
pub async fn stats(app: AppHandle) -> ApiResult<Stats> {
    on_engine(&app, |ws| ws.api().stats()).await
}

#[tauri::command]
pub async fn list_memories(app: AppHandle, req: ListArgs) -> ApiResult<Page> {
    on_engine(&app, move |ws| ws.api().list(&req)).await
}

/// Searches without recording accesses: looking at memories in the app is not an agent
/// using them, so it must not change their usage signals. The X-ray may set the context
/// window and the fusion weights.
#[tauri::command]
pub async fn search(app: AppHandle, req: TunedSearchArgs) -> ApiResult<SearchResponse> {
    let (args, opts) = req.split(false);
    on_engine(&app, move |ws| ws.api().search(&args, opts)).await
}

#[tauri::command]
pub async fn get_memory(app: AppHandle, req: GetArgs) -> ApiResult<MemoryDetail> {
    on_engine(&app, move |ws| ws.api().get_at(req.id, req.as_of)).await
}

#[tauri::command]
pub async fn memory_history(app: AppHandle, req: IdArgs) -> ApiResult<Vec<HistoryEntry>> {
    on_engine(&app, move |ws| ws.api().history(req.id)).await
}

#[tauri::command]
pub async fn update_memory(app: AppHandle, req: UpdateArgs) -> ApiResult<Memory> {
    let (id, fields) = req.split();
    on_engine(&app, move |ws| ws.api().update(id, fields)).await
}

#[tauri::command]
pub async fn delete_memory(app: AppHandle, req: DeleteArgs) -> ApiResult<DeleteResult> {
    on_engine(&app, move |ws| ws.api().delete(&req)).await
}

#[tauri::command]
pub async fn restore_memory(app: AppHandle, req: IdArgs) -> ApiResult<Memory> {
    on_engine(&app, move |ws| ws.api().restore(req.id)).await
}

/// Imports a file's content (the UI reads it from a file picker). Returns the job id.
#[tauri::command]
pub async fn import_text(app: AppHandle, req: ImportRequest) -> ApiResult<JobId<kinds::Import>> {
    job(&app, move |ws, job| ws.api().import(&req, job))
}

/// Loads the bundled demo conversations. Returns the job id.
#[tauri::command]
pub async fn load_demo(app: AppHandle) -> ApiResult<JobId<kinds::Import>> {
    let demo = ImportRequest {
        name: "demo.jsonl".into(),
        format: Some(ImportFormat::ChatJsonl),
        content: DEMO_JSONL.into(),
    };
    job(&app, move |ws, job| ws.api().import(&demo, job))
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct PathRequest {
    /// A file path; a leading `~/` is the home directory.
    pub path: String,
}

/// Writes the whole store as a Somna export; returns the number of memories.
#[tauri::command]
pub async fn export_store(app: AppHandle, req: PathRequest) -> ApiResult<usize> {
    on_engine(&app, move |ws| ws.api().export_to(&req.path)).await
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct JobRef {
    pub job: u64,
}

/// Requests a job's cancellation; false if it is not running.
#[tauri::command]
pub async fn cancel_job(app: AppHandle, req: JobRef) -> ApiResult<bool> {
    Ok(app.state::<AppState>().jobs.cancel(req.job))
}

/// Every visible memory's attributes, packed for the GPU (see points.rs for the layout).
/// While the engine opens they are read from the store directly.
#[tauri::command]
pub async fn point_attributes(app: AppHandle) -> ApiResult<tauri::ipc::Response> {
    let state = app.state::<AppState>();
    let attrs = match state.workspace() {
        Ok(ws) => blocking(move || Ok(ws.api().point_attributes()?)).await?,
        Err(e) if e.code == "not_ready" => {
            let store = state.early_store().ok_or_else(ApiError::not_ready)?;
            blocking(move || {
                let store = store.lock().unwrap_or_else(|p| p.into_inner());
                Ok(somna_api::stored_points(&store)?)
            })
            .await?
        }
        Err(e) => return Err(e),
    };
    Ok(tauri::ipc::Response::new(points::pack_attributes(&attrs)))
}

#[tauri::command]
pub async fn similar(app: AppHandle, req: SimilarArgs) -> ApiResult<SimilarResult> {
    on_engine(&app, move |ws| ws.api().similar(&req)).await
}

#[tauri::command]
pub async fn neighbourhood(app: AppHandle, req: NeighbourhoodRequest) -> ApiResult<Neighbourhood> {
    on_engine(&app, move |ws| ws.api().neighbourhood(&req)).await
}

#[tauri::command]
pub async fn actors(app: AppHandle) -> ApiResult<Vec<String>> {
    on_engine(&app, |ws| Ok(ws.api().actors())).await
}

/// Opens (or creates, with its folder) the store at `path` (a SQLite file or a Postgres
/// URL) in place of the current one. Returns the job id; the job's result is the store as shown (no
/// password).
#[tauri::command]
pub async fn open_store(app: AppHandle, req: PathRequest) -> ApiResult<JobId<kinds::Open>> {
    let given = req.path.trim();
    let postgres = somna_engine::store::is_postgres_url(given);
    let path = if postgres {
        std::path::PathBuf::from(given)
    } else {
        somna_api::expand_home(given)
    };
    if path.as_os_str().is_empty() || path.is_dir() {
        return Err(ApiError::new(
            "invalid_input",
            "give the path of a SQLite file (it is created if missing) or a postgres:// URL",
        ));
    }
    let state = app.state::<AppState>();
    let handle = app.clone();
    Ok(state.jobs.spawn::<kinds::Open, _>(&app, move |job| {
        let model_dir = handle.state::<AppState>().model_dir.clone();
        let engine = somna_engine::Somna::open(&somna_engine::Config::new(&path, &model_dir), job)?;
        let shown = engine.stats()?.db_path;
        let ws = crate::workspace(&handle, engine);
        handle
            .state::<AppState>()
            .set(path.clone(), Engine::Ready(ws));
        crate::live::follow_store_switch(&handle)?;
        Ok(shown)
    }))
}

/// The store's span in time and its imports and operations (the time scrubber's ticks).
#[tauri::command]
pub async fn timeline(app: AppHandle) -> ApiResult<Timeline> {
    on_engine(&app, |ws| ws.api().timeline()).await
}

/// Every memory's visibility over time, loaded once when the scrubber opens.
#[tauri::command]
pub async fn visibility_steps(app: AppHandle) -> ApiResult<VisibilitySteps> {
    on_engine(&app, |ws| ws.api().visibility_steps()).await
}

#[tauri::command]
pub async fn memory_sleep_history(app: AppHandle, req: IdArgs) -> ApiResult<Vec<MemorySleepEvent>> {
    on_engine(&app, move |ws| ws.api().memory_sleep_history(req.id)).await
}
