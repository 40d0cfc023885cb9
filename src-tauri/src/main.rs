//! Somna's desktop app: a Tauri 2 shell whose commands are thin adapters over the engine.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[cfg(test)]
mod bindings;
mod commands;
mod error;
mod jobs;
mod live;
mod points;
mod state;
mod views;

use state::{AppState, EngineSlot};
use std::sync::Arc;
use tauri::{Emitter, Manager};

fn main() {
    somna_engine::embed::pin_thread_count();
    let db_path = std::env::var_os("SOMNA_DB")
        .map(Into::into)
        .unwrap_or_else(somna_engine::paths::default_db);
    let model_dir = somna_engine::paths::model_dir();
    // `--demo-if-empty` (used by scripts/setup.sh): load the bundled demo into an empty store
    // without asking.
    let demo_if_empty = std::env::args().any(|a| a == "--demo-if-empty");
    let mut app_state = AppState::new(db_path, model_dir);
    app_state.demo_if_empty = demo_if_empty;
    tauri::Builder::default()
        .manage(app_state)
        .manage(live::ServerSlot::default())
        .setup(|app| {
            let handle = app.handle().clone();
            open_early(&handle);
            // Opening loads the model and verifies (or rebuilds) the index: off the main
            // thread, so the window appears at once and shows progress.
            tauri::async_runtime::spawn_blocking(move || open_engine(&handle));
            live::start_poller(app.handle().clone());
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::status,
            commands::stats,
            commands::list_memories,
            commands::search,
            commands::get_memory,
            commands::memory_history,
            commands::update_memory,
            commands::delete_memory,
            commands::restore_memory,
            commands::import_text,
            commands::load_demo,
            commands::export_store,
            commands::cancel_job,
            commands::point_attributes,
            commands::neighbourhood,
            commands::similar,
            commands::actors,
            commands::open_store,
            commands::memory_sleep_history,
            views::compute_layout,
            views::layout_data,
            views::cluster_run,
            views::clusters,
            views::cluster_merges,
            views::liquid_defaults,
            views::liquid_status,
            views::liquid_start,
            views::liquid_pause,
            views::liquid_step,
            views::liquid_set_params,
            views::sleep_config,
            views::llm_settings,
            views::set_llm_settings,
            views::sleep_run,
            views::sleep_history,
            views::sleep_undo,
            views::auto_sleep_settings,
            views::set_auto_sleep,
            live::server_status,
            live::server_start,
            live::server_stop,
        ])
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
            *state.early.lock().unwrap_or_else(|p| p.into_inner()) = Some(store);
        }
    }
}

fn open_engine(app: &tauri::AppHandle) {
    let state = app.state::<AppState>();
    let db_path = state.db_path();
    if let Some(dir) = db_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let config = somna_engine::Config::new(&db_path, &state.model_dir);
    let emitter = app.clone();
    let job = somna_engine::Job {
        progress: Arc::new(move |e: somna_engine::ProgressEvent| {
            let _ = emitter.emit("somna://opening", e);
        }),
        cancel: Default::default(),
    };
    match somna_engine::Somna::open(&config, &job) {
        Ok(engine) => {
            state.set(EngineSlot::Ready(Arc::new(engine)));
            let _ = app.emit("somna://ready", ());
        }
        Err(e) => {
            let err = error::ApiError::from(e);
            state.set(EngineSlot::Failed(err.clone()));
            let _ = app.emit("somna://open-failed", err);
        }
    }
}
