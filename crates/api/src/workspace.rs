//! One open store and what runs over it while a long-lived front end (the app) keeps it
//! open: the engine's watcher of other processes' writes (they arrive on the engine's
//! change stream), the layouts computed this session, the liquid clustering loop, and
//! auto-sleep while its stored setting is enabled. Dropping the workspace stops them all.

use crate::views::{check_dims, LayoutCoords};
use crate::{Api, LayoutAsOf, LayoutKey, LayoutRequest, LayoutSummary};
use serde::Serialize;
use somna_engine::sleep::auto::{AutoSleep, AutoSleepSettings};
use somna_engine::{
    Job, Layout, LiquidEvent, LiquidLoop, LiquidParams, ProjectionMethod, ProjectionParams, Result,
    Somna,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How often the workspace looks for other processes' writes to its store.
pub const WATCH_EXTERNAL: Duration = Duration::from_millis(500);

/// Receives the liquid loop's steps, state changes and errors.
pub type LiquidSink = Arc<dyn Fn(LiquidEvent) + Send + Sync>;

/// The liquid loop and the parameters it runs with.
struct Liquid {
    handle: LiquidLoop,
    params: LiquidParams,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiquidStatus {
    pub running: bool,
    pub params: LiquidParams,
}

pub struct Workspace {
    api: Api,
    layouts: Mutex<HashMap<(ProjectionMethod, usize), Arc<Layout>>>,
    liquid: Mutex<Option<Liquid>>,
    on_liquid: LiquidSink,
    auto_sleep: Mutex<Option<AutoSleep>>,
    /// Other processes' writes, found every [`WATCH_EXTERNAL`], go onto the engine's
    /// change stream; dropping the workspace stops the watcher.
    _watch: somna_engine::ExternalWatch,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The ingest policies every front end applies: `file` if given, else
/// `<data dir>/policies.toml` if it exists, else the defaults.
pub fn load_policies(
    file: Option<&Path>,
    data_dir: &Path,
) -> Result<somna_engine::ingest::Policies> {
    match file {
        Some(f) => somna_engine::ingest::Policies::load(f),
        None => somna_engine::ingest::Policies::load_from_dir(data_dir),
    }
}

impl Workspace {
    /// Takes over an open engine: applies the ingest policies of `data_dir`, starts the
    /// watcher of other processes' writes, and starts auto-sleep if the store's setting
    /// enables it. Problems with the policies or auto-sleep are returned beside the
    /// workspace (it works without them).
    pub fn open(
        engine: Arc<Somna>,
        actor: &str,
        data_dir: &Path,
        on_liquid: LiquidSink,
    ) -> (Self, Vec<String>) {
        let mut problems = Vec::new();
        match load_policies(None, data_dir) {
            Ok(p) => engine.set_policies(p),
            Err(e) => problems.push(format!("ingest policies not applied: {e}")),
        }
        let watch = engine.watch_external(WATCH_EXTERNAL);
        if let Err(e) = engine.warm_search() {
            problems.push(format!("lexical index not read into memory: {e}"));
        }
        let ws = Self {
            api: Api::new(engine, actor),
            layouts: Mutex::default(),
            liquid: Mutex::new(None),
            on_liquid,
            auto_sleep: Mutex::new(None),
            _watch: watch,
        };
        if let Err(e) = ws.restart_auto_sleep() {
            problems.push(format!("auto-sleep not started: {e}"));
        }
        (ws, problems)
    }

    pub fn api(&self) -> &Api {
        &self.api
    }

    /// Computes (or incrementally extends) a layout and keeps it for [`Workspace::layout`].
    pub fn compute_layout(&self, req: &LayoutRequest, job: &Job) -> Result<LayoutSummary> {
        check_dims(req.dims)?;
        let engine = self.api.engine();
        let layout = if req.full {
            let params = engine
                .layout_params(req.method, req.dims)?
                .unwrap_or_else(|| ProjectionParams::new(req.method, req.dims));
            engine.project(&params, job)?
        } else {
            engine.layout(req.method, req.dims, job)?
        };
        let summary = LayoutSummary {
            method: req.method,
            dims: req.dims,
            points: layout.ids.len(),
            placed_incrementally: layout.placed_incrementally,
            computed_at: layout.computed_at,
        };
        lock(&self.layouts).insert((req.method, req.dims), Arc::new(layout));
        Ok(summary)
    }

    /// The layout computed this session, else the one saved in the store.
    pub fn layout(&self, key: LayoutKey) -> Result<Option<LayoutCoords>> {
        if let Some(l) = lock(&self.layouts).get(&(key.method, key.dims)) {
            return Ok(Some(LayoutCoords {
                ids: l.ids.clone(),
                dims: l.dims,
                coords: l.coords.clone(),
            }));
        }
        self.api.stored_layout(key)
    }

    /// The layout of `req` as it was at `req.at`: today's points where the full computation
    /// in force then placed them (see [`crate::positions_then`]); today's layout when no
    /// computation is kept.
    pub fn layout_as_of(&self, req: LayoutAsOf) -> Result<Option<LayoutCoords>> {
        let Some(current) = self.layout(req.key())? else {
            return Ok(None);
        };
        Ok(Some(match self.api.layout_snapshot_at(req)? {
            Some(then) => crate::positions_then(&current, &then),
            None => current,
        }))
    }

    pub fn liquid_status(&self) -> LiquidStatus {
        let liquid = lock(&self.liquid);
        LiquidStatus {
            running: liquid.as_ref().is_some_and(|l| l.handle.is_running()),
            params: liquid
                .as_ref()
                .map(|l| l.params.clone())
                .unwrap_or_default(),
        }
    }

    /// Runs `f` on the liquid loop (spawned paused on first use), after applying `params`.
    fn with_liquid<T>(&self, params: Option<LiquidParams>, f: impl FnOnce(&LiquidLoop) -> T) -> T {
        let mut slot = lock(&self.liquid);
        let liquid = slot.get_or_insert_with(|| {
            let sink = self.on_liquid.clone();
            let initial = params.clone().unwrap_or_default();
            Liquid {
                handle: LiquidLoop::spawn(self.api.engine().clone(), initial.clone(), move |e| {
                    sink(e)
                }),
                params: initial,
            }
        });
        if let Some(p) = params {
            liquid.params = p.clone();
            liquid.handle.set_params(p);
        }
        f(&liquid.handle)
    }

    pub fn liquid_start(&self, params: Option<LiquidParams>) {
        self.with_liquid(params, LiquidLoop::start)
    }

    pub fn liquid_pause(&self) {
        self.with_liquid(None, LiquidLoop::pause)
    }

    pub fn liquid_step(&self, params: Option<LiquidParams>) {
        self.with_liquid(params, LiquidLoop::step)
    }

    pub fn liquid_set_params(&self, params: LiquidParams) {
        self.with_liquid(Some(params), |_| ())
    }

    /// Saves the auto-sleep setting and starts or stops auto-sleep to match.
    pub fn set_auto_sleep(&self, settings: &AutoSleepSettings) -> Result<()> {
        self.api.set_auto_sleep_settings(settings)?;
        self.restart_auto_sleep()
    }

    /// Saves a change of settings; a running auto-sleep restarts with the new knobs.
    pub fn apply_settings(
        &self,
        patch: &somna_engine::SettingsPatch,
    ) -> Result<somna_engine::SettingsChange> {
        let change = self.api.apply_settings(patch)?;
        self.restart_auto_sleep()?;
        Ok(change)
    }

    /// Undoes an application of settings; a running auto-sleep restarts with the old knobs.
    pub fn undo_settings(&self, id: i64) -> Result<somna_engine::SettingsChange> {
        let change = self.api.settings_undo(id)?;
        self.restart_auto_sleep()?;
        Ok(change)
    }

    /// Stops auto-sleep, then starts it again if the stored setting enables it.
    fn restart_auto_sleep(&self) -> Result<()> {
        let mut slot = lock(&self.auto_sleep);
        slot.take();
        *slot = AutoSleep::from_settings(self.api.engine().clone())?;
        Ok(())
    }
}
