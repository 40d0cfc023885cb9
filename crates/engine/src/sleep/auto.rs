//! Auto-sleep: a background thread that starts a cycle once enough new episodes wait for
//! consolidation. It polls a count, so `add` is never blocked or slowed by it; a cycle
//! holds the store lock only to read its snapshot and to commit each phase.

use super::{SleepOptions, SleepReport};
use crate::events::{CancelToken, Job};
use crate::Somna;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Runs until dropped (or [`AutoSleep::stop`]); the reports of the cycles it ran are kept.
pub struct AutoSleep {
    cancel: CancelToken,
    handle: Option<JoinHandle<()>>,
    reports: Arc<Mutex<Vec<crate::Result<SleepReport>>>>,
}

impl AutoSleep {
    /// Starts a cycle (trigger "auto") whenever `every` more episodes wait than after the
    /// previous cycle; checks every `poll`.
    pub fn spawn(engine: Arc<Somna>, every: usize, poll: Duration, opts: SleepOptions) -> Self {
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
                let waiting = engine
                    .with_store(|s| s.read().unconsolidated_episodes())
                    .unwrap_or(0);
                if waiting >= baseline + every.max(1) {
                    let job = Job {
                        cancel: token.clone(),
                        ..Job::default()
                    };
                    let r = engine.sleep(&opts, &job);
                    baseline = engine
                        .with_store(|s| s.read().unconsolidated_episodes())
                        .unwrap_or(0);
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
