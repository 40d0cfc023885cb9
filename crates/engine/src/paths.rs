//! Default locations: the OS data directory (e.g. ~/.local/share/somna on Linux), overridable
//! with SOMNA_HOME; the model directory, overridable with SOMNA_MODEL_DIR.

use std::path::PathBuf;

pub fn data_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("SOMNA_HOME") {
        return PathBuf::from(home);
    }
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("somna")
}

pub fn default_db() -> PathBuf {
    data_dir().join("somna.db")
}

pub fn model_dir() -> PathBuf {
    match std::env::var_os("SOMNA_MODEL_DIR") {
        Some(d) => PathBuf::from(d),
        None => data_dir().join("model"),
    }
}

/// The file a store's sleep cycle (or undo) holds an OS lock on while it runs, beside the
/// store: other processes sharing the store find it locked, and the OS releases it when the
/// holder exits, however it exits.
pub fn sleep_lock(db: &std::path::Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".sleep-lock");
    PathBuf::from(name)
}
