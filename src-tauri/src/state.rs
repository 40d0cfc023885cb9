//! The app's shared state: the engine (opened in the background at start-up) and jobs.

use crate::error::{ApiError, ApiResult};
use crate::jobs::Jobs;
use somna_engine::{Layout, LiquidLoop, LiquidParams, ProjectionMethod, Somna};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

/// The liquid clustering loop of the open store and the parameters it runs with.
pub struct Liquid {
    pub handle: LiquidLoop,
    pub params: LiquidParams,
}

pub enum EngineSlot {
    Opening,
    Ready(Arc<Somna>),
    Failed(ApiError),
}

pub struct AppState {
    pub engine: RwLock<EngineSlot>,
    pub jobs: Arc<Jobs>,
    pub db_path: RwLock<PathBuf>,
    pub model_dir: PathBuf,
    /// Load the demo data without asking when the store is empty.
    pub demo_if_empty: bool,
    pub liquid: Mutex<Option<Liquid>>,
    /// A plain connection to the store while the engine opens (loading the model and the
    /// index takes seconds): it serves the cached layout so the 3D view appears at once.
    pub early: Mutex<Option<somna_engine::store::Store>>,
    /// The OpenAI-compatible endpoint sleep cycles may use (from SOMNA_LLM_* at start, or
    /// set in Settings for this session; the key is never sent back to the UI).
    pub llm: Mutex<Option<somna_engine::sleep::chat::ChatConfig>>,
    layouts: Mutex<HashMap<(ProjectionMethod, usize), Arc<Layout>>>,
    /// Auto-sleep of the open store, running while its stored setting is enabled.
    auto_sleep: Mutex<Option<somna_engine::sleep::auto::AutoSleep>>,
}

impl AppState {
    pub fn new(db_path: PathBuf, model_dir: PathBuf) -> Self {
        Self {
            engine: RwLock::new(EngineSlot::Opening),
            jobs: Arc::default(),
            db_path: RwLock::new(db_path),
            model_dir,
            demo_if_empty: false,
            liquid: Mutex::new(None),
            early: Mutex::new(None),
            llm: Mutex::new(saved_llm()),
            layouts: Mutex::default(),
            auto_sleep: Mutex::new(None),
        }
    }

    /// The open engine, or why there is none.
    pub fn engine(&self) -> ApiResult<Arc<Somna>> {
        match &*self.engine.read().unwrap_or_else(|p| p.into_inner()) {
            EngineSlot::Ready(e) => Ok(e.clone()),
            EngineSlot::Opening => Err(ApiError::not_ready()),
            EngineSlot::Failed(e) => Err(e.clone()),
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.db_path
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the engine; the liquid loop and layouts of the previous store go with it.
    pub fn set(&self, slot: EngineSlot) {
        self.early.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.liquid.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.layouts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let engine = match &slot {
            EngineSlot::Ready(e) => Some(e.clone()),
            _ => None,
        };
        if let Some(e) = &engine {
            // The same ingest policies as the CLI: <data dir>/policies.toml or the defaults.
            match somna_engine::ingest::Policies::load_from_dir(&somna_engine::paths::data_dir()) {
                Ok(p) => e.set_policies(p),
                Err(err) => eprintln!("ingest policies not applied: {err}"),
            }
        }
        *self.engine.write().unwrap_or_else(|p| p.into_inner()) = slot;
        if let Err(e) = self.restart_auto_sleep(engine) {
            eprintln!("auto-sleep not started: {e}");
        }
    }

    /// Stops auto-sleep, then starts it again on `engine` if its stored setting is enabled.
    pub fn restart_auto_sleep(&self, engine: Option<Arc<Somna>>) -> somna_engine::Result<()> {
        let mut slot = self.auto_sleep.lock().unwrap_or_else(|p| p.into_inner());
        slot.take();
        if let Some(e) = engine {
            *slot = somna_engine::sleep::auto::AutoSleep::from_settings(e)?;
        }
        Ok(())
    }

    pub fn put_layout(&self, method: ProjectionMethod, dims: usize, layout: Arc<Layout>) {
        self.layouts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((method, dims), layout);
    }

    pub fn layout(&self, method: ProjectionMethod, dims: usize) -> Option<Arc<Layout>> {
        self.layouts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(method, dims))
            .cloned()
    }
}

/// The LLM endpoint from the environment or the one saved in the data directory. A saved
/// file that cannot be read is reported and ignored (the settings dialog can replace it).
fn saved_llm() -> Option<somna_engine::sleep::chat::ChatConfig> {
    let dir = somna_engine::paths::data_dir();
    somna_engine::sleep::endpoint::configured(&dir).unwrap_or_else(|e| {
        eprintln!("somna-app: ignoring the saved LLM endpoint: {e}");
        None
    })
}
