//! End-to-end tests of the `somna` binary with the real model.

mod common;

use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A chat JSONL file of `n` varied messages in one conversation.
fn chat_file(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("chat.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    let topics = [
        "the garden",
        "a trip to Lisbon",
        "the Rust compiler",
        "my sister's wedding",
        "the marathon",
        "a new recipe",
    ];
    for i in 0..n {
        let (role, name) = if i % 2 == 0 {
            ("user", "Ada")
        } else {
            ("assistant", "Bot")
        };
        let line = serde_json::json!({
            "role": role,
            "name": name,
            "content": format!("Message {i} about {} and what happened on day {}.", topics[i % topics.len()], i / 10),
            "timestamp": 1_700_000_000 + i as i64 * 60,
        });
        writeln!(f, "{line}").unwrap();
    }
    path
}

fn count_messages(db: &Path) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn a_killed_import_loses_nothing_committed_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let total = 1500;
    let file = chat_file(dir.path(), total);
    ok(somna(&db).arg("init").output().unwrap());

    let mut child = somna(&db)
        .args(["import", "--format", "chat-jsonl"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it hard once at least two batches are committed, well before the end.
    let start = Instant::now();
    let mut seen = 0;
    while start.elapsed() < Duration::from_secs(300) {
        seen = count_messages(&db);
        if seen >= 2 * somna_engine::IMPORT_BATCH as i64 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "import finished before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let committed = count_messages(&db);
    assert!(
        committed >= seen && committed < total as i64,
        "{committed} of {total}"
    );
    // Whole batches only: the count stored is where one of the import's batches ends.
    let ends: Vec<i64> = somna_engine::import_batch_sizes()
        .scan(0i64, |end, size| {
            *end += size as i64;
            Some(*end)
        })
        .take_while(|&end| end <= total as i64)
        .collect();
    assert!(
        ends.contains(&committed),
        "{committed} is not a batch end: {ends:?}"
    );

    // Reopen: everything committed is there, embedded and indexed.
    let stats = json(somna(&db).args(["--json", "stats"]).output().unwrap());
    assert_eq!(
        stats["indexed"].as_u64().unwrap(),
        stats["memories"].as_u64().unwrap()
    );
    let episodes = stats["by_kind"].as_array().unwrap()[0][1].as_i64().unwrap();
    assert_eq!(episodes, committed);

    // The same import again resumes where it stopped.
    let report = json(
        somna(&db)
            .args(["--json", "import", "--format", "chat-jsonl"])
            .arg(&file)
            .output()
            .unwrap(),
    );
    assert_eq!(report["messages_skipped"].as_i64().unwrap(), committed);
    assert_eq!(
        report["messages_stored"].as_i64().unwrap(),
        total as i64 - committed
    );
    assert_eq!(count_messages(&db), total as i64);
    let hits = json(
        somna(&db)
            .args([
                "--json",
                "search",
                "Message 1496 about the Rust compiler",
                "--k",
                "3",
            ])
            .output()
            .unwrap(),
    );
    assert!(hits["hits"][0]["memory"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Message 1496 "));
}

// Long on purpose (~135 lines): one memory's whole life through the JSON output (add, search,
// get, similar, update, delete, history, restore, export and re-import), each step on the
// state the previous ones left; every step is a `somna` process that loads the model, so
// split tests would repeat the earlier steps' processes.
#[test]
fn files_with_the_same_name_each_import_whole_and_an_empty_file_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = |rel: &str, content: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    };
    let chat = |texts: &[&str]| -> String {
        texts
            .iter()
            .map(|t| serde_json::json!({"role": "user", "content": t}).to_string() + "\n")
            .collect()
    };
    let a = file("a/notes.jsonl", &chat(&["buy milk", "call Ann"]));
    let b = file(
        "b/notes.jsonl",
        &chat(&["the boiler is fixed", "Ben moved to Oslo", "pay rent"]),
    );
    let import = |p: &Path| {
        json(
            somna(&db)
                .args(["--json", "import"])
                .arg(p)
                .output()
                .unwrap(),
        )
    };
    let counts =
        |r: serde_json::Value| (r["messages_stored"].clone(), r["messages_skipped"].clone());
    assert_eq!(counts(import(&a)), (2.into(), 0.into()));
    assert_eq!(counts(import(&b)), (3.into(), 0.into()));
    assert_eq!(counts(import(&b)), (0.into(), 3.into()));
    assert_eq!(count_messages(&db), 5);

    // A byte-order mark is not an error.
    let bom = file("bom.jsonl", &format!("\u{feff}{}", chat(&["from Notepad"])));
    assert_eq!(counts(import(&bom)), (1.into(), 0.into()));

    // An empty file: a typed error naming it, exit status 1, nothing stored.
    let empty = file("empty.jsonl", "");
    let out = somna(&db)
        .args(["--json", "import"])
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "import");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("empty.jsonl") && message.contains("nothing to import"),
        "{message}"
    );
    let out = somna(&db).arg("import").arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error[import]: "));
    assert_eq!(count_messages(&db), 6);
}

