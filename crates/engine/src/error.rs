//! The engine's one error type. Every failure a caller can act on has its own variant;
//! `code()` gives the stable, closed set of codes the CLI's JSON output and the app use, and
//! `kind()` the class of failure a front end maps to a status (HTTP, MCP, exit code).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Result alias used throughout the engine.
pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error("database error: {0}")]
    Postgres(#[from] postgres::Error),

    /// A Postgres store that cannot be opened: which one (never with its password), why,
    /// and what would fix it.
    #[error("cannot open the Postgres store {store}: {reason}. {fix}")]
    StoreUnavailable {
        store: String,
        reason: String,
        fix: String,
    },

    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("the embedding model is not installed at {dir}: run `somna model install`")]
    ModelMissing { dir: PathBuf },

    #[error(
        "the embedding model file {file} is corrupt (sha256 {actual}, expected {expected}): run `somna model install --force`"
    )]
    ModelCorrupt {
        file: PathBuf,
        expected: String,
        actual: String,
    },

    #[error("model install failed: {0}")]
    ModelInstall(String),

    #[error("embedding failed: {0}")]
    Embedding(String),

    #[error(
        "the vector index at {path} is unusable ({reason}); it will be rebuilt from the store"
    )]
    IndexCorrupt { path: PathBuf, reason: String },

    #[error("memory {id} not found")]
    NotFound { id: i64 },

    #[error("there is no sleep cycle {id}")]
    CycleNotFound { id: i64 },

    #[error("a sleep cycle is running on this store: wait for it to end")]
    CycleRunning,

    #[error("invalid input: {0}")]
    InvalidInput(String),

    #[error(
        "provenance score {l_score:.3} is below the threshold {threshold}: the write was refused"
    )]
    ProvenanceBelowThreshold { l_score: f64, threshold: f64 },

    #[error("{file}: {location}: {problem}")]
    Import {
        file: String,
        location: String,
        problem: String,
    },

    #[error("the store {path} was written by a newer Somna (schema version {found}, this build knows {known})")]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("{file}: line {line}: {problem}")]
    Policy {
        file: String,
        line: usize,
        problem: String,
    },

    #[error("operation {cycle} cannot be undone before the later operations {later:?} (sleep cycles or curations) that touched the same memories: undo those first, or cascade")]
    UndoBlocked { cycle: i64, later: Vec<i64> },

    #[error("there is no curation {id}")]
    CurationNotFound { id: i64 },

    #[error("there is no application of settings {id}")]
    SettingsNotFound { id: i64 },

    #[error("loss guard: the cycle would archive or forget {lost} of {live} live memories, more than the {}% limit; nothing was written (look with a dry run, allow it with force)", limit_share * 100.0)]
    LossGuard {
        lost: u64,
        live: u64,
        limit_share: f64,
    },

    #[error("cancelled")]
    Cancelled,

    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),

    /// A broken invariant inside the engine (a bug), never the caller's input.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The class of a failure: what a caller can do about it. Front ends map it to their own
/// statuses (HTTP 422/404/409/499/503/500, MCP error codes), so no front end matches on codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is malformed or refused as given: fix it and retry.
    Invalid,
    /// What the request names does not exist.
    NotFound,
    /// The store's state refuses the request now (a running cycle, later cycles in the way).
    Conflict,
    /// The caller cancelled the work.
    Cancelled,
    /// Something the engine needs is missing or busy (the model, the store file, a lock).
    Unavailable,
    /// A failure inside the engine or its storage.
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Invalid => "invalid",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Internal => "internal",
        }
    }
}

