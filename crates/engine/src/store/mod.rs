//! The store: the single source of truth, over either of two databases. [`Store`] is what
//! the engine holds (behind the façade's lock): transactions, reads and the change stream,
//! the same whatever the database. Under it a [`Backend`] holds the database: a SQLite file
//! (`sqlite.rs`: connection set-up, PRAGMAs, migrations; `checkpoint.rs`: its WAL
//! checkpoints on a thread of their own) or a Postgres database with
//! pgvector (`postgres.rs` and `postgres/schema.sql`), chosen by [`Store::open`] from a path
//! or a `postgres://` URL. Every committed write is announced on the store's change stream
//! ([`changes`]).
//!
//! The per-table files write each statement once, through [`Tx::conn`] and the layer in
//! `sql.rs`, which runs it on either database; what differs between them is chosen by
//! `Conn::dialect` where it is used (full-text search in `fts.rs`, JSON paths, the id
//! sequence in `memories.rs`, how another writer is noticed in `external.rs`).

mod changes;
mod checkpoint;
mod clusters;
mod co_access;
mod external;
mod fts;
mod golden;
mod history;
mod layouts;
mod ledger;
mod lexicon;
mod links;
mod memories;
mod messages;
mod meta;
mod nearest;
mod pg_tls;

/// The `meta` key a clustering keeps its groups under: part of the clusters, so a change of
/// it is announced as `Change::Clusters` and never as a change of settings.
pub(crate) const CLUSTER_GROUPS_META: &str = "cluster_groups";
mod postgres;
mod sleep_cycles;
pub mod sql;
mod sqlite;
mod stale;

pub use changes::{coalesce, Change, ChangeBus, ChangeEvent, Origin};
pub use clusters::{
    ClusterMerge, ClusterRow, EnergyRow, ExportedCluster, ExportedClusters, ExportedEnergy,
    ExportedMember, ExportedMerge,
};
pub use co_access::{CoAccess, CO_ACCESS_TOP_HITS};
pub use external::{ExternalChanges, ExternalCursor};
pub use fts::{fts_query, query_tokens};
pub use golden::{ExportedGoldenResult, GoldenQuery, GoldenResultRow, GoldenRunRow};
pub use history::HistoryEntry;
pub use layouts::{LayoutSnapshot, StoredLayout, LAYOUT_HISTORY_KEPT};
pub use ledger::{ExportedLedgerEntry, LedgerEntry, LedgerSummary};
pub use links::Link;
pub use memories::{
    ListQuery, MemoryFilter, MemoryUpdate, PointRow, SortKey, Superseded, STALE_DAYS,
};
pub use messages::{ExportedMessage, Message};
pub use nearest::VectorScope;
pub use postgres::{
    is_url as is_postgres_url, schema_store_url, shown_location, CycleLock, Listener,
};
pub use sleep_cycles::CycleRow;
pub use sqlite::SCHEMA_VERSION;
pub use stale::{Contradiction, FactRow, Restatement};

use crate::{Error, Result};
use changes::Pending;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The database under a [`Store`] (see the module comment).
pub(crate) enum Backend {
    /// A SQLite file (or `:memory:`), one connection in WAL mode.
    Sqlite(Connection),
    /// A Postgres database with pgvector, one connection (boxed: it is several times
    /// the size of a SQLite connection).
    Postgres(Box<postgres::PgConn>),
}

