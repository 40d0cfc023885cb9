//! The SQLite backend's set-up: opening the file, the connection's PRAGMAs (WAL journal,
//! foreign keys, page cache, busy timeout) and the embedded ordered migrations, each in
//! its own transaction, versioned by `PRAGMA user_version`. SQLite dialect throughout.

use crate::{Error, Result};
use rusqlite::Connection;
use std::path::Path;

/// Ordered migrations; index + 1 is the schema version they bring the store to.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_links_kind.sql"),
    include_str!("migrations/0003_tokens.sql"),
    include_str!("migrations/0004_cluster_layouts.sql"),
    include_str!("migrations/0005_golden_ledger.sql"),
];

/// The store's schema version after all migrations.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Opens (creating the file and its folder if needed) and migrates the store at `path`.
pub(super) fn open(path: &Path) -> Result<Connection> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    configure(Connection::open(path)?, path)
}

/// A migrated in-memory database.
pub(super) fn open_in_memory() -> Result<Connection> {
    configure(Connection::open_in_memory()?, Path::new(":memory:"))
}

fn configure(mut conn: Connection, path: &Path) -> Result<Connection> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // A 64 MiB page cache (SQLite's default is 2 MiB): a search reads FTS pages and ~100
    // memory rows, which at 100K memories otherwise come back through pread each time.
    conn.pragma_update(None, "cache_size", -65536)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            path: path.to_path_buf(),
            found: current,
            known: SCHEMA_VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