#[test]
fn json_output_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let add = json(
        somna(&db)
            .args([
                "--json",
                "add",
                "I work as a nurse at the Boston children's hospital.",
                "--conversation",
                "c1",
                "--speaker",
                "Mel",
            ])
            .output()
            .unwrap(),
    );
    let episode = add["episodes"][0].as_i64().unwrap();
    assert_eq!(add["facts_added"].as_array().unwrap().len(), 1);

    let r = json(
        somna(&db)
            .args(["--json", "search", "what is Mel's job?"])
            .output()
            .unwrap(),
    );
    for key in [
        "query",
        "route",
        "route_reason",
        "mode",
        "weights",
        "hits",
        "connected",
        "near_misses",
        "context",
        "budget_tokens",
        "used_tokens",
        "timings",
    ] {
        assert!(r.get(key).is_some(), "search JSON lacks {key}");
    }
    let hit = &r["hits"][0];
    for key in [
        "memory",
        "rank",
        "origin",
        "signals",
        "score",
        "mmr_score",
        "tokens",
        "packed",
    ] {
        assert!(hit.get(key).is_some(), "hit JSON lacks {key}");
    }

    let got = json(
        somna(&db)
            .args(["--json", "get", &episode.to_string()])
            .output()
            .unwrap(),
    );
    assert_eq!(got["memory"]["who"], "Mel");
    assert!(
        got["memory"]["tokens"].as_i64().unwrap() > 5,
        "token count stored at write time"
    );
    assert_eq!(got["history"][0]["event"], "add");

    // Its nearest memories: never itself, most similar first, at most k.
    let near = json(
        somna(&db)
            .args(["--json", "similar", &episode.to_string(), "--k", "3"])
            .output()
            .unwrap(),
    );
    let near = near.as_array().unwrap();
    assert!(!near.is_empty() && near.len() <= 3, "{near:?}");
    assert!(near.iter().all(|s| s["id"].as_i64() != Some(episode)));
    let sims: Vec<f64> = near
        .iter()
        .map(|s| s["similarity"].as_f64().unwrap())
        .collect();
    assert!(sims.windows(2).all(|w| w[0] >= w[1]), "{sims:?}");

    ok(somna(&db)
        .args([
            "update",
            &episode.to_string(),
            "--text",
            "I work as a surgeon now.",
        ])
        .output()
        .unwrap());
    ok(somna(&db)
        .args(["delete", &episode.to_string()])
        .output()
        .unwrap());
    let history = json(
        somna(&db)
            .args(["--json", "history", &episode.to_string()])
            .output()
            .unwrap(),
    );
    let events: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["add", "update", "delete"]);
    ok(somna(&db)
        .args(["restore", &episode.to_string()])
        .output()
        .unwrap());

    // Export, then import into a fresh store: the same memories come back.
    let export = dir.path().join("export.json");
    let out = somna(&db)
        .arg("export")
        .arg("--out")
        .arg(&export)
        .output()
        .unwrap();
    ok(out);
    let db2 = dir.path().join("copy.db");
    ok(somna(&db2)
        .args(["import", "--format", "json"])
        .arg(&export)
        .output()
        .unwrap());
    let a = json(somna(&db).args(["--json", "list"]).output().unwrap());
    let b = json(somna(&db2).args(["--json", "list"]).output().unwrap());
    assert_eq!(a["memories"], b["memories"]);
}