/// The database as one transaction, or one read, sees it.
#[derive(Clone, Copy)]
pub(crate) enum Db<'c> {
    Sqlite(&'c Connection),
    Postgres(&'c postgres::PgConn),
}

pub struct Store {
    backend: Backend,
    path: PathBuf,
    changes: Arc<ChangeBus>,
    /// A SQLite file's WAL checkpoints, off the writers' path (`checkpoint.rs`).
    checkpointer: Option<checkpoint::Checkpointer>,
    /// A SQLite file's full-text index in memory, for large stores (`lexicon.rs`): shared
    /// with its [`Store::reader`]s.
    lexicon: Option<Arc<lexicon::Lexicon>>,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date: a
    /// SQLite file, or a Postgres database when `path` is a `postgres://` URL (see
    /// [`Store::open_url`]).
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(url) = path.to_str().filter(|p| postgres::is_url(p)) {
            return Self::open_url(url);
        }
        let conn = sqlite::open(path)?;
        let (checkpointer, lexicon) = if path == Path::new(":memory:") {
            (None, None)
        } else {
            (
                Some(checkpoint::Checkpointer::start(path, &conn)?),
                Some(Arc::new(lexicon::Lexicon::new(path))),
            )
        };
        Ok(Self {
            checkpointer,
            lexicon,
            ..Self::with(Backend::Sqlite(conn), path.to_path_buf())
        })
    }

    /// Opens the Postgres store at `url` (`postgres://user[:password]@host[:port]/db`),
    /// creating its schema in an empty database. The password comes from the URL,
    /// `PGPASSWORD` or `~/.pgpass`; the store's [`Store::path`] names it without one.
    pub fn open_url(url: &str) -> Result<Self> {
        let conn = postgres::connect(url)?;
        let local = crate::paths::postgres_local(conn.shown(), &conn.store_id());
        if let Some(dir) = local.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(Self::with(Backend::Postgres(Box::new(conn)), local))
    }

    /// For a Postgres store, another connection to it (the schema already up to date), for
    /// work that runs beside this connection's transactions; `None` for SQLite.
    pub fn sibling(&self) -> Result<Option<Store>> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(None),
            Backend::Postgres(conn) => Ok(Some(Self::with(
                Backend::Postgres(Box::new(conn.sibling()?)),
                self.path.clone(),
            ))),
        }
    }

    /// Another connection to this store, for reads on another thread beside this
    /// connection's (a connection serves one thread at a time): for a SQLite file a
    /// connection of its own to the file, for Postgres a [`Store::sibling`]; `None` for an
    /// in-memory store, which no other connection can see.
    pub fn reader(&self) -> Result<Option<Store>> {
        match &self.backend {
            Backend::Sqlite(_) if self.path == Path::new(":memory:") => Ok(None),
            Backend::Sqlite(_) => Ok(Some(Self {
                lexicon: self.lexicon.clone(),
                ..Self::with(
                    Backend::Sqlite(sqlite::open(&self.path)?),
                    self.path.clone(),
                )
            })),
            Backend::Postgres(_) => self.sibling(),
        }
    }

    /// Whether this store lives in Postgres.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// For a Postgres store, its sleep lock across machines ([`CycleLock`]), or
    /// [`Error::CycleRunning`] while another process holds it; `None` for SQLite, whose
    /// lock is a file beside the store.
    pub fn cycle_lock(&self) -> Result<Option<CycleLock>> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(None),
            Backend::Postgres(conn) => conn.cycle_lock().map(Some),
        }
    }

    /// For a Postgres store, a [`Listener`] that wakes when any connection commits a write;
    /// `None` for SQLite (other processes' writes are found by `PRAGMA data_version`).
    pub fn listener(&self) -> Result<Option<Listener>> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(None),
            Backend::Postgres(conn) => conn.listener().map(Some),
        }
    }

    /// An in-memory store, for tests and throwaway evaluation runs.
    pub fn open_in_memory() -> Result<Self> {
        let conn = sqlite::open_in_memory()?;
        Ok(Self::with(Backend::Sqlite(conn), PathBuf::from(":memory:")))
    }

    fn with(backend: Backend, path: PathBuf) -> Self {
        Self {
            backend,
            path,
            changes: Arc::default(),
            checkpointer: None,
            lexicon: None,
        }
    }

    /// Where this store's local files live: the SQLite file itself, or for a Postgres
    /// store a name under this machine's data directory that its caches (the vector
    /// index, the liquid clustering's neighbour lists, the sleep lock) sit beside.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store as shown to people: the file's path, or the Postgres URL without its
    /// password.
    pub fn location(&self) -> String {
        match &self.backend {
            Backend::Sqlite(_) => self.path.display().to_string(),
            Backend::Postgres(conn) => conn.shown().to_string(),
        }
    }

    /// The connection, for tests that inspect or bend the store directly (the `testing`
    /// feature), on either database. Inside the engine only `store/` holds the connection,
    /// so every SQL string lives here and every write is announced.
    #[cfg(any(test, feature = "testing"))]
    pub fn conn(&self) -> sql::Conn<'_> {
        self.read().conn()
    }

    /// The SQLite connection, for tests of what only SQLite has (PRAGMAs, query plans).
    #[cfg(any(test, feature = "testing"))]
    pub fn sqlite(&self) -> &Connection {
        match &self.backend {
            Backend::Sqlite(conn) => conn,
            Backend::Postgres(_) => panic!("a SQLite-only test ran on a Postgres store"),
        }
    }

    /// Brings the database's planner statistics up to date after a bulk load: on Postgres
    /// `ANALYZE memories` (the lexical search counts common words from them, see `fts.rs`;
    /// autovacuum would do it within minutes), on SQLite `PRAGMA optimize`.
    pub fn refresh_statistics(&self) -> Result<()> {
        let conn = self.read().conn();
        conn.execute_batch(conn.pick("PRAGMA optimize", "ANALYZE memories"))
    }

    /// Starts reading a large SQLite store's full-text index into memory (`lexicon.rs`),
    /// so that searches rank without FTS5's cost per match once it is read; the first
    /// search that finds it missing or stale starts it too. Nothing for a small, in-memory
    /// or Postgres store.
    pub fn warm_lexical(&self) -> Result<()> {
        if let Some(lexicon) = &self.lexicon {
            if self.read().document_count()? >= lexicon::LEXICON_FROM_ROWS {
                lexicon.wake();
            }
        }
        Ok(())
    }

    /// Waits up to `timeout` until searches of this store rank in memory, as they do once
    /// its index is read (starting the reading if need be; for benches of the steady
    /// state): whether they do.
    pub fn wait_lexical(&self, timeout: std::time::Duration) -> Result<bool> {
        let (Some(lexicon), Backend::Sqlite(conn)) = (&self.lexicon, &self.backend) else {
            return Ok(false);
        };
        if self.read().document_count()? < lexicon::LEXICON_FROM_ROWS {
            return Ok(false);
        }
        Ok(lexicon.wait_fresh(&lexicon::version(conn)?, timeout))
    }

    /// How many times this store's full-text index has been read into memory in full
    /// (`lexicon.rs`; a write is caught up from the log without one): for benches.
    pub fn lexical_readings(&self) -> u64 {
        self.lexicon.as_ref().map_or(0, |l| l.full_readings())
    }

    /// The stream this store announces its committed changes on.
    pub fn changes(&self) -> &Arc<ChangeBus> {
        &self.changes
    }

    /// Runs `f` in one write transaction: all of it is committed or none of it. Once
    /// committed, what it changed is announced on [`Store::changes`]; a failed `f`
    /// announces nothing.
    ///
    /// The transaction holds the store's write lock from its start, so a write from
    /// another process is waited for, not failed on (see `sqlite.rs`). `f` runs exactly
    /// once: what SQLite asks to retry is only the begin and the commit, never `f`, so a
    /// closure with effects outside the database (progress reports, the changes it notes,
    /// values it moves out) need not be idempotent.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let pending = Pending::default();
        let out = match &mut self.backend {
            Backend::Sqlite(conn) => sqlite::write(conn, |conn| {
                f(&Tx {
                    db: Db::Sqlite(conn),
                    pending: Some(&pending),
                    lexicon: None,
                })
            })?,
            Backend::Postgres(conn) => postgres::write(conn, |conn| {
                f(&Tx {
                    db: Db::Postgres(conn),
                    pending: Some(&pending),
                    lexicon: None,
                })
            })?,
        };
        if let Some(c) = &self.checkpointer {
            c.committed();
        }
        if let Some(l) = &self.lexicon {
            l.committed();
        }
        self.changes.publish(Origin::Local, pending.take());
        Ok(out)
    }

    /// Runs `f` over one consistent snapshot of the store: a read transaction, so a
    /// search's many queries see one state and share one lock instead of taking and
    /// releasing it once a query. Writes through it are refused, as with [`Store::read`].
    /// Inside a transaction already open on this connection, `f` simply runs in it.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let conn = match &self.backend {
            Backend::Sqlite(conn) => conn,
            Backend::Postgres(conn) => return postgres::snapshot(conn, || f(&self.read())),
        };
        if !conn.is_autocommit() {
            return f(&self.read());
        }
        let tx = conn.unchecked_transaction()?;
        let out = f(&self.read());
        // Read-only: nothing to keep, so the end is the same either way.
        tx.rollback()?;
        out
    }

    /// Read access with the same query API as a transaction. Writes through it are
    /// refused: they belong in [`Store::transaction`], where they are announced.
    pub fn read(&self) -> Tx<'_> {
        Tx {
            db: match &self.backend {
                Backend::Sqlite(conn) => Db::Sqlite(conn),
                Backend::Postgres(conn) => Db::Postgres(conn),
            },
            pending: None,
            lexicon: self.lexicon.as_deref(),
        }
    }

    pub fn get_meta(&self, key: &str) -> Result<Option<String>> {
        self.read().get_meta(key)
    }

    /// Sets one setting in its own transaction.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.transaction(|tx| tx.set_meta(key, value))
    }
}

