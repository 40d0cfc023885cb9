//! The crate's one error type: each failure a user can meet, named, with the path it concerns.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "{path} is not an AppImage: it has no ELF header carrying the type-2 magic \"AI\\x02\""
    )]
    NotAnAppImage { path: PathBuf },

    #[error("{path} has no image appended: the file ends where its ELF runtime ends")]
    NoImage { path: PathBuf },

    #[error("the image in {path} is corrupt: {reason}")]
    CorruptImage { path: PathBuf, reason: String },

    #[error("the image holds {path}, which is a {kind}: only directories, files and symlinks are supported")]
    UnsupportedNode { path: PathBuf, kind: &'static str },

    #[error("the image holds the unsafe path {path}: every path must stay inside the AppDir")]
    UnsafePath { path: PathBuf },

    #[error("cannot write the cache {path}: {source}")]
    CacheNotWritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("no cache directory: neither XDG_CACHE_HOME nor HOME is set to an absolute path")]
    NoCacheHome,

    #[error("{path} already exists: remove it first")]
    DestinationExists { path: PathBuf },

    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot start {path}: {source}")]
    Launch {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not a usable AppDir: {reason}")]
    InvalidAppDir { path: PathBuf, reason: String },

    #[error("{path} is not a usable runtime: {reason}")]
    InvalidRuntime { path: PathBuf, reason: String },

    #[error("cannot write the SquashFS image into {path}: {reason}")]
    Squashfs { path: PathBuf, reason: String },

    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// Turns a failed write inside the cache into the cache's own error.
    pub(crate) fn in_cache(self) -> Self {
        match self {
            Error::Write { path, source } => Error::CacheNotWritable { path, source },
            other => other,
        }
    }
}
