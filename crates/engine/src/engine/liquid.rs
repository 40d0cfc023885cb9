//! The liquid clustering loop as a background thread over the façade (each step is
//! `Somna::liquid_step`; the step itself is in `crate::cluster::liquid`).

use super::Somna;
use crate::cluster::{LiquidEvent, LiquidParams};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

enum Signal {
    Start,
    Pause,
    Step,
    SetParams(LiquidParams),
    Stop,
}

/// The liquid loop as a background thread: started, paused, single-stepped and re-tuned
/// through a channel; every step is reported through the callback. Steps never hold the
/// store lock across their heavy part, so ingestion and search continue meanwhile.
pub struct LiquidLoop {
    signals: Sender<Signal>,
    running: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl LiquidLoop {
    /// Spawns the loop, paused.
    pub fn spawn(
        engine: Arc<Somna>,
        params: LiquidParams,
        on_event: impl Fn(LiquidEvent) + Send + 'static,
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        let running = Arc::new(AtomicBool::new(false));
        let flag = running.clone();
        let handle = std::thread::Builder::new()
            .name("somna-liquid".into())
            .spawn(move || {
                let mut params = params;
                let step = |params: &LiquidParams| match engine.liquid_step(params) {
                    Ok(s) => on_event(LiquidEvent::Step(s)),
                    Err(e) => on_event(LiquidEvent::Error {
                        code: e.code().into(),
                        message: e.to_string(),
                    }),
                };
                loop {
                    let signal = if flag.load(Ordering::Relaxed) {
                        match rx.recv_timeout(Duration::from_millis(params.interval_ms)) {
                            Ok(s) => Some(s),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => Some(Signal::Stop),
                        }
                    } else {
                        Some(rx.recv().unwrap_or(Signal::Stop))
                    };
                    match signal {
                        None => step(&params),
                        Some(Signal::Start) => {
                            flag.store(true, Ordering::Relaxed);
                            on_event(LiquidEvent::State { running: true });
                            step(&params);
                        }
                        Some(Signal::Pause) => {
                            flag.store(false, Ordering::Relaxed);
                            on_event(LiquidEvent::State { running: false });
                        }
                        Some(Signal::Step) => step(&params),
                        Some(Signal::SetParams(p)) => params = p,
                        Some(Signal::Stop) => break,
                    }
                }
                flag.store(false, Ordering::Relaxed);
            })
            .expect("spawn the liquid loop thread");
        Self {
            signals: tx,
            running,
            handle: Some(handle),
        }
    }

    pub fn start(&self) {
        let _ = self.signals.send(Signal::Start);
    }

    pub fn pause(&self) {
        let _ = self.signals.send(Signal::Pause);
    }

    /// One step now (whether running or paused).
    pub fn step(&self) {
        let _ = self.signals.send(Signal::Step);
    }

    pub fn set_params(&self, params: LiquidParams) {
        let _ = self.signals.send(Signal::SetParams(params));
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }

    /// Stops the thread after the step in progress, if any.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let _ = self.signals.send(Signal::Stop);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for LiquidLoop {
    fn drop(&mut self) {
        self.shutdown();
    }
}
