//! The engine's own progress and change events. Front ends (CLI progress bars, the app's
//! `emit`) subscribe through a [`Progress`] sink; the engine never knows who listens.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One step of long work: `done` of `total` units of `stage`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProgressEvent {
    pub stage: &'static str,
    pub done: u64,
    pub total: u64,
}

/// Receives progress events; implementations must be cheap and non-blocking.
pub trait Progress: Send + Sync {
    fn report(&self, event: ProgressEvent);
}

/// A sink that drops every event.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _event: ProgressEvent) {}
}

impl<F: Fn(ProgressEvent) + Send + Sync> Progress for F {
    fn report(&self, event: ProgressEvent) {
        self(event)
    }
}

/// Cooperative cancellation shared between the caller and long-running work.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once cancellation was requested; call it between units of work.
    pub fn check(&self) -> crate::Result<()> {
        if self.is_cancelled() {
            Err(crate::Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Progress sink plus cancellation: what every long operation takes.
#[derive(Clone)]
pub struct Job {
    pub progress: Arc<dyn Progress>,
    pub cancel: CancelToken,
}

impl Default for Job {
    fn default() -> Self {
        Self {
            progress: Arc::new(NoProgress),
            cancel: CancelToken::new(),
        }
    }
}

impl Job {
    pub fn report(&self, stage: &'static str, done: u64, total: u64) {
        self.progress.report(ProgressEvent { stage, done, total });
    }
}
