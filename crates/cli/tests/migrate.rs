//! `somna migrate` between a SQLite file and a Postgres store, both ways, with the real
//! model and a real Postgres (`SOMNA_TEST_PG_URL`, started by `scripts/test.sh`; these
//! tests fail without it, they never skip).

mod common;

use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment of a run: local caches under `home`, the installed model where it is.
fn env(home: &Path) -> [(&'static str, PathBuf); 2] {
    [
        ("SOMNA_HOME", home.to_path_buf()),
        ("SOMNA_MODEL_DIR", somna_engine::paths::model_dir()),
    ]
}

/// A SQLite store of 40 chat messages.
fn sqlite_store(dir: &Path) -> PathBuf {
    let db = dir.join("s.db");
    let chat = dir.join("chat.jsonl");
    let mut f = std::fs::File::create(&chat).unwrap();
    for i in 0..40 {
        let line = serde_json::json!({
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "name": if i % 2 == 0 { "Ada" } else { "Bot" },
            "content": format!("Note {i}: the trip to Lisbon on day {} and the garden.", i / 4),
            "timestamp": 1_700_000_000 + i * 60,
        });
        writeln!(f, "{line}").unwrap();
    }
    ok(somna(&db)
        .envs(env(dir))
        .args(["import", "--format", "chat-jsonl"])
        .arg(&chat)
        .output()
        .unwrap());
    db
}

/// `somna migrate --from from --to to` (with `--json` when `json`).
fn migrate(home: &Path, from: &Path, to: &Path, json: bool) -> std::process::Output {
    let mut c = somna(from);
    c.envs(env(home));
    if json {
        c.arg("--json");
    }
    c.args(["migrate", "--from"])
        .arg(from)
        .arg("--to")
        .arg(to)
        .output()
        .unwrap()
}

/// The store's export without its time of export.
fn export(db: &Path, home: &Path) -> serde_json::Value {
    let mut v = json(somna(db).envs(env(home)).arg("export").output().unwrap());
    v["exported_at"] = serde_json::Value::Null;
    v
}

#[test]
fn a_store_moves_to_postgres_and_back_with_every_row_and_checksum_equal() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let db = sqlite_store(home);
    let pg = postgres_store();

    let report = json(migrate(home, &db, Path::new(&pg), true));
    assert_eq!(report["identical"], true, "{report}");
    let text = report.to_string();
    assert!(
        !text.contains("somna-test"),
        "the password is never printed: {text}"
    );
    let memories = &report["parts"][0];
    assert_eq!(memories["source_rows"], memories["copied_rows"]);
    assert!(memories["source_rows"].as_u64().unwrap() >= 40);

    // The copy on Postgres answers searches.
    let found = json(
        somna(Path::new(&pg))
            .envs(env(home))
            .args(["--json", "search", "the trip to Lisbon", "--k", "3"])
            .output()
            .unwrap(),
    );
    assert!(!found["hits"].as_array().unwrap().is_empty(), "{found}");

    // And back into a new file: the same store.
    let back = home.join("back.db");
    let printed = ok(migrate(home, Path::new(&pg), &back, false));
    assert!(printed.contains("memories (with embeddings)"), "{printed}");
    assert!(!printed.contains("DIFFERS"), "{printed}");
    // The store came back as Postgres held it (the search above counted accesses there).
    let (on_postgres, came_back) = (export(Path::new(&pg), home), export(&back, home));
    for part in ["memories", "links", "messages", "history"] {
        assert_eq!(on_postgres[part], came_back[part], "{part}");
    }

    // Into a store that is not empty: refused, nothing written.
    let out = migrate(home, &db, &back, false);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty store"));
    assert_eq!(export(&back, home)["memories"], came_back["memories"]);
}