impl Error {
    /// A stable machine-readable code; the UI and scripts match on this, never on text.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Sqlite(_) | Error::Postgres(_) => "database",
            Error::StoreUnavailable { .. } => "store_unavailable",
            Error::Io { .. } => "io",
            Error::ModelMissing { .. } => "model_missing",
            Error::ModelCorrupt { .. } => "model_corrupt",
            Error::ModelInstall(_) => "model_install",
            Error::Embedding(_) => "embedding",
            Error::IndexCorrupt { .. } => "index_corrupt",
            Error::NotFound { .. } => "not_found",
            Error::CycleNotFound { .. } => "cycle_not_found",
            Error::CycleRunning => "cycle_running",
            Error::InvalidInput(_) => "invalid_input",
            Error::ProvenanceBelowThreshold { .. } => "provenance_below_threshold",
            Error::Import { .. } => "import",
            Error::SchemaTooNew { .. } => "schema_too_new",
            Error::Policy { .. } => "policy",
            Error::UndoBlocked { .. } => "undo_blocked",
            Error::CurationNotFound { .. } => "curation_not_found",
            Error::SettingsNotFound { .. } => "settings_not_found",
            Error::LossGuard { .. } => "loss_guard",
            Error::Cancelled => "cancelled",
            Error::Json(_) => "json",
            Error::Internal(_) => "internal",
        }
    }

    /// Whether this is a Postgres store's connection lost (or the server restarting): an
    /// operation that failed so may be run again, on a connection made again.
    pub fn is_connection_lost(&self) -> bool {
        matches!(self, Error::Postgres(e) if e.is_closed() || server_away(e))
    }

    /// The class of this failure (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked};
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, DatabaseBusy | DatabaseLocked | CannotOpen) =>
            {
                ErrorKind::Unavailable
            }
            // A connection lost or refused, or the server shutting down or starting up.
            Error::Postgres(e) if e.is_closed() || server_away(e) => ErrorKind::Unavailable,
            Error::Sqlite(_)
            | Error::Postgres(_)
            | Error::Embedding(_)
            | Error::IndexCorrupt { .. } => ErrorKind::Internal,
            Error::StoreUnavailable { .. }
            | Error::Io { .. }
            | Error::ModelMissing { .. }
            | Error::ModelCorrupt { .. }
            | Error::ModelInstall(_)
            | Error::SchemaTooNew { .. } => ErrorKind::Unavailable,
            Error::NotFound { .. }
            | Error::CycleNotFound { .. }
            | Error::CurationNotFound { .. }
            | Error::SettingsNotFound { .. } => ErrorKind::NotFound,
            Error::InvalidInput(_)
            | Error::ProvenanceBelowThreshold { .. }
            | Error::Import { .. }
            | Error::Policy { .. }
            | Error::Json(_) => ErrorKind::Invalid,
            Error::UndoBlocked { .. } | Error::CycleRunning | Error::LossGuard { .. } => {
                ErrorKind::Conflict
            }
            Error::Cancelled => ErrorKind::Cancelled,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<candle_core::Error> for Error {
    fn from(e: candle_core::Error) -> Self {
        Error::Embedding(e.to_string())
    }
}

/// Whether a Postgres error says the server is not there (yet): refused, closed, starting
/// up or shutting down, rather than refusing this client or this statement.
pub(crate) fn server_away(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    match e.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            // 57P01-03: shut down by an administrator, crashed, starting up; 08: the
            // connection failed.
            code.starts_with("57P")
                || code.starts_with("08")
                || *db.code() == SqlState::TOO_MANY_CONNECTIONS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_a_kind_and_cycles_have_their_own_codes() {
        let cases = [
            (Error::NotFound { id: 1 }, "not_found", ErrorKind::NotFound),
            (
                Error::CycleNotFound { id: 1 },
                "cycle_not_found",
                ErrorKind::NotFound,
            ),
            (Error::CycleRunning, "cycle_running", ErrorKind::Conflict),
            (
                Error::LossGuard {
                    lost: 5,
                    live: 10,
                    limit_share: 0.25,
                },
                "loss_guard",
                ErrorKind::Conflict,
            ),
            (
                Error::CurationNotFound { id: 3 },
                "curation_not_found",
                ErrorKind::NotFound,
            ),
            (
                Error::SettingsNotFound { id: 4 },
                "settings_not_found",
                ErrorKind::NotFound,
            ),
            (
                Error::UndoBlocked {
                    cycle: 1,
                    later: vec![2],
                },
                "undo_blocked",
                ErrorKind::Conflict,
            ),
            (
                Error::InvalidInput("x".into()),
                "invalid_input",
                ErrorKind::Invalid,
            ),
            (Error::Cancelled, "cancelled", ErrorKind::Cancelled),
            (
                Error::ModelMissing { dir: "m".into() },
                "model_missing",
                ErrorKind::Unavailable,
            ),
            (Error::Internal("x".into()), "internal", ErrorKind::Internal),
        ];
        for (e, code, kind) in cases {
            assert_eq!((e.code(), e.kind()), (code, kind), "{e}");
        }
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert_eq!(Error::from(busy).kind(), ErrorKind::Unavailable);
        assert_eq!(
            serde_json::to_string(&ErrorKind::NotFound).unwrap(),
            "\"not_found\""
        );
    }
}
