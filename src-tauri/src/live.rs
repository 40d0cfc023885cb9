//! Live updates and the app's own server.
//!
//! * A poller (every 500 ms) asks the engine to catch up with writes other processes made
//!   to the store (an agent through `somna serve` / `somna mcp`); when there were any, it
//!   emits `somna://memories-changed` (the UI reloads the browser and places the new
//!   points incrementally) and `somna://external-changes` with the ids.
//! * The settings dialog can start and stop the loopback HTTP server (MCP + REST) on the
//!   open store; its address and bearer token are shown there. Its writes come from this
//!   process, so the engine's sync does not report them: they set a flag that the poller
//!   turns into one `somna://memories-changed` per tick.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use serde::Serialize;
use somna_server::{token, Ops, RunningServer};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tauri::{AppHandle, Emitter, Manager};

pub const POLL: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ExternalChanges {
    pub added: Vec<i64>,
    pub updated: Vec<i64>,
    pub removed: Vec<i64>,
}

/// Runs for the app's lifetime on its own thread; a store switch is picked up on the next tick.
pub fn start_poller(app: AppHandle) {
    std::thread::Builder::new()
        .name("somna-sync".into())
        .spawn(move || loop {
            std::thread::sleep(POLL);
            let Ok(ws) = app.state::<AppState>().workspace() else {
                continue;
            };
            let engine = ws.api().engine();
            match engine.sync_external_changes() {
                Ok(c) if !c.is_empty() => {
                    let payload = ExternalChanges {
                        added: c.added.iter().map(|m| m.id).collect(),
                        updated: c.updated.iter().map(|m| m.id).collect(),
                        removed: c.removed,
                    };
                    let _ = app.emit("somna://external-changes", payload);
                    let _ = app.emit("somna://memories-changed", ());
                }
                Ok(_) => {}
                Err(e) => eprintln!("somna: catching up with other writers failed: {e}"),
            }
        })
        .expect("start the sync thread");
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

fn status_of(slot: &Option<(RunningServer, String)>) -> ApiResult<ServerStatus> {
    let file = token_file();
    Ok(match slot {
        Some((s, db)) => ServerStatus {
            running: true,
            address: Some(format!("http://{}", s.addr)),
            mcp_url: Some(format!("http://{}/mcp", s.addr)),
            db_path: Some(db.clone()),
            token: Some(
                token::load_or_create(&file).map_err(|e| ApiError::new("io", e.to_string()))?,
            ),
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

/// Serves the current store on 127.0.0.1:`port`.
async fn start(state: &AppState, port: u16) -> ApiResult<(RunningServer, String)> {
    let engine = state.workspace()?.api().engine().clone();
    let db = state.db_path().display().to_string();
    let token =
        token::load_or_create(&token_file()).map_err(|e| ApiError::new("io", e.to_string()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let ops = Ops::new(engine, "http");
    let server = somna_server::serve(ops, addr, &token)
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
