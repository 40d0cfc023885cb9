//! Live updates and the app's own server.
//!
//! * One forwarder per open store turns the engine's change stream into ONE event,
//!   `somna://changed` (a [`ChangeEvent`]: where it was made — this process or another — and
//!   what changed). Every write reaches it: the app's commands, the app's own server (an
//!   agent over MCP/REST), auto-sleep, the liquid loop, and other processes' writes, which
//!   the engine's watcher finds (`Somna::watch_external`, every 500 ms). The UI reloads what
//!   each change touches (see ui/src/main.ts).
//! * The settings dialog can start and stop the loopback HTTP server (MCP + REST) on the
//!   open store; its address and bearer token are shown there.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use serde::Serialize;
use somna_engine::Somna;
use somna_server::{token, Ops, RunningServer};
use std::net::{Ipv4Addr, SocketAddr};
use tauri::{AppHandle, Emitter, Manager};

/// The one event every store change reaches the UI as.
pub const CHANGED: &str = "somna://changed";

/// Forwards changes to the UI as `somna://changed` events. Until the engine announces every
/// write on its own change stream (issue 14, engine side), this polls for other processes'
/// writes every 500 ms on its own thread, for as long as the engine is open, and sends them
/// in the shape of that stream's events; the app's own writes refresh the views where they
/// are made.
pub fn forward_changes(app: &AppHandle, engine: &std::sync::Arc<Somna>) {
    let engine = std::sync::Arc::downgrade(engine);
    let emitter = app.clone();
    std::thread::Builder::new()
        .name("somna-changes".into())
        .spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            let Some(engine) = engine.upgrade() else {
                return;
            };
            let c = match engine.sync_external_changes() {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("somna: catching up with other writers failed: {e}");
                    continue;
                }
            };
            let ids = |ms: &[somna_engine::Memory]| ms.iter().map(|m| m.id).collect::<Vec<_>>();
            for (kind, ids) in [
                ("memories_added", ids(&c.added)),
                ("memories_updated", ids(&c.updated)),
                ("memories_removed", c.removed.clone()),
            ] {
                if !ids.is_empty() {
                    let change = serde_json::json!({"kind": kind, "ids": ids});
                    let event = serde_json::json!({"origin": "external", "change": change});
                    let _ = emitter.emit(CHANGED, event);
                }
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
        *guard = Some(start(&state, &app, req).await?);
    }
    status_of(&guard)
}

/// Serves the current store on 127.0.0.1:`port`.
async fn start(
    state: &AppState,
    state_emitter: &AppHandle,
    port: u16,
) -> ApiResult<(RunningServer, String)> {
    let engine = state.workspace()?.api().engine().clone();
    let db = state.db_path().display().to_string();
    let token =
        token::load_or_create(&token_file()).map_err(|e| ApiError::new("io", e.to_string()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    // Its writes refresh the views (until the engine's change stream announces them).
    let emitter = state_emitter.clone();
    let ops = Ops::new(engine, "http").on_write(std::sync::Arc::new(move || {
        let change = serde_json::json!({"kind": "memories_updated", "ids": []});
        let _ = emitter.emit(
            CHANGED,
            serde_json::json!({"origin": "local", "change": change}),
        );
    }));
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
        *guard = Some(start(&state, app, port).await?);
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
