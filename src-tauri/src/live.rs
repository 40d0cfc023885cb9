//! Live updates and the app's own server.
//!
//! * One forwarder per open store turns the engine's change stream into ONE event,
//!   `somna://changed` (a [`ChangeEvent`]: where it was made — this process or another — and
//!   what changed). Every write reaches it: the app's commands, the app's own server (an
//!   agent over MCP/REST), auto-sleep, the liquid loop, and other processes' writes, which
//!   the engine's watcher finds (`Somna::watch_external`: on SQLite every 500 ms, on Postgres
//!   as the server notifies each committed write). The UI reloads what
//!   each change touches (see ui/src/main.ts).
//! * The settings dialog can start and stop the loopback HTTP server (MCP + REST) on the
//!   open store; its address and bearer token are shown there.

use crate::error::{ApiError, ApiResult};
use crate::rpc::events;
use crate::state::AppState;
use serde::Serialize;
use somna_engine::Somna;
use somna_server::{token, Ops, RunningServer};
use std::net::{Ipv4Addr, SocketAddr};
use tauri::{AppHandle, Manager};

/// Forwards `engine`'s change stream to the UI until the engine is dropped (its stream
/// then closes). Other processes' writes arrive on it through the workspace's watcher.
pub fn forward_changes(app: &AppHandle, engine: &Somna) {
    let changes = engine.subscribe();
    let emitter = app.clone();
    std::thread::Builder::new()
        .name("somna-changes".into())
        .spawn(move || {
            for event in changes {
                crate::rpc::emit::<events::Changed>(&emitter, event);
            }
        })
        .expect("start the change forwarder");
}

/// The app's server, if running, and the store it serves.
#[derive(Default)]
pub struct ServerSlot {
    server: tokio::sync::Mutex<Option<(RunningServer, String)>>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ServerStatus {
    pub running: bool,
    pub address: Option<String>,
    pub mcp_url: Option<String>,
    pub db_path: Option<String>,
    pub token: Option<String>,
    pub token_file: String,
}

fn token_file() -> std::path::PathBuf {
    token::token_path(&somna_engine::paths::data_dir())
}

/// The server's token; a token file the server refuses (readable by others, weak) comes to
/// the UI as `unsafe_token` with the reason and the fix.
fn load_token() -> ApiResult<String> {
    token::load_or_create(&token_file()).map_err(|e| match e {
        somna_server::ServerError::UnsafeToken { .. } => {
            ApiError::new("unsafe_token", e.to_string())
        }
        e => ApiError::new("io", e.to_string()),
    })
}

fn status_of(slot: &Option<(RunningServer, String)>) -> ApiResult<ServerStatus> {
    let file = token_file();
    Ok(match slot {
        Some((s, db)) => ServerStatus {
            running: true,
            address: Some(format!("http://{}", s.addr)),
            mcp_url: Some(format!("http://{}/mcp", s.addr)),
            db_path: Some(db.clone()),
            token: Some(load_token()?),
            token_file: file.display().to_string(),
        },
        None => ServerStatus {
            running: false,
            address: None,
            mcp_url: None,
            db_path: None,
            token: None,
            token_file: file.display().to_string(),
        },
    })
}

#[tauri::command]
pub async fn server_status(app: AppHandle) -> ApiResult<ServerStatus> {
    let slot = app.state::<ServerSlot>();
    let guard = slot.server.lock().await;
    status_of(&guard)
}

/// Starts the server on 127.0.0.1:`req` (0 picks a free port) unless it runs.
#[tauri::command]
pub async fn server_start(app: AppHandle, req: u16) -> ApiResult<ServerStatus> {
    let state = app.state::<AppState>();
    let slot = app.state::<ServerSlot>();
    let mut guard = slot.server.lock().await;
    if guard.is_none() {
        *guard = Some(start(&state, req).await?);
    }
    status_of(&guard)
}

/// Serves the current store on 127.0.0.1:`port`. Its writes are the engine's like any
/// other, so they reach the UI through the change stream.
async fn start(state: &AppState, port: u16) -> ApiResult<(RunningServer, String)> {
    let engine = state.workspace()?.api().engine().clone();
    let db = somna_engine::store::shown_location(&state.db_path());
    let token = load_token()?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let server = somna_server::serve(Ops::new(engine, "http"), addr, &token)
        .await
        .map_err(|e| ApiError::new("io", e.to_string()))?;
    Ok((server, db))
}

/// After the app switched stores: a running server is restarted on the same port over the
/// new store, so agents never write into the store the user left.
pub fn follow_store_switch(app: &AppHandle) -> ApiResult<()> {
    let state = app.state::<AppState>();
    let slot = app.state::<ServerSlot>();
    tauri::async_runtime::block_on(async {
        let mut guard = slot.server.lock().await;
        let Some((server, _)) = guard.take() else {
            return Ok(());
        };
        let port = server.addr.port();
        server
            .stop()
            .await
            .map_err(|e| ApiError::new("io", e.to_string()))?;
        *guard = Some(start(&state, port).await?);
        Ok(())
    })
}

#[tauri::command]
pub async fn server_stop(app: AppHandle) -> ApiResult<ServerStatus> {
    let slot = app.state::<ServerSlot>();
    let mut guard = slot.server.lock().await;
    if let Some((server, _)) = guard.take() {
        server
            .stop()
            .await
            .map_err(|e| ApiError::new("io", e.to_string()))?;
    }
    status_of(&guard)
}
