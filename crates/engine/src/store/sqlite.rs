//! The SQLite backend's set-up: opening the file, the connection's PRAGMAs (WAL journal,
//! foreign keys, page cache, busy timeout), the embedded ordered migrations, versioned by
//! `PRAGMA user_version`, and how a write transaction is run ([`write`]). SQLite dialect
//! throughout.
//!
//! Several processes may write to one store. Every write transaction is `BEGIN IMMEDIATE`:
//! it takes SQLite's write lock before its first statement, so it waits (busy timeout) for
//! another process's write to end and then reads what that write committed. A deferred
//! transaction that reads before it writes cannot wait: once another connection has
//! committed since its read, SQLite refuses its first write at once (`SQLITE_BUSY`, the
//! busy timeout does not apply), which is how two `somna serve` on one store failed 3.7%
//! of their adds. What SQLite still answers busy or locked (the busy timeout ran out, a
//! WAL recovery, a lock not covered by the busy handler) is asked again a few times with
//! a growing pause: the `BEGIN` (nothing has run yet) and the `COMMIT` (SQLite keeps the
//! transaction open when a `COMMIT` is busy). The transaction's body is never run twice.

use crate::{Error, Result};
use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// How long one statement waits for another connection's lock before SQLite answers busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How many times a `BEGIN` or `COMMIT` that SQLite answered busy or locked is tried again.
const RETRIES: u32 = 4;
/// The pause before the first retry; it doubles with each one (50, 100, 200, 400 ms).
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// Ordered migrations; index + 1 is the schema version they bring the store to.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_links_kind.sql"),
    include_str!("migrations/0003_tokens.sql"),
    include_str!("migrations/0004_cluster_layouts.sql"),
    include_str!("migrations/0005_golden_ledger.sql"),
    include_str!("migrations/0006_memory_access.sql"),
    include_str!("migrations/0007_curation.sql"),
    include_str!("migrations/0008_time_travel.sql"),
    include_str!("migrations/0009_validity.sql"),
    include_str!("migrations/0010_occurred_index.sql"),
    include_str!("migrations/0011_stale_facts.sql"),
    include_str!("migrations/0012_layout_history.sql"),
    include_str!("migrations/0013_golden_vectors.sql"),
    include_str!("migrations/0014_golden_vector_text.sql"),
    include_str!("migrations/0015_fts_log.sql"),
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
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Another process opening a new store at the same moment may hold the lock that
    // switching the journal needs; an existing WAL store needs no switch.
    let mode: String = retrying(|| conn.pragma_query_value(None, "journal_mode", |r| r.get(0)))?;
    if !mode.eq_ignore_ascii_case("wal") {
        retrying(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // A 64 MiB page cache (SQLite's default is 2 MiB): a search reads FTS pages and ~100
    // memory rows, which at 100K memories otherwise come back through pread each time.
    conn.pragma_update(None, "cache_size", -65536)?;
    // Reads through a memory map of the file's first GiB rather than pread into the page
    // cache: a whole-table scan (a sleep cycle's or the what-if simulator's snapshot of
    // 100K memories, whose rows carry their embeddings) took 165–235 ms in the sqlite3
    // shell with pread and 80–98 ms mapped. Writes still go through the WAL. SQLite maps
    // only what the file holds and remaps as it grows.
    conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
    // Every statement is kept prepared (store/sql.rs): room for the store's fixed statements
    // and the filter variants of listings and searches.
    conn.set_prepared_statement_cache_capacity(256);
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Brings the schema up to date in one write transaction. The version is read again
/// inside it: another process opening the same store may have migrated it meanwhile.
fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let version = |c: &Connection| -> Result<i64> {
        let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if v > SCHEMA_VERSION {
            return Err(Error::SchemaTooNew {
                path: path.to_path_buf(),
                found: v,
                known: SCHEMA_VERSION,
            });
        }
        Ok(v)
    };
    if version(conn)? == SCHEMA_VERSION {
        return Ok(());
    }
    write(conn, |tx| {
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version(tx)? as usize) {
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        }
        Ok(())
    })
}

