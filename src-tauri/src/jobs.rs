//! Long work (imports, projections, sleep cycles) runs on a thread of its own at the lowest
//! priority (`priority.rs`: the window's webview comes first). Each job gets an id; its
//! progress is emitted as `somna://progress`, its end as `somna://job-done`, and the UI can cancel it by id.
//!
//! Every kind of job is a type of [`kinds`] naming the type of its result: a command that
//! starts one answers with a [`JobId`] of that kind, so the UI's `waitJob` knows the result's
//! type from the command it called (`JobResults` in ui/src/bindings.ts).

use crate::error::ApiError;
use crate::rpc::{emit, events};
use serde::Serialize;
use somna_engine::{CancelToken, Job, ProgressEvent};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauri::AppHandle;

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

/// A kind of job: its name (in progress and job-done events) and the type of its result.
pub trait JobKind: 'static {
    const NAME: &'static str;
    type Output: Serialize;
}

/// Declares the kinds of job (`Type "name" => Result, …`) and their TypeScript map.
macro_rules! job_kinds {
    ($($k:ident $name:literal => $out:ty),* $(,)?) => {
        /// The kinds of job.
        pub mod kinds {
            $(
                pub struct $k;
                impl super::JobKind for $k {
                    const NAME: &'static str = $name;
                    type Output = $out;
                }
            )*
        }

        /// `JobId` and `JobResults` (kind → result type) in TypeScript.
        #[cfg(test)]
        pub(crate) fn job_results_ts(cfg: &ts_rs::Config) -> String {
            use ts_rs::TS;
            let mut out = String::from(
                "/** A job's id, marked with its kind. */\n\
                 export type JobId<K extends keyof JobResults> = number & { readonly __job?: K };\n\n\
                 /** Every kind of job: the type of its result. */\nexport type JobResults = {\n",
            );
            $( out.push_str(&format!("  \"{}\": {};\n", $name, <$out as TS>::name(cfg))); )*
            out.push_str("};\n");
            out
        }
    };
}

job_kinds! {
    Import "import" => somna_api::ImportDone,
    Layout "layout" => somna_api::LayoutSummary,
    Cluster "cluster" => somna_engine::ClusterReport,
    Sleep "sleep" => somna_engine::SleepReport,
    SleepUndo "sleep-undo" => somna_engine::SleepReport,
    Open "open" => String,
    Golden "golden" => somna_engine::golden::GoldenRun,
}

/// The id of a job of kind `K` (a number on the wire).
pub struct JobId<K>(u64, PhantomData<K>);

impl<K> Serialize for JobId<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

#[cfg(test)]
impl<K: JobKind> ts_rs::TS for JobId<K> {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(_: &ts_rs::Config) -> String {
        format!("JobId<\"{}\">", K::NAME)
    }

    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

#[derive(Default)]
pub struct Jobs {
    next: AtomicU64,
    running: Mutex<HashMap<u64, CancelToken>>,
}

impl Jobs {
    /// Starts `work`, a job of kind `K`, on a background thread and returns its id at once.
    pub fn spawn<K, F>(self: &Arc<Self>, app: &AppHandle, work: F) -> JobId<K>
    where
        K: JobKind,
        F: FnOnce(&Job) -> Result<K::Output, ApiError> + Send + 'static,
    {
        let kind = K::NAME;
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
                emit::<events::Progress>(
                    &emitter,
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
            emit::<events::JobDone>(&app, payload);
        };
        if let Err(e) = crate::priority::spawn_background(format!("somna-job-{kind}-{id}"), run) {
            // No thread could be started (the process is out of them): the job fails at once.
            self.lock().remove(&id);
            emit::<events::JobDone>(
                &failed,
                DonePayload {
                    job: id,
                    kind,
                    ok: false,
                    result: None,
                    error: Some(ApiError::internal(format!("could not start the job: {e}"))),
                },
            );
        }
        JobId(id, PhantomData)
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
