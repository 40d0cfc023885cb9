//! Auto-sleep: a background thread that starts a cycle once enough new episodes wait for
//! consolidation. It polls a count, so `add` is never blocked or slowed by it; a cycle
//! holds the store lock only to read its snapshot and to commit each phase.

use super::{SleepOptions, SleepReport};
use crate::events::{CancelToken, Job};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The store's auto-sleep setting (kept in its `meta` table, so it survives restarts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct AutoSleepSettings {
    pub enabled: bool,
    /// A cycle starts once this many new episodes wait for consolidation.
    pub every: usize,
    /// How often the waiting count is checked (seconds).
    pub poll_secs: f64,
}

impl Default for AutoSleepSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            every: 200,
            poll_secs: 5.0,
        }
    }
}

impl AutoSleepSettings {
    pub fn poll(&self) -> Duration {
        Duration::from_secs_f64(self.poll_secs)
    }
}

/// The `meta` key the setting is saved under.
pub(crate) const SETTINGS_KEY: &str = "auto_sleep";

/// What the auto-sleep thread needs of an engine (the façade, `Somna`, implements it).
pub trait SleepHost: Send + Sync + 'static {
    /// Episodes waiting for consolidation.
    fn waiting_episodes(&self) -> crate::Result<usize>;
    /// Runs one cycle.
    fn run_cycle(&self, opts: &SleepOptions, job: &Job) -> crate::Result<SleepReport>;
    /// The store's saved setting.
    fn saved_settings(&self) -> crate::Result<AutoSleepSettings>;
    /// The knobs a cycle runs with (the store's saved settings).
    fn saved_config(&self) -> crate::Result<super::SleepConfig> {
        Ok(super::SleepConfig::default())
    }
}

/// Runs until dropped (or [`AutoSleep::stop`]); the reports of the cycles it ran are kept.
pub struct AutoSleep {
    cancel: CancelToken,
    handle: Option<JoinHandle<()>>,
    reports: Arc<Mutex<Vec<crate::Result<SleepReport>>>>,
}

impl AutoSleep {
    /// Starts a cycle (trigger "auto") whenever `every` more episodes wait than after the
    /// previous cycle; checks every `poll`.
    pub fn spawn<H: SleepHost>(
        engine: Arc<H>,
        every: usize,
        poll: Duration,
        opts: SleepOptions,
    ) -> Self {
        let cancel = CancelToken::new();
        let reports = Arc::new(Mutex::new(Vec::new()));
        let (token, log) = (cancel.clone(), reports.clone());
        let handle = std::thread::spawn(move || {
            let mut baseline = 0usize;
            let opts = SleepOptions {
                trigger: "auto".into(),
                ..opts
            };
            while !token.is_cancelled() {
                let waiting = engine.waiting_episodes().unwrap_or(0);
                if waiting >= baseline + every.max(1) {
                    let job = Job {
                        cancel: token.clone(),
                        ..Job::default()
                    };
                    let r = engine.run_cycle(&opts, &job);
                    baseline = engine.waiting_episodes().unwrap_or(0);
                    log.lock().unwrap_or_else(|p| p.into_inner()).push(r);
                }
                std::thread::sleep(poll);
            }
        });
        Self {
            cancel,
            handle: Some(handle),
            reports,
        }
    }

    /// Starts with the store's saved setting when it is enabled (`None` otherwise).
    pub fn from_settings<H: SleepHost>(engine: Arc<H>) -> crate::Result<Option<Self>> {
        let s = engine.saved_settings()?;
        if !s.enabled {
            return Ok(None);
        }
        let opts = SleepOptions {
            config: engine.saved_config()?,
            ..SleepOptions::default()
        };
        Ok(Some(Self::spawn(engine, s.every, s.poll(), opts)))
    }

    /// How many cycles it has run.
    pub fn cycles(&self) -> usize {
        self.reports.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// What the cycles it ran returned, oldest first.
    pub fn reports(&self) -> Vec<crate::Result<SleepReport>> {
        let r = self.reports.lock().unwrap_or_else(|p| p.into_inner());
        r.iter()
            .map(|x| match x {
                Ok(r) => Ok(r.clone()),
                Err(e) => Err(crate::Error::InvalidInput(e.to_string())),
            })
            .collect()
    }

    /// Cancels a running cycle (before its current phase commits) and waits for the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.cancel.cancel();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for AutoSleep {
    fn drop(&mut self) {
        self.shutdown();
    }
}
