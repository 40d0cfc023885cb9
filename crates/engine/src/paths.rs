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

/// The stem a Postgres store's local caches are named after on this machine (see
/// `Store::path`): `<data dir>/postgres/<user@host_port_database>/<store id>`.
pub fn postgres_local(shown: &str, store_id: &str) -> PathBuf {
    let name: String = shown
        .trim_start_matches("postgres://")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "@._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    data_dir().join("postgres").join(name).join(store_id)
}

/// The file a store's sleep cycle (or undo) holds an OS lock on while it runs, beside the
/// store: other processes sharing the store find it locked, and the OS releases it when the
/// holder exits, however it exits.
pub fn sleep_lock(db: &std::path::Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".sleep-lock");
    PathBuf::from(name)
}