/// A borrowed connection (plain or inside a transaction) carrying the query methods that
/// live in this module's per-table files. Inside a transaction it collects the changes
/// its writes make, announced when the transaction commits.
pub struct Tx<'c> {
    db: Db<'c>,
    pending: Option<&'c Pending>,
    /// The store's in-memory full-text index, for reads (a write transaction's own
    /// changes are not in it).
    lexicon: Option<&'c lexicon::Lexicon>,
}

impl<'c> Tx<'c> {
    /// The connection every query in the per-table files runs on.
    fn conn(&self) -> sql::Conn<'c> {
        match self.db {
            Db::Sqlite(conn) => sql::Conn::Sqlite(conn),
            Db::Postgres(conn) => sql::Conn::Postgres(conn),
        }
    }

    /// Refuses a write outside a transaction.
    fn writing(&self) -> Result<()> {
        match self.pending {
            Some(_) => Ok(()),
            None => Err(Error::Internal(
                "a write outside a transaction (use Store::transaction)".into(),
            )),
        }
    }

    /// Records what a write changed; refused outside a transaction.
    fn note(&self, change: Change) -> Result<()> {
        match self.pending {
            Some(p) => {
                p.push(change);
                Ok(())
            }
            None => Err(Error::Internal(
                "a write outside a transaction (use Store::transaction)".into(),
            )),
        }
    }
}

