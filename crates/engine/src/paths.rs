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