/// Runs `f` in one write transaction (`BEGIN IMMEDIATE`) and commits it; a failed `f`
/// rolls it back. `f` runs once, after the write lock is held; only the `BEGIN` and the
/// `COMMIT` are retried (see the module comment).
pub(super) fn write<T>(
    conn: &mut Connection,
    f: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    let conn: &Connection = conn;
    // Dropped without a commit (f failed, or the commit did), it rolls back.
    let tx = retrying(|| Transaction::new_unchecked(conn, TransactionBehavior::Immediate))?;
    let out = f(&tx)?;
    // Not `tx.commit()`: that rolls back on a busy COMMIT, which SQLite would let us retry.
    retrying(|| tx.execute_batch("COMMIT"))?;
    Ok(out)
}

/// Whether SQLite asks for the same statement to be tried again later.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `op`, again after a growing pause while SQLite answers busy or locked, at most
/// [`RETRIES`] more times.
fn retrying<T>(mut op: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let mut pause = FIRST_BACKOFF;
    let mut retries = 0;
    loop {
        match op() {
            Err(e) if is_busy(&e) && retries < RETRIES => {
                retries += 1;
                std::thread::sleep(pause);
                pause *= 2;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: std::ffi::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn busy_and_locked_are_asked_again_a_bounded_number_of_times_and_nothing_else_is() {
        let mut calls = 0;
        let r = retrying(|| {
            calls += 1;
            match calls {
                1 => Err(failure(rusqlite::ffi::SQLITE_BUSY)),
                2 => Err(failure(rusqlite::ffi::SQLITE_LOCKED)),
                n => Ok(n),
            }
        });
        assert_eq!(r.unwrap(), 3);

        let mut calls = 0;
        let r: rusqlite::Result<()> = retrying(|| {
            calls += 1;
            Err(failure(rusqlite::ffi::SQLITE_BUSY))
        });
        assert!(is_busy(&r.unwrap_err()));
        assert_eq!(calls, RETRIES + 1);

        let mut calls = 0;
        let r: rusqlite::Result<()> = retrying(|| {
            calls += 1;
            Err(failure(rusqlite::ffi::SQLITE_CONSTRAINT))
        });
        assert!(r.is_err());
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_failed_body_rolls_back_and_runs_once() {
        let mut conn = open_in_memory().unwrap();
        let mut runs = 0;
        let r: Result<()> = write(&mut conn, |c| {
            runs += 1;
            c.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')", [])?;
            Err(Error::InvalidInput("no".into()))
        });
        assert!(r.is_err());
        assert_eq!(runs, 1);
        assert!(conn.is_autocommit(), "no transaction left open");
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM meta", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn access_counts_move_to_their_own_table_and_nothing_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v5.db");
        {
            // A store as schema version 5 left it, with access counts in `memories`.
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..5] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 5).unwrap();
            for (id, count, last) in [(1, 3, Some(700)), (2, 0, None), (3, 0, Some(9))] {
                conn.execute(
                    "INSERT INTO memories (id, kind, text, created_at, updated_at, importance,
                        novelty, source, l_score, access_count, last_accessed)
                     VALUES (?1, 'episode', 'x', 0, 0, 0.5, 0.5, 'user_input', 1.0, ?2, ?3)",
                    rusqlite::params![id, count, last],
                )
                .unwrap();
            }
        }
        let conn = open(&path).unwrap();
        let rows: Vec<(i64, i64, Option<i64>)> = conn
            .prepare("SELECT memory_id, count, last_at FROM memory_access ORDER BY memory_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(rows, vec![(1, 3, Some(700)), (3, 0, Some(9))]);
        let columns: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM pragma_table_info('memories')
                 WHERE name IN ('access_count', 'last_accessed')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(columns, 0);
        conn.execute("DELETE FROM memories WHERE id = 1", [])
            .unwrap();
        let left: i64 = conn
            .query_row("SELECT COUNT(*) FROM memory_access", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 1, "a deleted memory's counts go with it");
    }
}
