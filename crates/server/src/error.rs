//! Errors of the server crate, and how they reach MCP clients (JSON-RPC errors) and HTTP
//! clients (`{"error": {"code", "message"}}` with a status code). The status and the MCP
//! error code follow the error's kind ([`ErrorKind`]), never its code or text:
//!
//! | kind        | HTTP | MCP (JSON-RPC code)              |
//! |-------------|------|----------------------------------|
//! | invalid     | 422 (413 for a body over the limit) | -32602 invalid params |
//! | not_found   | 404  | -32002 resource not found        |
//! | conflict    | 409  | -32009 (server-defined)          |
//! | cancelled   | 499  | -32010 (server-defined)          |
//! | unavailable | 503  | -32011 (server-defined)          |
//! | internal    | 500  | -32603 internal error            |
//!
//! A request's work is cancelled only when its client goes away (the connection closes
//! while a sleep cycle runs), hence 499, the usual status for "client closed request": no
//! client reads it, but logs and proxies do. Every error carries `data: {code, kind}`, the
//! stable code (`undo_blocked`, `cycle_running`, …) and the kind.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rmcp::model::ErrorCode;
use somna_engine::ErrorKind;
use std::path::PathBuf;

/// JSON-RPC codes for the kinds JSON-RPC and MCP have no code for (the server-defined range).
pub const MCP_CONFLICT: ErrorCode = ErrorCode(-32009);
pub const MCP_CANCELLED: ErrorCode = ErrorCode(-32010);
pub const MCP_UNAVAILABLE: ErrorCode = ErrorCode(-32011);

/// An operation's failure: arguments the front end could not parse, an engine error, or an
/// internal failure of the server.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("{0}")]
    Invalid(String),
    /// A request body over the limit: refused like invalid input, but with HTTP 413.
    #[error("{0}")]
    TooLarge(String),
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
            OpError::TooLarge(_) => "too_large",
            OpError::Engine(e) => e.code(),
            OpError::Internal(_) => "internal",
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            OpError::Invalid(_) | OpError::TooLarge(_) => ErrorKind::Invalid,
            OpError::Engine(e) => e.kind(),
            OpError::Internal(_) => ErrorKind::Internal,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            OpError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            _ => status_of(self.kind()),
        }
    }
}

/// The HTTP status of a kind of failure.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Invalid => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Cancelled => StatusCode::from_u16(499).expect("499 is a valid status"),
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The JSON-RPC error code of a kind of failure.
pub fn mcp_code_of(kind: ErrorKind) -> ErrorCode {
    match kind {
        ErrorKind::Invalid => ErrorCode::INVALID_PARAMS,
        ErrorKind::NotFound => ErrorCode::RESOURCE_NOT_FOUND,
        ErrorKind::Conflict => MCP_CONFLICT,
        ErrorKind::Cancelled => MCP_CANCELLED,
        ErrorKind::Unavailable => MCP_UNAVAILABLE,
        ErrorKind::Internal => ErrorCode::INTERNAL_ERROR,
    }
}

impl From<OpError> for rmcp::ErrorData {
    fn from(e: OpError) -> Self {
        let data = Some(serde_json::json!({ "code": e.code(), "kind": e.kind().as_str() }));
        rmcp::ErrorData::new(mcp_code_of(e.kind()), e.to_string(), data)
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
    #[error("refusing the server token in {path}: {reason}", path = path.display())]
    UnsafeToken { path: PathBuf, reason: String },
    #[error("refusing to bind {0}: the server listens on loopback addresses only")]
    NotLoopback(std::net::SocketAddr),
    #[error("{0}")]
    Transport(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_http_status_and_mcp_code() {
        let kinds = [
            ErrorKind::Invalid,
            ErrorKind::NotFound,
            ErrorKind::Conflict,
            ErrorKind::Cancelled,
            ErrorKind::Unavailable,
            ErrorKind::Internal,
        ];
        let statuses: std::collections::HashSet<u16> =
            kinds.iter().map(|k| status_of(*k).as_u16()).collect();
        let codes: std::collections::HashSet<i32> =
            kinds.iter().map(|k| mcp_code_of(*k).0).collect();
        assert_eq!(statuses.len(), kinds.len());
        assert_eq!(codes.len(), kinds.len());
    }
}
