//! The bearer token of the HTTP server: 32 random bytes (hex), generated at first start and
//! kept in `<data dir>/server-token` with mode 0600; later starts reuse it.

use crate::error::ServerError;
use rand::RngCore;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const TOKEN_FILE: &str = "server-token";

pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join(TOKEN_FILE)
}

/// Reads the token at `path`, or creates it (0600) when missing or empty.
pub fn load_or_create(path: &Path) -> Result<String, ServerError> {
    let io = |source| ServerError::Io {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::read_to_string(path) {
        Ok(t) if !t.trim().is_empty() => return Ok(t.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let token = bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io)?;
    }
    f.write_all(token.as_bytes()).map_err(io)?;
    f.write_all(b"\n").map_err(io)?;
    Ok(token)
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from timings.
pub fn matches(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_with_mode_0600_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let p = token_path(dir.path());
        let t1 = load_or_create(&p).unwrap();
        assert_eq!(t1.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(load_or_create(&p).unwrap(), t1);
        assert!(matches(&t1, &t1));
        assert!(!matches(&t1[..63], &t1));
        assert!(!matches(&"0".repeat(64), &t1));
    }
}
