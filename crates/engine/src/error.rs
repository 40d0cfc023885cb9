//! The engine's one error type. Every failure a caller can act on has its own variant;
//! `code()` gives the stable, closed set of codes the CLI's JSON output and the app use.

use std::path::PathBuf;

/// Result alias used throughout the engine.
pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

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

    #[error("sleep cycle {cycle} cannot be undone before the later cycles {later:?} that touched the same memories: undo those first, or cascade")]
    UndoBlocked { cycle: i64, later: Vec<i64> },

    #[error("cancelled")]
    Cancelled,

    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// A stable machine-readable code; the UI and scripts match on this, never on text.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Sqlite(_) => "database",
            Error::Io { .. } => "io",
            Error::ModelMissing { .. } => "model_missing",
            Error::ModelCorrupt { .. } => "model_corrupt",
            Error::ModelInstall(_) => "model_install",
            Error::Embedding(_) => "embedding",
            Error::IndexCorrupt { .. } => "index_corrupt",
            Error::NotFound { .. } => "not_found",
            Error::InvalidInput(_) => "invalid_input",
            Error::ProvenanceBelowThreshold { .. } => "provenance_below_threshold",
            Error::Import { .. } => "import",
            Error::SchemaTooNew { .. } => "schema_too_new",
            Error::Policy { .. } => "policy",
            Error::UndoBlocked { .. } => "undo_blocked",
            Error::Cancelled => "cancelled",
            Error::Json(_) => "json",
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
