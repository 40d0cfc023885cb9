//! The Postgres server restarted in the middle of `somna import`: the import waits for the
//! server, resumes, and stores every message once. A test binary of its own: the restart
//! cuts every connection to the server, and cargo runs test binaries one at a time, so no
//! other test is using it then.

mod common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// How many of the store's rows `sql` counts (`SELECT count…`), or `None` while the
/// server cannot answer.
fn count(url: &str, sql: &str) -> Option<i64> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).ok()?;
    client.query_one(sql, &[]).ok().map(|r| r.get(0))
}

#[test]
fn an_import_outlives_a_postgres_restart_and_stores_every_message_once() {
    const MESSAGES: usize = 400;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let pg = postgres_store();
    let chat = home.join("chat.jsonl");
    let mut f = std::fs::File::create(&chat).unwrap();
    for i in 0..MESSAGES {
        let line = serde_json::json!({
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "name": if i % 2 == 0 { "Ada" } else { "Bot" },
            "content": format!("Note {i}: the garden on day {} needs water and the {} roses.", i / 8, i % 13),
            "timestamp": 1_700_000_000 + i * 60,
        });
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    let env = [
        ("SOMNA_HOME", home.to_path_buf()),
        ("SOMNA_MODEL_DIR", somna_engine::paths::model_dir()),
    ];
    let import = || {
        let mut c = somna(Path::new(&pg));
        c.envs(env.clone())
            .args(["--json", "import", "--format", "chat-jsonl"])
            .arg(&chat);
        c
    };
    let mut child = import()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    // Once part of the import is stored, the server restarts under it.
    let started = Instant::now();
    loop {
        let stored = count(&pg, "SELECT count(*) FROM messages").unwrap_or(0);
        if stored >= 40 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended before the restart"
        );
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the import stored nothing"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg.sh");
    let restarted = std::process::Command::new("bash")
        .arg(&script)
        .arg("restart")
        .output()
        .unwrap();
    assert!(
        restarted.status.success(),
        "pg.sh restart: {}",
        String::from_utf8_lossy(&restarted.stderr)
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the import did not outlive the restart: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored = count(&pg, "SELECT count(*) FROM messages").unwrap();

    // Every message once: none lost, none doubled.
    assert_eq!(stored, MESSAGES as i64);
    assert_eq!(
        count(&pg, "SELECT count(DISTINCT external_id) FROM messages").unwrap(),
        MESSAGES as i64
    );
    // Each message made one episode (chat turns: one memory each, facts aside).
    let episodes = count(
        &pg,
        "SELECT count(*) FROM memories WHERE kind = 'episode' AND deleted_at IS NULL",
    )
    .unwrap();
    assert_eq!(episodes, MESSAGES as i64, "episodes");

    // The same import again stores nothing new.
    let again = json(import().output().unwrap());
    assert_eq!(again["messages_skipped"], MESSAGES as u64, "{again}");
}