/// Why a write broke a constraint of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintFailure {
    /// A primary key or unique key already taken.
    Taken,
    /// A reference to a row that does not exist.
    Dangling,
    /// A check or not-null constraint.
    Other,
}

/// Which constraint `e` broke, when it is a database constraint error.
pub fn constraint_failure(e: &Error) -> Option<ConstraintFailure> {
    use ::postgres::error::SqlState;
    use rusqlite::ffi;
    if let Error::Postgres(pe) = e {
        let code = pe.code()?;
        return Some(if *code == SqlState::UNIQUE_VIOLATION {
            ConstraintFailure::Taken
        } else if *code == SqlState::FOREIGN_KEY_VIOLATION {
            ConstraintFailure::Dangling
        } else if *code == SqlState::CHECK_VIOLATION || *code == SqlState::NOT_NULL_VIOLATION {
            ConstraintFailure::Other
        } else {
            return None;
        });
    }
    match e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Some(match f.extended_code {
                ffi::SQLITE_CONSTRAINT_PRIMARYKEY | ffi::SQLITE_CONSTRAINT_UNIQUE => {
                    ConstraintFailure::Taken
                }
                ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ConstraintFailure::Dangling,
                _ => ConstraintFailure::Other,
            })
        }
        _ => None,
    }
}