#[test]
fn bad_input_gets_a_typed_error_and_a_non_zero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // FTS syntax is just text.
    ok(somna(&db)
        .args(["search", "NEAR(\"a\" b) AND col:* OR ((("])
        .output()
        .unwrap());

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"role\":\"user\",\"content\":\"fine\"}\n{oops\n").unwrap();
    let out = somna(&db)
        .args(["--json", "import", "--format", "chat-jsonl"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "import");
    assert!(err["error"]["message"].as_str().unwrap().contains("line 2"));

    let out = somna(&db).args(["search", "   "]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error[invalid_input]"));

    let out = Command::new(env!("CARGO_BIN_EXE_somna"))
        .arg("--model-dir")
        .arg(dir.path().join("no-model"))
        .args(["model", "check"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[model_missing]") && stderr.contains("somna model install"),
        "{stderr}"
    );
}

#[test]
fn cluster_liquid_and_project_commands_produce_their_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = chat_file(dir.path(), 60);
    ok(somna(&db)
        .args(["import", "--format", "chat-jsonl"])
        .arg(&file)
        .output()
        .unwrap());
    let c = json(
        somna(&db)
            .args(["--json", "cluster", "--k", "6", "--show", "2"])
            .output()
            .unwrap(),
    );
    assert_eq!(c["k"], 6);
    let clusters = c["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 6);
    let total: u64 = clusters
        .iter()
        .map(|x| x["cluster"]["size"].as_u64().unwrap())
        .sum();
    assert_eq!(total, c["n"].as_u64().unwrap());
    assert!(clusters[0]["sample"].as_array().unwrap().len() <= 2);
    assert!(!clusters[0]["cluster"]["label"].as_str().unwrap().is_empty());

    let steps = json(
        somna(&db)
            .args(["--json", "liquid", "--steps", "2"])
            .output()
            .unwrap(),
    );
    let steps = steps.as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1]["step"], 2);

    let out = dir.path().join("layout.json");
    ok(somna(&db)
        .args(["project", "--method", "pca", "--dims", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap());
    let layout: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(layout["method"], "pca");
    let n = layout["ids"].as_array().unwrap().len();
    assert_eq!(layout["coords"].as_array().unwrap().len(), 2 * n);
    assert_eq!(n as u64, c["n"].as_u64().unwrap());
}

#[test]
fn a_huge_search_window_is_refused_with_a_typed_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for window in ["100000000000000", "18446744073709551615"] {
        let out = somna(&db)
            .args(["--json", "search", "anything", "--window", window])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(err["error"]["code"], "invalid_input");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("window must be 2048 to 200000"),
            "{message}"
        );
    }
    let out = somna(&db)
        .args([
            "search",
            "anything",
            "--conversation-tokens",
            "18446744073709551615",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("conversation_tokens must be 0 to 200000"),
        "{stderr}"
    );
}

#[test]
fn with_json_an_argument_error_comes_out_as_the_json_error_shape() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for args in [
        &["--json", "search", "x", "--window", "1e14"][..],
        &["search", "--json"][..],
        &["--json", "get", "not-a-number"][..],
        &["--json", "no-such-command"][..],
    ] {
        let out = somna(&db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err: serde_json::Value = serde_json::from_slice(&out.stderr)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(err["error"]["code"], "invalid_input", "{args:?}");
        assert!(!err["error"]["message"].as_str().unwrap().is_empty());
    }
    // Without --json, clap's own words; help still prints as help.
    let out = somna(&db).args(["get", "not-a-number"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid digit"));
    let out = somna(&db).args(["--json", "--help"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
}

#[test]
fn curate_previews_merges_pins_and_undoes_and_duplicates_finds_the_pair() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for text in [
        "The ferry to Cacilhas leaves at noon every Sunday.",
        "The ferry to Cacilhas leaves at noon every Sunday.",
        "My sister plays the cello in an orchestra.",
    ] {
        ok(somna(&db)
            .args(["add", text, "--conversation", "c", "--speaker", "Ada"])
            .output()
            .unwrap());
    }
    let groups = json(somna(&db).args(["--json", "duplicates"]).output().unwrap());
    let groups = groups["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    let ids: Vec<String> = groups[0]["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();

    let preview = json(
        somna(&db)
            .args(["--json", "curate", "merge", "--preview"])
            .args(&ids)
            .output()
            .unwrap(),
    );
    assert_eq!(preview["status"], "preview");
    let text = ok(somna(&db)
        .args(["curate", "merge"])
        .args(&ids)
        .output()
        .unwrap());
    assert!(
        text.contains("merged #") && text.contains("undo with: somna curate undo"),
        "{text}"
    );
    let log = json(
        somna(&db)
            .args(["--json", "curate", "history"])
            .output()
            .unwrap(),
    );
    let merge_id = log[0]["id"].as_i64().unwrap();
    let merged = log[0]["merged"]["id"].as_i64().unwrap();
    let got = json(
        somna(&db)
            .args(["--json", "get", &ids[0]])
            .output()
            .unwrap(),
    );
    assert_eq!(got["memory"]["state"], "archived");

    ok(somna(&db)
        .args(["curate", "pin", &merged.to_string()])
        .output()
        .unwrap());
    // The merge waits for the pin on its result to be undone.
    let out = somna(&db)
        .args(["--json", "curate", "undo", &merge_id.to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("undo_blocked"));
    let log = json(
        somna(&db)
            .args(["--json", "curate", "history"])
            .output()
            .unwrap(),
    );
    ok(somna(&db)
        .args(["curate", "undo", &log[0]["id"].to_string()])
        .output()
        .unwrap());
    ok(somna(&db)
        .args(["curate", "undo", &merge_id.to_string()])
        .output()
        .unwrap());
    let got = json(
        somna(&db)
            .args(["--json", "get", &ids[0]])
            .output()
            .unwrap(),
    );
    assert_eq!(got["memory"]["state"], "active");
    let out = somna(&db)
        .args(["get", &merged.to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "the merged memory is gone");

    let out = somna(&db)
        .args(["curate", "merge", &ids[0]])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap refuses a merge of one");
}

#[test]
fn list_get_and_search_go_back_in_time_and_the_timeline_shows_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    ok(somna(&db)
        .args([
            "add",
            "I live in Lisbon near the river.",
            "--speaker",
            "Ada",
        ])
        .output()
        .unwrap());
    let first = json(somna(&db).args(["--json", "get", "1"]).output().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string();
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(somna(&db)
        .args(["update", "1", "--text", "I moved to Porto."])
        .output()
        .unwrap());

    let then = ok(somna(&db)
        .args(["list", "--as-of", &before])
        .output()
        .unwrap());
    assert!(then.starts_with("as of "), "{then}");
    assert!(then.contains("Lisbon") && !then.contains("Porto"), "{then}");
    let got = json(
        somna(&db)
            .args(["--json", "get", "1", "--as-of", &before])
            .output()
            .unwrap(),
    );
    assert_eq!(got["memory"]["text"], first["memory"]["text"]);
    assert_eq!(got["as_of"].as_i64().unwrap().to_string(), before);
    let found = json(
        somna(&db)
            .args([
                "--json",
                "search",
                "where does Ada live",
                "--as-of",
                &before,
            ])
            .output()
            .unwrap(),
    );
    let texts: Vec<&str> = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["memory"]["text"].as_str().unwrap())
        .collect();
    assert!(texts.iter().any(|t| t.contains("Lisbon")), "{texts:?}");
    assert!(texts.iter().all(|t| !t.contains("Porto")), "{texts:?}");
    assert_eq!(found["as_of"].as_i64().unwrap().to_string(), before);
    // An instant before the store existed: nothing; a span ago in words works too.
    let empty = json(
        somna(&db)
            .args(["--json", "list", "--as-of", "1d ago"])
            .output()
            .unwrap(),
    );
    assert_eq!(empty["total"], 0);
    let bad = somna(&db)
        .args(["list", "--as-of", "last tuesday"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a time"));

    let line = json(somna(&db).args(["--json", "timeline"]).output().unwrap());
    assert_eq!(line["ticks"][0]["kind"], "import", "{line}");
    assert!(line["first"].as_i64() <= line["last"].as_i64());
}

#[test]
fn list_superseded_stale_shows_a_fact_a_newer_one_contradicts_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = |name: &str, text: &str, timestamp: i64| {
        let path = dir.path().join(name);
        let line = serde_json::json!({"role": "user", "name": "Ada", "content": text, "timestamp": timestamp});
        std::fs::write(&path, format!("{line}\n")).unwrap();
        path
    };
    // Two conversations: reconciliation (within one) replaces nothing.
    let home = file("home.jsonl", "I live in Lisbon.", 1_735_732_800); // 2025-01-01
    let work = file("work.jsonl", "I live in Porto.", 1_748_779_200); // 2025-06-01
    for f in [&home, &work] {
        ok(somna(&db).arg("import").arg(f).output().unwrap());
    }
    let texts = |args: &[&str]| -> Vec<String> {
        let page = json(
            somna(&db)
                .args(["--json", "list", "--kind", "fact"])
                .args(args)
                .output()
                .unwrap(),
        );
        page["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(texts(&[]).len(), 2, "both facts are current");
    assert!(texts(&["--superseded", "only"]).is_empty());
    assert_eq!(
        texts(&["--superseded", "stale"]),
        vec!["Ada lives in Lisbon"]
    );
    // Confirmed (held from) within the last ten years: not stale.
    assert!(texts(&["--superseded", "stale", "--stale-days", "3650"]).is_empty());
    let human = ok(somna(&db)
        .args(["list", "--superseded", "stale"])
        .output()
        .unwrap());
    assert!(
        human.contains("Lisbon") && !human.contains("Porto"),
        "{human}"
    );

    for (args, says) in [
        (
            &["--superseded", "stale", "--stale-days", "5000"][..],
            "stale_days must be 1 to 3650",
        ),
        (
            &["--stale-days", "30"][..],
            "stale_days applies only with filters.superseded = stale",
        ),
        (
            &["--superseded", "old"][..],
            "--superseded is hide, include, only or stale",
        ),
    ] {
        let out = somna(&db).arg("list").args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A fixture of the engine's import tests.
fn import_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/tests/fixtures/imports")
        .join(name)
}

#[test]
fn a_chatgpt_export_imports_once_and_a_bad_record_is_named_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let export = import_fixture("chatgpt-conversations.json");
    // Detected from the content; the current branch of each conversation only.
    let out = ok(somna(&db).arg("import").arg(&export).output().unwrap());
    assert!(
        out.starts_with("imported 5 messages (0 already present): 5 episodes"),
        "{out}"
    );
    let out = ok(somna(&db)
        .args(["import", "--format", "chatgpt"])
        .arg(&export)
        .output()
        .unwrap());
    assert!(
        out.starts_with("imported 0 messages (5 already present)"),
        "{out}"
    );
    assert_eq!(count_messages(&db), 5);
    let listed = json(
        somna(&db)
            .args(["--json", "list", "--conversation"])
            .arg("chatgpt:67e1a2b3-aaaa-4bbb-8ccc-0000000000c1")
            .output()
            .unwrap(),
    );
    let texts: Vec<&str> = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "episode")
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts.iter().all(|t| !t.contains("ABANDONED")), "{texts:?}");

    // A record without its author: exit 1, the file, record and problem named, nothing stored.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    doc[1]["mapping"]["aaa-1"]["message"]
        .as_object_mut()
        .unwrap()
        .remove("author");
    let bad = dir.path().join("conversations.json");
    std::fs::write(&bad, doc.to_string()).unwrap();
    let fresh = dir.path().join("fresh.db");
    let out = somna(&fresh).arg("import").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error[import]: {}: record 2 (id 67e1a2b3-aaaa-4bbb-8ccc-0000000000c2), message aaa-1: missing string field `author.role`",
            bad.display()
        )),
        "{stderr}"
    );
    assert_eq!(count_messages(&fresh), 0);
}

#[test]
fn whatif_shows_what_settings_would_do_writes_nothing_and_apply_is_undone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // Messages from November 2023: old enough that the lifecycle thresholds decide.
    let file = chat_file(dir.path(), 30);
    ok(somna(&db)
        .args(["import", "--format", "chat-jsonl"])
        .arg(&file)
        .output()
        .unwrap());
    let first = json(
        somna(&db)
            .args(["--json", "list", "--limit", "2"])
            .output()
            .unwrap(),
    );
    let expected = first["memories"][0]["id"].to_string();
    ok(somna(&db)
        .args(["golden", "add", "the garden", "--expect", &expected])
        .output()
        .unwrap());
    ok(somna(&db).arg("stats").output().unwrap());
    let bytes = std::fs::read(&db).unwrap();

    // Archiving only after 5000 days keeps every memory out of the archive.
    let r = json(
        somna(&db)
            .args([
                "--json",
                "whatif",
                "--archive-after",
                "5000",
                "--query",
                "the garden",
                // Every change listed (the default lists 20).
                "--limit",
                "100",
            ])
            .output()
            .unwrap(),
    );
    let w = &r["whatif"];
    assert_eq!(w["before"]["sleep"]["archive_after_days"], 90.0);
    assert_eq!(w["after"]["sleep"]["archive_after_days"], 5000.0);
    assert!(r["applied"].is_null());
    // Saved settings: the next cycle archives every turn; proposed: it leaves them cold.
    let next = w["lifecycle"]["next_cycle"].as_array().unwrap();
    assert!(next.len() >= 30, "{next:?}");
    assert!(next.iter().all(|c| c["to"] == "cold"), "{next:?}");
    assert_eq!(
        w["lifecycle"]["next_cycle_before"].as_u64(),
        Some(next.len() as u64)
    );
    assert!(w["lifecycle"]["differing"].as_u64().unwrap() >= 30);
    assert_eq!(w["golden"]["queries"].as_array().unwrap().len(), 1);
    assert_eq!(w["search"]["after"]["query"], "the garden");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "whatif wrote to the store"
    );

    // The readable table names the change and says nothing was written.
    let text = ok(somna(&db)
        .args([
            "whatif",
            "--decay",
            "power",
            "--half-life",
            "10",
            "--weight",
            "semantic=0.45",
            "--weight",
            "lexical=0.3",
        ])
        .output()
        .unwrap());
    for want in [
        "decay exponential → power_law",
        "half_life_days 30 → 10",
        "semantic 0.35 lexical 0.4",
        "next cycle:",
        "golden queries: mean R@k",
        "nothing was written; --apply saves these settings",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "whatif wrote to the store"
    );

    // Bad settings are refused by name, and nothing changes.
    for (args, want) in [
        (vec!["whatif", "--weight", "semantic=0.9"], "sum to 1"),
        (vec!["whatif", "--decay", "linear"], "unknown decay model"),
        (
            vec!["whatif", "--cold-after", "200"],
            "warm ≤ cold ≤ archive",
        ),
        (vec!["whatif", "--weight", "colour=0.1"], "no fusion weight"),
    ] {
        let out = somna(&db).args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("error[invalid_input]") && err.contains(want),
            "{args:?}: {err}"
        );
    }

    // Apply saves the settings as one logged change; undo puts the old ones back.
    let applied = json(
        somna(&db)
            .args(["--json", "whatif", "--archive-after", "365", "--apply"])
            .output()
            .unwrap(),
    );
    let id = applied["applied"]["id"].as_i64().unwrap();
    let saved = json(somna(&db).args(["--json", "settings"]).output().unwrap());
    assert_eq!(saved["sleep"]["archive_after_days"], 365.0);
    let log = ok(somna(&db).args(["settings", "history"]).output().unwrap());
    assert!(log.contains("archive_after_days 90 → 365"), "{log}");
    // The next what-if starts from the saved settings.
    let again = json(somna(&db).args(["--json", "whatif"]).output().unwrap());
    assert_eq!(
        again["whatif"]["before"]["sleep"]["archive_after_days"],
        365.0
    );
    let undone = ok(somna(&db)
        .args(["settings", "undo", &id.to_string()])
        .output()
        .unwrap());
    assert!(undone.contains("archive_after_days 365 → 90"), "{undone}");
    let saved = json(somna(&db).args(["--json", "settings"]).output().unwrap());
    assert_eq!(saved["sleep"]["archive_after_days"], 90.0);
}
