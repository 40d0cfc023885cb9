//! Somna's desktop app: a Tauri 2 shell whose commands are thin adapters over the operations
//! layer (`somna-api`). Every command that touches the engine runs off the main thread.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[macro_use]
mod rpc;
#[cfg(test)]
mod bindings;
mod commands;
mod error;
mod jobs;
mod live;
mod panels;
mod points;
mod priority;
mod state;
mod views;
mod webview_env;

/// mimalloc keeps freed pages for reuse; glibc's malloc returned the embedding's per-layer
/// buffers to the kernel and faulted them in again on every product (batch embedding
/// 232–324 sentences/s with it, 315–324 with mimalloc, in one interleaved run).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use state::{AppState, Engine};
use std::sync::Arc;
use tauri::Manager;

fn main() {
    if webview_env::cpu_compositing_without_gpu() {
        eprintln!(
            "somna: no GPU render node in /dev/dri: the webview composites on the CPU \
             (WEBKIT_DISABLE_COMPOSITING_MODE=1; {}=1 keeps WebKit's default)",
            webview_env::KEEP
        );
    }
    somna_engine::embed::pin_thread_count();
    priority::background_global_pool();
    let db_path = std::env::var_os("SOMNA_DB")
        .map(Into::into)
        .unwrap_or_else(somna_engine::paths::default_db);
    let model_dir = somna_engine::paths::model_dir();
    // `--demo-if-empty` (used by scripts/setup.sh; SOMNA_DEMO_IF_EMPTY=1 for launchers that
    // pass no arguments, such as WebDriver): load the bundled demo into an empty store
    // without asking.
    let demo_if_empty = std::env::args().any(|a| a == "--demo-if-empty")
        || std::env::var_os("SOMNA_DEMO_IF_EMPTY").is_some_and(|v| v == "1");
    tauri::Builder::default()
        .manage(AppState::new(db_path, model_dir, demo_if_empty))
        .manage(live::ServerSlot::default())
        .setup(|app| {
            let handle = app.handle().clone();
            open_early(&handle);
            // Opening loads the model and verifies (or rebuilds) the index: off the main
            // thread, so the window appears at once and shows progress.
            tauri::async_runtime::spawn_blocking(move || open_engine(&handle));
            Ok(())
        })
        .invoke_handler(rpc_table!(rpc_handler))
        .run(tauri::generate_context!("../tauri.conf.json"))
        .expect("error while running Somna");
}

/// Opens a plain store connection (fast) so cached point data can be served while the
/// engine loads. Failure is not an error here: the engine's open reports it.
fn open_early(app: &tauri::AppHandle) {
    let state = app.state::<AppState>();
    let db_path = state.db_path();
    if db_path.exists() {
        if let Ok(store) = somna_engine::store::Store::open(&db_path) {
            state.set_early(store);
        }
    }
}

fn open_engine(app: &tauri::AppHandle) {
    let state = app.state::<AppState>();
    let db_path = state.db_path();
    let config = somna_engine::Config::new(&db_path, &state.model_dir);
    let emitter = app.clone();
    let job = somna_engine::Job {
        progress: Arc::new(move |e: somna_engine::ProgressEvent| {
            rpc::emit::<rpc::events::Opening>(&emitter, e);
        }),
        cancel: Default::default(),
    };
    match somna_engine::Somna::open(&config, &job) {
        Ok(engine) => {
            state.set_engine(Engine::Ready(workspace(app, engine)));
            rpc::emit::<rpc::events::Ready>(app, ());
        }
        Err(e) => {
            let err = error::ApiError::from(e);
            state.set_engine(Engine::Failed(err.clone()));
            rpc::emit::<rpc::events::OpenFailed>(app, err);
        }
    }
}

/// The workspace over a newly opened engine: its changes go to the UI as one event
/// (live.rs); the liquid loop's steps as `somna://liquid-step`, `somna://liquid-state` and
/// `somna://liquid-error`.
pub fn workspace(app: &tauri::AppHandle, engine: somna_engine::Somna) -> Arc<somna_api::Workspace> {
    live::forward_changes(app, &engine);
    let emitter = app.clone();
    let on_liquid = Arc::new(move |event: somna_engine::LiquidEvent| {
        use rpc::{emit, events};
        match event {
            somna_engine::LiquidEvent::Step(step) => emit::<events::LiquidStep>(&emitter, step),
            somna_engine::LiquidEvent::State { running } => {
                emit::<events::LiquidState>(&emitter, rpc::LiquidState { running })
            }
            somna_engine::LiquidEvent::Error { code, message } => {
                emit::<events::LiquidError>(&emitter, error::ApiError::new(&code, message))
            }
        }
    });
    let (ws, problems) = somna_api::Workspace::open(
        Arc::new(engine),
        "app",
        &somna_engine::paths::data_dir(),
        on_liquid,
    );
    for p in problems {
        eprintln!("somna-app: {p}");
    }
    Arc::new(ws)
}
