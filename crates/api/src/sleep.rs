//! Sleep cycles: which compression backend runs (the one rule for every front end), running
//! a cycle, undoing one, the history, and the auto-sleep setting.

use crate::limits::SLEEP_HISTORY;
use crate::Api;
use serde::{Deserialize, Serialize};
use somna_engine::sleep::auto::{AutoSleep, AutoSleepSettings};
use somna_engine::sleep::chat::{ChatCompressor, ChatConfig};
use somna_engine::{Error, Job, Result, Review, SleepConfig, SleepOptions, SleepReport};

/// How a cycle writes summaries and schemas.
#[derive(Debug, Clone, PartialEq)]
pub enum Backend {
    /// Offline, deterministic (the default).
    Extractive,
    /// An OpenAI-compatible chat endpoint; a batch it fails on falls back to extractive.
    Chat(ChatConfig),
}

impl Backend {
    /// The backend named `name` ("extractive", the default, or "chat"). The chat backend
    /// uses the configured endpoint (`endpoint` is asked only then; see
    /// [`crate::llm::configured`]); without one it is refused.
    pub fn choose(
        name: Option<&str>,
        endpoint: impl FnOnce() -> Result<Option<ChatConfig>>,
    ) -> Result<Backend> {
        match name.unwrap_or("extractive") {
            "extractive" => Ok(Backend::Extractive),
            "chat" => endpoint()?.map(Backend::Chat).ok_or_else(|| {
                Error::InvalidInput(
                    "the chat backend needs an LLM endpoint: set one in the app's Settings, or \
                     SOMNA_LLM_BASE_URL and SOMNA_LLM_MODEL"
                        .into(),
                )
            }),
            other => Err(Error::InvalidInput(format!(
                "unknown backend {other:?}: extractive or chat"
            ))),
        }
    }
}

/// A cycle as an agent asks for it (MCP `run_sleep_cycle`, `POST /api/v1/sleep`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SleepArgs {
    /// Compute the cycle and report it without writing anything.
    #[serde(default)]
    pub dry_run: bool,
    /// Run even when the loss guard would refuse it (the cycle would archive or forget
    /// more than its limit of the live memories).
    #[serde(default)]
    pub force: bool,
}

/// A cycle as the app and the CLI ask for it: every knob and the backend.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct SleepRunRequest {
    #[serde(default)]
    pub dry_run: bool,
    /// Every knob; left out, the saved settings'.
    pub config: Option<SleepConfig>,
    /// "extractive" (default) or "chat".
    pub backend: Option<String>,
    /// Run even when the loss guard would refuse it.
    #[serde(default)]
    pub force: bool,
    /// Sleep review: write only these accepted proposals of a dry run.
    #[serde(default)]
    pub review: Option<Review>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct UndoRequest {
    pub id: i64,
    /// Undo the later cycles that touched the same memories first, newest first.
    #[serde(default)]
    pub cascade: bool,
}

impl Api {
    /// Runs one cycle (or a dry run) as `opts` say, with `backend`.
    pub fn sleep(&self, opts: &SleepOptions, backend: &Backend, job: &Job) -> Result<SleepReport> {
        match backend {
            Backend::Extractive => self.engine().sleep(opts, job),
            Backend::Chat(c) => {
                self.engine()
                    .sleep_with(opts, &ChatCompressor::new(c.clone()), job)
            }
        }
    }

    /// An agent's cycle: the extractive backend and the saved knobs.
    pub fn sleep_for_agent(&self, args: &SleepArgs, job: &Job) -> Result<SleepReport> {
        let opts = SleepOptions {
            dry_run: args.dry_run,
            trigger: "agent".into(),
            config: self.sleep_config()?,
            force: args.force,
            review: None,
        };
        self.sleep(&opts, &Backend::Extractive, job)
    }

    /// The knobs a cycle runs with when none are given: the saved settings' (the defaults
    /// until settings are applied).
    pub fn sleep_config(&self) -> Result<SleepConfig> {
        Ok(self.engine().settings()?.sleep)
    }

    /// Undoes a committed cycle, or (cascade) the later cycles that block it first. Returns
    /// the report of every cycle undone, the requested one last.
    pub fn sleep_undo(&self, req: &UndoRequest, job: &Job) -> Result<Vec<SleepReport>> {
        self.engine().sleep_undo_cascade(req.id, req.cascade, job)
    }

    pub fn sleep_history(&self, limit: Option<usize>) -> Result<Vec<SleepReport>> {
        self.engine().sleep_history(SLEEP_HISTORY.check(limit)?)
    }

    pub fn sleep_report(&self, id: i64) -> Result<SleepReport> {
        self.engine().sleep_report(id)
    }

    pub fn auto_sleep_settings(&self) -> Result<AutoSleepSettings> {
        self.engine().auto_sleep_settings()
    }

    /// Starts auto-sleep in the background with the stored setting's poll interval: a cycle
    /// (trigger "auto", the saved knobs as they are when it starts) once `every` new
    /// episodes wait (left out, the stored threshold). It runs until the returned handle is
    /// stopped or dropped.
    pub fn spawn_auto_sleep(&self, every: Option<usize>) -> Result<AutoSleep> {
        let settings = self.auto_sleep_settings()?;
        let opts = SleepOptions {
            trigger: "auto".into(),
            config: self.sleep_config()?,
            ..SleepOptions::default()
        };
        Ok(AutoSleep::spawn(
            self.engine().clone(),
            every.unwrap_or(settings.every),
            settings.poll(),
            opts,
        ))
    }

    /// Saves the auto-sleep setting (the engine checks it).
    pub fn set_auto_sleep_settings(&self, s: &AutoSleepSettings) -> Result<()> {
        self.engine().set_auto_sleep_settings(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> ChatConfig {
        ChatConfig {
            base_url: "http://localhost:11434/v1".into(),
            model: "qwen".into(),
            api_key: None,
            timeout_secs: 60,
        }
    }

    #[test]
    fn the_default_backend_is_extractive_even_with_an_endpoint() {
        assert_eq!(
            Backend::choose(None, || Ok(Some(endpoint()))).unwrap(),
            Backend::Extractive
        );
    }

    #[test]
    fn the_chat_backend_uses_the_configured_endpoint_and_needs_one() {
        assert_eq!(
            Backend::choose(Some("chat"), || Ok(Some(endpoint()))).unwrap(),
            Backend::Chat(endpoint())
        );
        let e = Backend::choose(Some("chat"), || Ok(None)).unwrap_err();
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains("needs an LLM endpoint"), "{e}");
    }

    #[test]
    fn an_unknown_backend_is_refused_by_name() {
        let e = Backend::choose(Some("gpt"), || Ok(None)).unwrap_err();
        assert!(e.to_string().contains("unknown backend \"gpt\""), "{e}");
    }
}
