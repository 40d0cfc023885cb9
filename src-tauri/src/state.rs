//! The app's shared state: the engine slot (the open store) and the running jobs. What runs
//! over an open store (layouts, the liquid loop, auto-sleep) lives in its
//! [`somna_api::Workspace`]; the LLM endpoint in a [`somna_api::LlmEndpoint`].

use crate::error::{ApiError, ApiResult};
use crate::jobs::Jobs;
use somna_api::{LlmEndpoint, Workspace};
use somna_engine::store::Store;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

pub enum Engine {
    /// Loading the model and the index. A plain connection to the store (when it exists)
    /// serves the cached layout meanwhile, so the 3D view appears at once.
    Opening {
        early: Option<Arc<Mutex<Store>>>,
    },
    Ready(Arc<Workspace>),
    Failed(ApiError),
}

/// The open store: where it is and its engine.
pub struct Slot {
    pub db_path: PathBuf,
    pub engine: Engine,
}

pub struct AppState {
    slot: RwLock<Slot>,
    pub jobs: Arc<Jobs>,
    pub model_dir: PathBuf,
    /// Load the demo data without asking when the store is empty (`--demo-if-empty`).
    pub demo_if_empty: bool,
    /// The OpenAI-compatible endpoint sleep cycles may use (from SOMNA_LLM_* or the saved
    /// one; the key is never sent to the UI).
    pub llm: LlmEndpoint,
}

impl AppState {
    pub fn new(db_path: PathBuf, model_dir: PathBuf, demo_if_empty: bool) -> Self {
        let (llm, err) = LlmEndpoint::load(&somna_engine::paths::data_dir());
        if let Some(e) = err {
            eprintln!("somna-app: ignoring the saved LLM endpoint: {e}");
        }
        Self {
            slot: RwLock::new(Slot {
                db_path,
                engine: Engine::Opening { early: None },
            }),
            jobs: Arc::default(),
            model_dir,
            demo_if_empty,
            llm,
        }
    }

    /// The open store's workspace, or why there is none.
    pub fn workspace(&self) -> ApiResult<Arc<Workspace>> {
        match &self.read().engine {
            Engine::Ready(w) => Ok(w.clone()),
            Engine::Opening { .. } => Err(ApiError::not_ready()),
            Engine::Failed(e) => Err(e.clone()),
        }
    }

    /// The connection opened while the engine loads, if any.
    pub fn early_store(&self) -> Option<Arc<Mutex<Store>>> {
        match &self.read().engine {
            Engine::Opening { early } => early.clone(),
            _ => None,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.read().db_path.clone()
    }

    pub fn set_early(&self, store: Store) {
        let mut slot = self.write();
        if let Engine::Opening { early } = &mut slot.engine {
            *early = Some(Arc::new(Mutex::new(store)));
        }
    }

    /// Replaces the open store; the previous workspace (its loops and layouts) goes.
    pub fn set(&self, db_path: PathBuf, engine: Engine) {
        let old = std::mem::replace(&mut *self.write(), Slot { db_path, engine });
        drop(old);
    }

    pub fn set_engine(&self, engine: Engine) {
        let mut slot = self.write();
        slot.engine = engine;
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Slot> {
        self.slot.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Slot> {
        self.slot.write().unwrap_or_else(|p| p.into_inner())
    }
}
