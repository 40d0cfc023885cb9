//! Errors as the UI sees them: `{code, message}`, with the engine's stable codes.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ApiError {
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }

    pub fn not_ready() -> Self {
        Self::new("not_ready", "the store is still opening")
    }

    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new("internal", message.to_string())
    }
}

impl From<somna_engine::Error> for ApiError {
    fn from(e: somna_engine::Error) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
