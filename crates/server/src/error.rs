//! Errors of the server crate, and how they reach MCP clients (JSON-RPC errors) and HTTP
//! clients (`{"error": {"code", "message"}}` with a status code).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::path::PathBuf;

/// An operation's failure: bad arguments, an engine error, or an internal failure.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Engine(#[from] somna_engine::Error),
    #[error("{0}")]
    Internal(String),
}

impl OpError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        OpError::Invalid(msg.into())
    }

    /// The closed set of error codes (the engine's, plus `invalid_input` and `internal`).
    pub fn code(&self) -> &'static str {
        match self {
            OpError::Invalid(_) => "invalid_input",
            OpError::Engine(e) => e.code(),
            OpError::Internal(_) => "internal",
        }
    }

    fn is_client_error(&self) -> bool {
        matches!(
            self.code(),
            "invalid_input" | "not_found" | "provenance_below_threshold" | "import"
        )
    }

    pub fn status(&self) -> StatusCode {
        match self.code() {
            "not_found" => StatusCode::NOT_FOUND,
            _ if self.is_client_error() => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<OpError> for rmcp::ErrorData {
    fn from(e: OpError) -> Self {
        let data = Some(serde_json::json!({ "code": e.code() }));
        match e.code() {
            "not_found" => rmcp::ErrorData::resource_not_found(e.to_string(), data),
            _ if e.is_client_error() => rmcp::ErrorData::invalid_params(e.to_string(), data),
            _ => rmcp::ErrorData::internal_error(e.to_string(), data),
        }
    }
}

impl IntoResponse for OpError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code(), "message": self.to_string()}});
        (self.status(), axum::Json(body)).into_response()
    }
}

/// Failures starting the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("refusing to bind {0}: the server listens on loopback addresses only")]
    NotLoopback(std::net::SocketAddr),
    #[error("{0}")]
    Transport(String),
}
