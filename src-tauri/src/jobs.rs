//! Long work (imports, projections, sleep cycles) runs on a thread of its own at the lowest
//! priority (`priority.rs`: the window's webview comes first). Each job gets an id; its progress is emitted as `somna://progress`, its end as
//! `somna://job-done`, and the UI can cancel it by id.

use crate::error::ApiError;
use serde::Serialize;
use somna_engine::{CancelToken, Job, ProgressEvent};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauri::{AppHandle, Emitter};

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ProgressPayload {
    job: u64,
    kind: &'static str,
    stage: &'static str,
    done: u64,
    total: u64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(rename = "JobDone"))]
pub(crate) struct DonePayload {
    job: u64,
    kind: &'static str,
    ok: bool,
    result: Option<serde_json::Value>,
    error: Option<ApiError>,
}

#[derive(Default)]
pub struct Jobs {
    next: AtomicU64,
    running: Mutex<HashMap<u64, CancelToken>>,
}

impl Jobs {
    /// Starts `work` on a background thread and returns its id at once.
    pub fn spawn<T, F>(self: &Arc<Self>, app: &AppHandle, kind: &'static str, work: F) -> u64
    where
        T: Serialize,
        F: FnOnce(&Job) -> Result<T, ApiError> + Send + 'static,
    {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let cancel = CancelToken::new();
        self.lock().insert(id, cancel.clone());
        let emitter = app.clone();
        // Progress is throttled to ~20 events/s so a fast loop cannot flood the webview.
        let last = Mutex::new(Instant::now() - Duration::from_secs(1));
        let progress = move |e: ProgressEvent| {
            let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
            if e.done == e.total || e.done == 0 || last.elapsed() >= Duration::from_millis(50) {
                *last = Instant::now();
                let _ = emitter.emit(
                    "somna://progress",
                    ProgressPayload {
                        job: id,
                        kind,
                        stage: e.stage,
                        done: e.done,
                        total: e.total,
                    },
                );
            }
        };
        let job = Job {
            progress: Arc::new(progress),
            cancel,
        };
        let jobs = self.clone();
        let failed = app.clone();
        let app = app.clone();
        let run = move || {
            let outcome = work(&job).and_then(|v| {
                serde_json::to_value(v).map_err(|e| ApiError::new("json", e.to_string()))
            });
            jobs.lock().remove(&id);
            let payload = match outcome {
                Ok(v) => DonePayload {
                    job: id,
                    kind,
                    ok: true,
                    result: Some(v),
                    error: None,
                },
                Err(e) => DonePayload {
                    job: id,
                    kind,
                    ok: false,
                    result: None,
                    error: Some(e),
                },
            };
            let _ = app.emit("somna://job-done", payload);
        };
        if let Err(e) = crate::priority::spawn_background(format!("somna-job-{kind}-{id}"), run) {
            // No thread could be started (the process is out of them): the job fails at once.
            self.lock().remove(&id);
            let _ = failed.emit(
                "somna://job-done",
                DonePayload {
                    job: id,
                    kind,
                    ok: false,
                    result: None,
                    error: Some(ApiError::internal(format!("could not start the job: {e}"))),
                },
            );
        }
        id
    }

    /// Requests cancellation; false if the job is not running.
    pub fn cancel(&self, id: u64) -> bool {
        match self.lock().get(&id) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancelToken>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}
