//! The LLM endpoint sleep cycles may use (the chat backend): which one is configured, how a
//! new one is checked, and what a front end may show of it (never the key).
//!
//! The endpoint comes from `SOMNA_LLM_*` in the environment, else from `<data dir>/llm.json`
//! (saved by the app's settings, owner-only). Every front end reads it the same way.

use crate::limits::LLM_TIMEOUT_SECS;
use serde::{Deserialize, Serialize};
use somna_engine::sleep::chat::{check_base_url, ChatConfig};
use somna_engine::sleep::endpoint;
use somna_engine::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The endpoint as a front end may show it: everything but the key.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LlmSettings {
    pub base_url: String,
    pub model: String,
    pub has_key: bool,
    pub timeout_secs: u64,
}

impl From<&ChatConfig> for LlmSettings {
    fn from(c: &ChatConfig) -> Self {
        Self {
            base_url: c.base_url.clone(),
            model: c.model.clone(),
            has_key: c.api_key.is_some(),
            timeout_secs: c.timeout_secs,
        }
    }
}

/// A new endpoint. An empty `base_url` removes the endpoint; an empty or missing `api_key`
/// keeps the current key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(deny_unknown_fields)]
pub struct SetLlmSettings {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Seconds per request, 1 to 600.
    pub timeout_secs: u64,
}

/// The endpoint to use: from the environment if set there, else the saved one.
pub fn configured(data_dir: &Path) -> Result<Option<ChatConfig>> {
    endpoint::configured(data_dir)
}

/// The endpoint `req` asks for, given the `current` one: `None` removes it. The base URL
/// must be http(s) (trailing slashes dropped), the model named, the timeout in range.
pub fn apply(current: Option<&ChatConfig>, req: SetLlmSettings) -> Result<Option<ChatConfig>> {
    let base_url = req.base_url.trim().trim_end_matches('/').to_string();
    if base_url.is_empty() {
        return Ok(None);
    }
    check_base_url(&base_url)?;
    let model = req.model.trim();
    if model.is_empty() {
        return Err(Error::InvalidInput("give the model name".into()));
    }
    let timeout_secs = LLM_TIMEOUT_SECS.check(usize::try_from(req.timeout_secs).ok())?;
    let api_key = req
        .api_key
        .filter(|k| !k.is_empty())
        .or_else(|| current.and_then(|c| c.api_key.clone()));
    Ok(Some(ChatConfig {
        base_url,
        model: model.into(),
        api_key,
        timeout_secs: timeout_secs as u64,
    }))
}

/// The endpoint of a long-running front end (the app): read once at start, replaced and
/// saved when the user sets a new one.
pub struct LlmEndpoint {
    data_dir: PathBuf,
    current: Mutex<Option<ChatConfig>>,
}

impl LlmEndpoint {
    /// The configured endpoint; a saved file that cannot be read is returned as the error
    /// beside an empty endpoint (the settings dialog can replace the file).
    pub fn load(data_dir: &Path) -> (Self, Option<Error>) {
        let (current, err) = match configured(data_dir) {
            Ok(c) => (c, None),
            Err(e) => (None, Some(e)),
        };
        let me = Self {
            data_dir: data_dir.to_path_buf(),
            current: Mutex::new(current),
        };
        (me, err)
    }

    pub fn get(&self) -> Option<ChatConfig> {
        self.lock().clone()
    }

    pub fn view(&self) -> Option<LlmSettings> {
        self.lock().as_ref().map(LlmSettings::from)
    }

    /// Checks `req` ([`apply`]), saves the result in the data directory and uses it.
    pub fn set(&self, req: SetLlmSettings) -> Result<()> {
        let mut current = self.lock();
        let next = apply(current.as_ref(), req)?;
        endpoint::save(&self.data_dir, next.as_ref())?;
        *current = next;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ChatConfig>> {
        self.current.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(base_url: &str, model: &str, key: Option<&str>, timeout_secs: u64) -> SetLlmSettings {
        SetLlmSettings {
            base_url: base_url.into(),
            model: model.into(),
            api_key: key.map(Into::into),
            timeout_secs,
        }
    }

    #[test]
    fn an_empty_key_keeps_the_current_key_and_trailing_slashes_go() {
        let current = apply(None, req("http://h/v1", "m", Some("sk-1"), 30))
            .unwrap()
            .unwrap();
        let next = apply(Some(&current), req(" http://h/v2/ ", " m2 ", Some(""), 60))
            .unwrap()
            .unwrap();
        assert_eq!(next.base_url, "http://h/v2");
        assert_eq!(next.model, "m2");
        assert_eq!(next.api_key.as_deref(), Some("sk-1"));
    }

    #[test]
    fn an_empty_base_url_removes_the_endpoint() {
        assert_eq!(apply(None, req("  ", "", None, 60)).unwrap(), None);
    }

    #[test]
    fn bad_settings_are_refused_with_what_is_wrong() {
        let e = apply(None, req("ftp://h", "m", None, 60)).unwrap_err();
        assert!(e.to_string().contains("http://"), "{e}");
        let e = apply(None, req("http://h", " ", None, 60)).unwrap_err();
        assert!(e.to_string().contains("model name"), "{e}");
        let e = apply(None, req("http://h", "m", None, 0)).unwrap_err();
        assert!(
            e.to_string().contains("timeout_secs must be 1 to 600"),
            "{e}"
        );
    }

    #[test]
    fn a_set_endpoint_is_saved_and_shown_without_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let (ep, err) = LlmEndpoint::load(dir.path());
        assert!(err.is_none());
        ep.set(req("http://localhost:11434/v1", "qwen", Some("sk-x"), 30))
            .unwrap();
        let shown = ep.view().unwrap();
        assert!(shown.has_key);
        assert_eq!(shown.model, "qwen");
        assert_eq!(
            endpoint::load_saved(dir.path())
                .unwrap()
                .unwrap()
                .api_key
                .as_deref(),
            Some("sk-x")
        );
        ep.set(req("", "", None, 60)).unwrap();
        assert!(ep.view().is_none());
        assert_eq!(endpoint::load_saved(dir.path()).unwrap(), None);
    }
}
