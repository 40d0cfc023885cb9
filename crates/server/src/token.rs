//! The bearer token of the HTTP server: 32 random bytes (hex), generated at first start and
//! kept in `<data dir>/server-token` with mode 0600; later starts reuse it, but only if it
//! is still safe: a token file other users may read (any group or other permission bit) or
//! a weak token (fewer than [`MIN_TOKEN_CHARS`] characters, whitespace or control
//! characters, fewer than [`MIN_DISTINCT_CHARS`] distinct characters) is refused with
//! [`ServerError::UnsafeToken`], which says how to fix it. Nothing is replaced silently:
//! clients configured with the old token would stop working without being told why.

use crate::error::ServerError;
use rand::RngCore;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub const TOKEN_FILE: &str = "server-token";

/// The shortest token accepted (a generated one has 64 hex characters, 256 bits).
pub const MIN_TOKEN_CHARS: usize = 32;

/// Fewer distinct characters than this marks a token as made by hand ("aaaa…", "0000…").
pub const MIN_DISTINCT_CHARS: usize = 10;

/// A token file larger than this is not a token.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;

pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join(TOKEN_FILE)
}

/// Reads the token at `path`, or creates it (0600) when missing or empty. An existing token
/// is refused when the file is not private to its owner or the token is weak.
pub fn load_or_create(path: &Path) -> Result<String, ServerError> {
    let io = |source| ServerError::Io {
        path: path.to_path_buf(),
        source,
    };
    match read_existing(path) {
        Ok(Some(t)) => return Ok(t),
        Ok(None) => {}
        Err(Refusal::Io(e)) => return Err(io(e)),
        Err(Refusal::Unsafe(reason)) => {
            return Err(ServerError::UnsafeToken {
                path: path.to_path_buf(),
                reason,
            })
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let token = generate();
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
    f.sync_all().map_err(io)?;
    Ok(token)
}

enum Refusal {
    Io(std::io::Error),
    Unsafe(String),
}

/// The token in an existing file, `None` when there is no file or it is empty.
fn read_existing(path: &Path) -> Result<Option<String>, Refusal> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Refusal::Io(e)),
    };
    if !meta.is_file() {
        return Err(Refusal::Unsafe("it is not a regular file".into()));
    }
    if meta.len() > MAX_TOKEN_FILE_BYTES {
        return Err(Refusal::Unsafe(format!(
            "it holds {} bytes, not a token",
            meta.len()
        )));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_TOKEN_FILE_BYTES).read_to_string(&mut text))
        .map_err(Refusal::Io)?;
    let token = text.trim();
    if token.is_empty() {
        return Ok(None);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(Refusal::Unsafe(format!(
                "other users may read it (mode {mode:o}); it may have been read: delete the file \
                 to have a new token made (mode 600), or `chmod 600` it if no one else could"
            )));
        }
    }
    weakness(token).map_or(Ok(Some(token.to_string())), |w| {
        Err(Refusal::Unsafe(format!(
            "the token is weak ({w}); delete the file to have a strong one made"
        )))
    })
}

/// Why `token` is too weak to guard the server, if it is.
fn weakness(token: &str) -> Option<String> {
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Some(format!(
            "{chars} characters, at least {MIN_TOKEN_CHARS} are needed"
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("it contains whitespace or control characters".into());
    }
    let distinct = token
        .chars()
        .collect::<std::collections::HashSet<_>>()
        .len();
    if distinct < MIN_DISTINCT_CHARS {
        return Some(format!(
            "only {distinct} distinct characters, at least {MIN_DISTINCT_CHARS} are needed"
        ));
    }
    None
}

/// 32 random bytes from the OS, as 64 hex characters.
fn generate() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
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

    #[cfg(unix)]
    fn write_with_mode(p: &Path, text: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, text).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_other_users_can_read_is_refused_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let p = token_path(dir.path());
        let strong = generate();
        for mode in [0o644, 0o640, 0o604, 0o660] {
            write_with_mode(&p, &strong, mode);
            let e = load_or_create(&p).unwrap_err();
            assert!(matches!(e, ServerError::UnsafeToken { .. }), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("mode {mode:o}")), "{msg}");
            assert!(msg.contains("server-token"), "{msg}");
            assert_eq!(std::fs::read_to_string(&p).unwrap(), strong);
        }
        write_with_mode(&p, &strong, 0o600);
        assert_eq!(load_or_create(&p).unwrap(), strong);
    }

    #[cfg(unix)]
    #[test]
    fn a_weak_token_is_refused_whatever_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = token_path(dir.path());
        for (weak, why) in [
            ("abc", "3 characters"),
            (&"a".repeat(64)[..], "1 distinct"),
            ("0123456789abcdef 0123456789abcdef", "whitespace"),
        ] {
            write_with_mode(&p, weak, 0o600);
            let msg = load_or_create(&p).unwrap_err().to_string();
            assert!(msg.contains("weak") && msg.contains(why), "{msg}");
        }
    }

    #[test]
    fn an_empty_token_file_is_replaced_by_a_strong_private_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = token_path(dir.path());
        std::fs::write(&p, "\n").unwrap();
        let t = load_or_create(&p).unwrap();
        assert_eq!(t.len(), 64);
        assert!(weakness(&t).is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[test]
    fn a_directory_in_place_of_the_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = token_path(dir.path());
        std::fs::create_dir(&p).unwrap();
        let msg = load_or_create(&p).unwrap_err().to_string();
        assert!(msg.contains("not a regular file"), "{msg}");
    }
}
