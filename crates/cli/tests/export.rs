//! `somna export` when the disk fills: a typed error (code `io`), never a success; no
//! partial file under the final name, no temporary file left behind, and an export that
//! fails over an existing file leaves that file as it was. With the real model.

mod common;

use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The JSON error `somna --json` printed, after checking that it failed.
fn error_code(out: &Output) -> String {
    assert!(!out.status.success(), "the export reported success");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON error in {stderr:?}"));
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["error"]["code"].as_str().unwrap().to_string()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A store of 60 short messages in `dir/store/`.
fn store(dir: &Path) -> PathBuf {
    let db = dir.join("store").join("s.db");
    let chat = dir.join("chat.jsonl");
    let mut f = std::fs::File::create(&chat).unwrap();
    for i in 0..60 {
        let line = serde_json::json!({
            "role": "user", "name": "Ada",
            "content": format!("Note {i}: the lighthouse lamp was lit at dusk."),
            "timestamp": 1_700_000_000 + i * 60,
        });
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    ok(somna(&db)
        .args(["import", "--format", "chat-jsonl"])
        .arg(&chat)
        .output()
        .unwrap());
    db
}

#[cfg(target_os = "linux")]
#[test]
fn an_export_to_a_full_device_fails_with_a_typed_error() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let out = somna(&db)
        .args(["--json", "export", "--out", "/dev/full"])
        .output()
        .unwrap();
    assert_eq!(error_code(&out), "io");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/full"));
    let dev = std::fs::metadata("/dev/full").unwrap();
    assert!(dev.file_type().is_char_device(), "/dev/full was replaced");
    assert!(!names(Path::new("/dev"))
        .iter()
        .any(|n| n.starts_with(".full.")));

    // To standard output: the same (the buffered writer's last flush was unchecked).
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = somna(&db)
        .args(["--json", "export"])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "an export to a full stdout succeeded"
    );
}

/// A disk that fills mid-write, made with a file-size limit on the process
/// (`ulimit -f`, SIGXFSZ ignored so the write fails with EFBIG instead of killing it).
#[cfg(target_os = "linux")]
#[test]
fn an_export_that_fails_midway_leaves_no_partial_file_and_the_old_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    let path = outdir.join("export.json");

    // The size of a whole export, to set the limit to half of it.
    ok(somna(&db)
        .args(["export", "--out"])
        .arg(&path)
        .output()
        .unwrap());
    let whole = std::fs::metadata(&path).unwrap().len();
    std::fs::remove_file(&path).unwrap();
    let limit_kib = whole / 2 / 1024;
    assert!(limit_kib >= 64, "the export is too small ({whole} bytes)");
    let limited = |path: &Path| {
        let mut c = Command::new("bash");
        c.arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f {limit_kib}; exec \"$0\" --json --db \"$1\" export --out \"$2\""
            ))
            .arg(env!("CARGO_BIN_EXE_somna"))
            .arg(&db)
            .arg(path);
        c.output().unwrap()
    };

    // A new file: nothing under its name, nothing left beside it.
    let out = limited(&path);
    assert_eq!(
        error_code(&out),
        "io",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(names(&outdir).is_empty(), "{:?}", names(&outdir));

    // Over an existing export: it stays as it was.
    std::fs::write(&path, "the previous export").unwrap();
    let out = limited(&path);
    assert_eq!(error_code(&out), "io");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "the previous export"
    );
    assert_eq!(names(&outdir), ["export.json"]);

    // Without the limit it is replaced by a whole export.
    ok(somna(&db)
        .args(["export", "--out"])
        .arg(&path)
        .output()
        .unwrap());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["format"], "somna-export");
    assert_eq!(names(&outdir), ["export.json"]);
}
