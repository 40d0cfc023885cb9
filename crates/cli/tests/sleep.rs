//! `somna sleep` end to end with the real model: a process killed mid-cycle, the next
//! cycle, history, dry run and undo.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `somna --db DB`, with ingest policies that write no conversation summaries: these
/// tests count the summaries sleep cycles make.
fn somna(db: &Path) -> Command {
    let policies = db.with_file_name("policies.toml");
    std::fs::write(&policies, "summary_every = 0\n").unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_somna"));
    c.arg("--db").arg(db).env("SOMNA_POLICIES", &policies);
    c
}

fn json(out: Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "somna failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// `n` messages of two speakers in sessions of 30, about rotating topics.
fn chat_file(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("chat.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    let topics = [
        "my pottery class and the bowl I glazed",
        "the hiking trip to the Dolomites",
        "violin lessons with my teacher",
        "the sourdough bread I baked",
    ];
    for i in 0..n {
        let name = if i % 2 == 0 { "Ada" } else { "Ben" };
        let line = serde_json::json!({
            "role": "user",
            "name": name,
            "content": format!("Turn {i}: I keep thinking about {} since day {}.", topics[(i / 30) % topics.len()], i / 30),
            // Sessions: a day apart, so time gaps separate them.
            "timestamp": 1_600_000_000 + (i / 30) as i64 * 86_400 + (i % 30) as i64 * 60,
        });
        writeln!(f, "{line}").unwrap();
    }
    path
}

fn query(db: &Path, sql: &str) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Phases committed by the running cycle (None: no running cycle yet).
fn committed_phases(db: &Path) -> Option<i64> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.query_row(
        "SELECT json_array_length(phase_stats, '$.phases') FROM sleep_cycles WHERE status = 'running'",
        [],
        |r| r.get::<_, Option<i64>>(0),
    )
    .ok()
    .map(|n| n.unwrap_or(0))
}

const EPISODES_WITHOUT_ONE_SUMMARY: &str =
    "SELECT COUNT(*) FROM memories e WHERE e.kind = 'episode' AND
    (SELECT COUNT(*) FROM links l JOIN memories s ON s.id = l.src
     WHERE l.dst = e.id AND l.kind = 'derived_from' AND s.kind = 'summary') != 1";

#[test]
fn a_cycle_killed_during_compression_loses_nothing_and_the_next_one_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = chat_file(dir.path(), 480);
    json(
        somna(&db)
            .args(["--json", "import", "--format", "chat-jsonl"])
            .arg(&file)
            .output()
            .unwrap(),
    );
    let episodes = query(&db, "SELECT COUNT(*) FROM memories WHERE kind = 'episode'");
    assert_eq!(episodes, 480);

    // A dry run writes nothing.
    let before = std::fs::read(&db).unwrap();
    let dry = json(
        somna(&db)
            .args(["--json", "sleep", "--dry-run"])
            .output()
            .unwrap(),
    );
    assert!(dry["id"].is_null());
    assert!(!dry["created"].as_array().unwrap().is_empty());
    assert_eq!(std::fs::read(&db).unwrap(), before);

    // Kill the cycle once replay has committed and compression is under way.
    // The chat is from 2020: a cycle archives nearly all of it, which the loss guard
    // refuses without --force.
    let mut child = somna(&db)
        .args(["sleep", "--force"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the cycle finished before it could be killed"
        );
        if committed_phases(&db) == Some(1) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    // Reopened: replay committed, compression did not, nothing lost.
    let history = json(
        somna(&db)
            .args(["--json", "sleep", "history"])
            .output()
            .unwrap(),
    );
    assert_eq!(history[0]["status"], "running");
    assert_eq!(history[0]["phases"].as_array().unwrap().len(), 1);
    assert_eq!(
        query(&db, "SELECT COUNT(*) FROM memories WHERE kind = 'episode'"),
        episodes
    );
    assert_eq!(
        query(
            &db,
            "SELECT COUNT(*) FROM memories WHERE kind != 'episode' AND kind != 'fact'"
        ),
        0
    );

    // The next cycle finishes the work and records the killed one as interrupted.
    let r = json(
        somna(&db)
            .args(["--json", "sleep", "--force"])
            .output()
            .unwrap(),
    );
    assert_eq!(r["status"], "completed");
    assert!(r["notes"][0].as_str().unwrap().contains("interrupted"));
    assert_eq!(query(&db, EPISODES_WITHOUT_ONE_SUMMARY), 0);
    let history = json(
        somna(&db)
            .args(["--json", "sleep", "history"])
            .output()
            .unwrap(),
    );
    assert_eq!(history[1]["status"], "interrupted");
    let stats = json(somna(&db).args(["--json", "stats"]).output().unwrap());
    assert_eq!(stats["indexed"], stats["memories"]);

    // Schemas are listed; undo removes what the cycle made.
    let schemas = json(somna(&db).args(["--json", "schemas"]).output().unwrap());
    assert!(schemas["total"].as_u64().unwrap() > 0);
    let id = r["id"].as_i64().unwrap();
    let undone = json(
        somna(&db)
            .args(["--json", "sleep", "undo", &id.to_string()])
            .output()
            .unwrap(),
    );
    assert_eq!(undone["status"], "undone");
    // The undo's report counts what it removed (it used to say 0).
    let made = r["created"].as_array().unwrap().len();
    assert!(made > 0);
    assert_eq!(undone["created"].as_array().unwrap().len(), made);
    assert_eq!(
        query(
            &db,
            "SELECT COUNT(*) FROM memories WHERE kind IN ('summary', 'schema')"
        ),
        0
    );
}
