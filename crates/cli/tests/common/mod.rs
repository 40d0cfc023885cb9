//! What the `somna` binary's test files share: running it on a store and reading what it
//! printed. Each test file uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `somna` binary on the store at `db`.
pub fn somna(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_somna"));
    c.arg("--db").arg(db);
    c
}

/// Standard output of a run that must have succeeded (both streams shown if not).
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "somna failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Standard output of a run that must have succeeded, as JSON.
pub fn json(out: Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).expect("JSON output")
}

/// A fresh, empty Postgres store: a new schema of the test database (`SOMNA_TEST_PG_URL`,
/// started by `scripts/test.sh`; the tests that need it fail without it, never skip).
pub fn postgres_store() -> String {
    let base = std::env::var("SOMNA_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "SOMNA_TEST_PG_URL is not set: start Postgres with `scripts/pg.sh start` and \
             export SOMNA_TEST_PG_URL=\"$(scripts/pg.sh url)\""
        )
    });
    let schema = format!(
        "cli_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    );
    somna_engine::store::schema_store_url(&base, &schema, true).unwrap()
}
