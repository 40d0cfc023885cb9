//! `somna mcp` (stdio) and `somna serve` (streamable HTTP) driven by the official Python MCP
//! client (PyPI `mcp`, pinned in scripts/mcp-venv.sh, which installs it idempotently): every
//! tool is called and its result checked by tests/mcp/mcp_client.py. Skipped only when
//! python3 is absent.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's python with `mcp` installed, or `None` when there is no python3.
fn mcp_python() -> Option<PathBuf> {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 not found: skipping the MCP client tests");
        return None;
    }
    let out = Command::new("bash")
        .arg(repo().join("scripts/mcp-venv.sh"))
        .output()
        .expect("run scripts/mcp-venv.sh");
    assert!(
        out.status.success(),
        "installing the MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()))
}

fn client(python: &Path, args: &[&str], home: &Path) {
    let out = Command::new(python)
        .arg(repo().join("tests/mcp/mcp_client.py"))
        .args(args)
        .env("SOMNA_HOME", home)
        .env("SOMNA_MODEL_DIR", somna_engine::paths::model_dir())
        .output()
        .expect("run the MCP client");
    assert!(
        out.status.success(),
        "MCP client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("every tool checked"), "{stdout}");
}

#[test]
fn python_mcp_client_calls_every_tool_over_stdio() {
    let Some(python) = mcp_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("somna.db");
    client(
        &python,
        &["stdio", env!("CARGO_BIN_EXE_somna"), db.to_str().unwrap()],
        dir.path(),
    );
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn python_mcp_client_calls_every_tool_over_http() {
    let Some(python) = mcp_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("somna.db");
    let mut server = Child(
        Command::new(env!("CARGO_BIN_EXE_somna"))
            .args([
                "--json",
                "--db",
                db.to_str().unwrap(),
                "serve",
                "--port",
                "0",
            ])
            .env("SOMNA_HOME", dir.path())
            .env("SOMNA_MODEL_DIR", somna_engine::paths::model_dir())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start somna serve"),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info: serde_json::Value = serde_json::from_str(&line).expect("serve prints its address");
    let token_file = info["token_file"].as_str().unwrap();
    assert_eq!(Path::new(token_file), dir.path().join("server-token"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(info["mcp"]
        .as_str()
        .unwrap()
        .starts_with("http://127.0.0.1:"));
    client(
        &python,
        &["http", info["mcp"].as_str().unwrap(), token_file],
        dir.path(),
    );
}
