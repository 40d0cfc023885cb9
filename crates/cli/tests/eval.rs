//! End-to-end tests of `somna eval memory`, `somna golden` and `somna ledger` with the real
//! model.

mod common;

use common::*;
use std::path::Path;

fn tiny() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/data/locomo-tiny.json")
}

#[test]
fn eval_memory_writes_both_tables_and_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let v = json(
        somna(&dir.path().join("unused.db"))
            .args([
                "--json",
                "eval",
                "memory",
                "--methods",
                "rag,sleep",
                "--k",
                "4",
            ])
            .arg("--data")
            .arg(tiny())
            .arg("--out-dir")
            .arg(&out_dir)
            .output()
            .unwrap(),
    );
    let methods: Vec<&str> = v["table1"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["rag", "sleep"]);
    assert_eq!(v["table2"].as_array().unwrap().len(), 2 * 4);
    for key in ["results", "table1", "table2"] {
        let p = v["files"][key].as_str().unwrap();
        assert!(Path::new(p).starts_with(&out_dir), "{p}");
        assert!(std::fs::metadata(p).unwrap().len() > 0);
    }
    // The human form prints both tables; an unknown method is refused.
    let text = ok(somna(&dir.path().join("unused.db"))
        .args(["eval", "memory", "--methods", "no_memory"])
        .arg("--data")
        .arg(tiny())
        .arg("--out-dir")
        .arg(&out_dir)
        .output()
        .unwrap());
    assert!(
        text.contains("Table 1") && text.contains("Table 2"),
        "{text}"
    );
    let bad = somna(&dir.path().join("unused.db"))
        .args(["eval", "memory", "--methods", "vibes"])
        .arg("--data")
        .arg(tiny())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    // --llm without an endpoint is refused before any work.
    let no_llm = somna(&dir.path().join("unused.db"))
        .args(["eval", "memory", "--llm"])
        .arg("--data")
        .arg(tiny())
        .env_remove("SOMNA_LLM_BASE_URL")
        .env_remove("SOMNA_LLM_MODEL")
        .output()
        .unwrap();
    assert!(!no_llm.status.success());
    assert!(String::from_utf8_lossy(&no_llm.stderr).contains("SOMNA_LLM_BASE_URL"));
}

#[test]
fn golden_queries_and_the_ledger_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    ok(somna(&db)
        .args(["import", "--format", "locomo"])
        .arg(tiny())
        .output()
        .unwrap());
    let hits = json(
        somna(&db)
            .args(["--json", "search", "the name of Bob's dog"])
            .output()
            .unwrap(),
    );
    let top = hits["hits"][0]["memory"]["id"].as_i64().unwrap();
    let g = json(
        somna(&db)
            .args([
                "--json",
                "golden",
                "add",
                "the name of Bob's dog",
                "--k",
                "3",
            ])
            .arg(format!("--expect={top}"))
            .output()
            .unwrap(),
    );
    let id = g["id"].as_i64().unwrap();
    assert_eq!(g["expected"], serde_json::json!([top]));
    let run = json(
        somna(&db)
            .args(["--json", "golden", "run"])
            .output()
            .unwrap(),
    );
    assert_eq!(run["outcomes"][0]["recall"], 1.0);
    assert_eq!(run["regressions"], 0);
    // Deleting the expected memory makes the next run a regression (exit status 2).
    ok(somna(&db)
        .args(["delete", &top.to_string()])
        .output()
        .unwrap());
    let failed = somna(&db)
        .args(["golden", "run", "--fail-on-regression"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&failed.stdout).contains("REGRESSED"));
    let list = json(
        somna(&db)
            .args(["--json", "golden", "list"])
            .output()
            .unwrap(),
    );
    assert_eq!(list.as_array().unwrap().len(), 1);
    ok(somna(&db)
        .args(["golden", "remove", &id.to_string()])
        .output()
        .unwrap());

    // The ledger saw the import, the searches and the golden runs.
    let ledger = json(somna(&db).args(["--json", "ledger"]).output().unwrap());
    let ops: Vec<&str> = ledger
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect();
    for op in ["import", "embed", "search", "golden"] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
    }
    let by_hour = json(
        somna(&db)
            .args(["--json", "ledger", "--by", "hour", "--since", "1h"])
            .output()
            .unwrap(),
    );
    assert!(by_hour
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["period_start"].is_i64()));
    let bad = somna(&db)
        .args(["ledger", "--by", "week"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}
