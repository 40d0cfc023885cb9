//! `somna bench --only concurrent`: writers and searchers, each with an engine of its own,
//! on one store at once, on SQLite and on Postgres in one run (the real model and a real
//! Postgres at `SOMNA_TEST_PG_URL`, started by `scripts/test.sh`; this test fails without
//! it, it never skips). Every acknowledged write must be stored, and none twice.

mod common;

use common::*;

#[test]
fn concurrent_writers_and_searchers_lose_nothing_on_either_backend() {
    let url = std::env::var("SOMNA_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "SOMNA_TEST_PG_URL is not set: start Postgres with `scripts/pg.sh start` and \
             export SOMNA_TEST_PG_URL=\"$(scripts/pg.sh url)\""
        )
    });
    let home = tempfile::tempdir().unwrap();
    let seed = std::process::id().to_string();
    let report = json(
        std::process::Command::new(env!("CARGO_BIN_EXE_somna"))
            .env("SOMNA_HOME", home.path())
            .env("SOMNA_MODEL_DIR", somna_engine::paths::model_dir())
            .args([
                "--json",
                "bench",
                "--only",
                "concurrent",
                "--postgres",
                &url,
            ])
            .args(["--concurrent-writers", "3", "--concurrent-searchers", "2"])
            .args(["--concurrent-seconds", "4", "--seed", &seed])
            .output()
            .unwrap(),
    );
    let rows = report["concurrent"].as_array().expect("concurrent rows");
    let backends: Vec<&str> = rows
        .iter()
        .map(|r| r["backend"].as_str().unwrap())
        .collect();
    assert_eq!(backends, ["sqlite", "postgres"]);
    for r in rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        assert!(n("acknowledged") > 0, "{r}");
        assert_eq!(n("stored"), n("acknowledged"), "lost writes: {r}");
        assert_eq!(n("extra"), 0, "writes stored twice: {r}");
        assert_eq!(n("write_errors"), 0, "{r}");
        assert!(n("searches") > 0, "{r}");
        assert_eq!(n("search_errors"), 0, "{r}");
    }
    // The password given in the URL is never printed.
    assert!(!report.to_string().contains("somna-test"));
}

/// `somna bench --only lexical`: a large store's in-memory ranking gives FTS5's scores for
/// every query, and both are timed.
#[test]
fn the_lexical_bench_ranks_in_memory_as_fts5_does() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache");
    let report = json(
        std::process::Command::new(env!("CARGO_BIN_EXE_somna"))
            .env("SOMNA_HOME", home.path())
            .env("SOMNA_MODEL_DIR", somna_engine::paths::model_dir())
            .args(["--json", "bench", "--only", "lexical"])
            .args(["--lexical-sizes", "20000", "--queries", "30"])
            .arg("--cache-dir")
            .arg(&cache)
            .output()
            .unwrap(),
    );
    let rows = report["lexical"].as_array().expect("lexical rows");
    assert_eq!(rows.len(), 1, "{report}");
    let r = &rows[0];
    assert_eq!(r["memories"], 20_000, "{r}");
    assert_eq!(r["queries"], 30, "{r}");
    assert_eq!(r["agreeing"], 30, "rankings that differ from FTS5's: {r}");
    for k in [
        "memory_p50_ms",
        "fts5_p50_ms",
        "read_s",
        "current_again_p50_ms",
    ] {
        assert!(r[k].as_f64().is_some_and(|v| v > 0.0), "{k}: {r}");
    }
    // After each round of writes the index caught up from the log and still ranks as FTS5.
    assert_eq!(r["caught_up_rounds"], r["write_rounds"], "{r}");
    assert_eq!(r["agreeing_after_writes"], r["queries_after_writes"], "{r}");
    assert!(
        r["queries_after_writes"].as_u64().is_some_and(|q| q > 0),
        "{r}"
    );
}

/// A bench with peers, run outside the repository without `--scripts`, refuses before it
/// starts rather than after Somna's half (a 1M index build takes about 20 minutes).
#[test]
fn a_bench_with_peers_refuses_at_once_when_the_peer_scripts_are_elsewhere() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_somna"))
        .current_dir(home.path())
        .env("SOMNA_HOME", home.path())
        .args(["bench", "--only", "ann", "--ann-sizes", "1000000"])
        .args(["--peer-python", "python3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("peer_hnsw_bench.py") && err.contains("--scripts"),
        "{err}"
    );
    assert!(!err.contains("generating"), "it started: {err}");
}
