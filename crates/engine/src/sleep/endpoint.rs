//! The saved LLM endpoint: `<data dir>/llm.json`, readable only by its owner because it may
//! hold an API key. The app saves what the user sets in its settings; environment variables
//! (`SOMNA_LLM_*`) take precedence over the file.

use super::chat::ChatConfig;
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "llm.json";

pub fn saved_path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// The saved endpoint, or `None` if none was saved. A file that is not a valid endpoint is
/// an error naming it (it is left as it is).
pub fn load_saved(data_dir: &Path) -> Result<Option<ChatConfig>> {
    let path = saved_path(data_dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::InvalidInput(format!("{}: not a saved LLM endpoint: {e}", path.display()))
    })
}

/// Saves `config` (or, with `None`, removes the saved endpoint), replacing the file
/// atomically with owner-only permissions.
pub fn save(data_dir: &Path, config: Option<&ChatConfig>) -> Result<()> {
    let path = saved_path(data_dir);
    let Some(config) = config else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, e)),
            _ => Ok(()),
        };
    };
    std::fs::create_dir_all(data_dir).map_err(|e| Error::io(data_dir, e))?;
    let tmp = data_dir.join(format!(".{FILE_NAME}.{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp).map_err(|e| Error::io(&tmp, e))?;
    file.write_all(&serde_json::to_vec_pretty(config)?)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
}

/// The endpoint to use: from the environment if set there, else the saved one.
pub fn configured(data_dir: &Path) -> Result<Option<ChatConfig>> {
    match ChatConfig::from_env() {
        Some(c) => Ok(Some(c)),
        None => load_saved(data_dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ChatConfig {
        ChatConfig {
            base_url: "http://localhost:11434/v1".into(),
            model: "qwen".into(),
            api_key: Some("sk-test".into()),
            timeout_secs: 30,
        }
    }

    #[test]
    fn saved_endpoint_round_trips_privately_and_can_be_removed() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_saved(dir.path()).unwrap(), None);
        save(dir.path(), Some(&config())).unwrap();
        assert_eq!(load_saved(dir.path()).unwrap(), Some(config()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(saved_path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        save(dir.path(), None).unwrap();
        assert_eq!(load_saved(dir.path()).unwrap(), None);
        save(dir.path(), None).unwrap();
    }

    #[test]
    fn a_malformed_file_is_a_typed_error_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(saved_path(dir.path()), "{ not json").unwrap();
        let err = load_saved(dir.path()).unwrap_err();
        assert_eq!(err.code(), "invalid_input");
        assert!(err.to_string().contains(FILE_NAME), "{err}");
        assert!(saved_path(dir.path()).exists());
    }
}
