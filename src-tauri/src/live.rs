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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tauri::{AppHandle, Emitter, Manager, State};

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
            let Ok(engine) = app.state::<AppState>().engine() else {
                continue;
            };
            if app
                .state::<ServerSlot>()
                .dirty
                .swap(false, Ordering::Relaxed)
            {
                let _ = app.emit("somna://memories-changed", ());
            }
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

/// The app's server, if running, and whether it wrote since the poller's last tick.
#[derive(Default)]
pub struct ServerSlot {
    server: tokio::sync::Mutex<Option<(RunningServer, String)>>,
    dirty: Arc<AtomicBool>,
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
pub async fn server_status(slot: State<'_, ServerSlot>) -> ApiResult<ServerStatus> {
    let guard = slot.server.lock().await;
    status_of(&guard)
}

#[tauri::command]
pub async fn server_start(
    state: State<'_, AppState>,
    slot: State<'_, ServerSlot>,
    port: u16,
) -> ApiResult<ServerStatus> {
    let mut guard = slot.server.lock().await;
    if guard.is_none() {
        *guard = Some(start(&state, &slot, port).await?);
    }
    status_of(&guard)
}

/// Serves the current store on 127.0.0.1:`port`.
async fn start(
    state: &AppState,
    slot: &ServerSlot,
    port: u16,
) -> ApiResult<(RunningServer, String)> {
    let engine = state.engine()?;
    let db = state.db_path().display().to_string();
    let token =
        token::load_or_create(&token_file()).map_err(|e| ApiError::new("io", e.to_string()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    // Writes through this server come from this process, which the engine's sync does
    // not report (it reports other processes' writes).
    // They set a flag the poller turns into one refresh per tick, however many arrive.
    let dirty = slot.dirty.clone();
    let ops = Ops::new(Arc::clone(&engine), "http")
        .on_write(Arc::new(move || dirty.store(true, Ordering::Relaxed)));
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
        *guard = Some(start(&state, &slot, port).await?);
        Ok(())
    })
}

#[tauri::command]
pub async fn server_stop(slot: State<'_, ServerSlot>) -> ApiResult<ServerStatus> {
    let mut guard = slot.server.lock().await;
    if let Some((server, _)) = guard.take() {
        server
            .stop()
            .await
            .map_err(|e| ApiError::new("io", e.to_string()))?;
    }
    status_of(&guard)
}