/// Current time in Unix milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// f32 vector → little-endian BLOB.
pub fn vec_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian BLOB → f32 vector; `None` if the length is not a multiple of 4.
pub fn blob_to_vec(b: &[u8]) -> Option<Vec<f32>> {
    if !b.len().is_multiple_of(4) {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_idempotent_and_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        drop(Store::open(&path).unwrap());
        let store = Store::open(&path).unwrap();
        let v: i64 = store
            .sqlite()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let mode: String = store
            .sqlite()
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn refuses_a_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = Store::open(&path).unwrap();
        store
            .sqlite()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(store);
        let err = Store::open(&path).err().unwrap();
        assert_eq!(err.code(), "schema_too_new");
    }

    #[test]
    fn a_commit_announces_its_changes_and_a_rollback_or_a_read_writes_nothing() {
        use crate::memory::{Kind, NewMemory};
        let mut store = Store::open_in_memory().unwrap();
        let rx = store.changes().subscribe();
        let failed: Result<()> = store.transaction(|tx| {
            tx.insert_memory(&NewMemory::new(Kind::Episode, "kept back"), 1.0, 0)?;
            Err(Error::InvalidInput("changed my mind".into()))
        });
        assert!(failed.is_err());
        assert!(rx.try_recv().is_err());
        assert_eq!(store.read().count_memories(&Default::default()).unwrap(), 0);

        let id = store
            .transaction(|tx| tx.insert_memory(&NewMemory::new(Kind::Episode, "kept"), 1.0, 0))
            .unwrap();
        let event = rx.try_recv().unwrap();
        assert_eq!(event.origin, Origin::Local);
        assert_eq!(event.change, Change::MemoriesAdded { ids: vec![id] });

        let err = store.read().set_tokens(id, 3).unwrap_err();
        assert_eq!(err.code(), "internal");
        store.set_meta("k", "v").unwrap();
        assert_eq!(
            rx.try_recv().unwrap().change,
            Change::Settings {
                keys: vec!["k".into()]
            }
        );
        assert_eq!(store.get_meta("k").unwrap().as_deref(), Some("v"));
    }

    #[test]
    fn a_write_that_reads_first_waits_for_another_connections_write_instead_of_failing() {
        // Two connections as two processes would have. A deferred transaction that read
        // while the other held the write lock was refused with SQLITE_BUSY as soon as the
        // other committed (its snapshot was stale; the busy timeout does not apply).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut a = Store::open(&path).unwrap();
        let mut b = Store::open(&path).unwrap();
        let (holding, held) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            a.transaction(|tx| {
                tx.set_meta("a", "1")?;
                holding.send(()).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(300));
                Ok(())
            })
            .unwrap();
        });
        held.recv().unwrap();
        let seen = b
            .transaction(|tx| {
                let seen = tx.get_meta("a")?;
                tx.set_meta("b", &format!("saw {seen:?}"))?;
                Ok(seen)
            })
            .unwrap();
        writer.join().unwrap();
        assert_eq!(
            seen.as_deref(),
            Some("1"),
            "b's transaction began after a's commit"
        );
        assert_eq!(b.get_meta("b").unwrap().as_deref(), Some("saw Some(\"1\")"));
    }

    #[test]
    fn several_processes_may_create_and_migrate_one_store_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(|_| ()))
            })
            .collect();
        for o in openers {
            o.join().unwrap().unwrap();
        }
        let v: i64 = Store::open(&path)
            .unwrap()
            .sqlite()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
    }

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.5f32, -1.25, 3.0];
        assert_eq!(blob_to_vec(&vec_to_blob(&v)).unwrap(), v);
        assert!(blob_to_vec(&[1, 2, 3]).is_none());
    }
}
