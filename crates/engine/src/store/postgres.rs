//! The Postgres + pgvector backend's set-up: connecting from a URL (the password from the
//! URL, `PGPASSWORD` or `~/.pgpass`, never shown), the schema (`postgres/schema.sql`,
//! versioned in `somna_schema`), how a write transaction runs ([`write`]) and how the
//! statements of `store/sql.rs` reach the server (placeholders `?N` become `$N`; values
//! are bound as the server types each parameter).
//!
//! Writers: every write transaction first takes one transaction-scoped advisory lock of
//! the store (keyed by the store's id), so Somna's writers to one database run one after another,
//! as on SQLite, whichever process or machine they run on. A write that reads before it
//! writes (a reconcile, a merge) therefore reads what the previous writer committed and
//! cannot lose its update; reads never wait for it. Coarse, and chosen on purpose: it keeps
//! the engine's write semantics identical on both backends.
//!
//! Readers learn of writes by `LISTEN`/`NOTIFY`: every write transaction notifies the
//! store's channel, delivered as it commits, and a [`Listener`] waits on it.

use super::pg_tls::TlsUrl;
use super::sql::Value;
use crate::{Error, Result};
use postgres::types::{IsNull, ToSql, Type};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The schema version this build writes: the SQLite store's version with the same tables.
pub const PG_SCHEMA_VERSION: i64 = super::sqlite::SCHEMA_VERSION;

/// The oldest schema a Postgres store can be at and still be brought up to date (by
/// [`ADDED`]): the version Postgres stores were first made at.
const PG_UPGRADES_FROM: i64 = 12;

/// The advisory lock key creating or migrating the schema takes (database-wide: schemas
/// of one database are created one at a time).
const SCHEMA_LOCK: i64 = 0x536f_6d6e_6102;

/// Whether `target` names a Postgres store rather than a file.
pub fn is_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// `target` (a file path or a Postgres URL) as it may be shown: a URL without its password
/// (or anything but user, host, port and database).
pub fn shown_location(target: &std::path::Path) -> String {
    let text = target.to_string_lossy();
    if !is_url(&text) {
        return text.into_owned();
    }
    match text.parse::<postgres::Config>() {
        Ok(config) => shown(&config),
        Err(_) => "postgres://… (a URL that does not parse)".into(),
    }
}

/// One connection to the server and the statements prepared on it.
pub struct PgConn {
    client: RefCell<postgres::Client>,
    prepared: RefCell<HashMap<String, postgres::Statement>>,
    /// Inside `BEGIN … COMMIT` (a write or a snapshot).
    in_transaction: Cell<bool>,
    /// How many write transactions this connection committed (each adds one to the
    /// `somna_writes` counter; see [`PgConn::others_writes`]).
    own_writes: Cell<i64>,
    /// The mean number of lexemes of a memory's `fts`, for the lexical ranking's length
    /// normalisation (`fts.rs`), and the store's size when it was read (from up to 10,000
    /// memories): read again once the store has grown or shrunk by a tenth.
    mean_lexemes: Cell<Option<(i64, f64)>>,
    /// The store as shown to people: user, host, port and database, no password.
    shown: String,
    /// The id the store was given when its schema was created: its local caches are kept
    /// under it, so two stores on one server (or a database dropped and made again) never
    /// share them.
    store_id: RefCell<String>,
    /// How the connection was made, to make another for the sleep lock.
    config: postgres::Config,
    /// The TLS the URL asked for (`pg_tls.rs`), for every connection made.
    tls: MakeRustlsConnect,
}

/// The advisory lock keys of one store, from its id: several stores (schemas) in one
/// database never wait for each other.
fn lock_key(store_id: &str, what: u8) -> i64 {
    let mut key = i64::from(what);
    for b in store_id.bytes() {
        key = key.wrapping_mul(0x100_0000_01b3).wrapping_add(i64::from(b));
    }
    key
}

/// A sleep cycle's hold on a Postgres store, on a connection of its own: another process,
/// on any machine, that tries to run a cycle or an undo on the store meanwhile is refused.
/// Dropping it releases it before the connection closes, so the next cycle or undo, in
/// this process or another, can take it at once (a closed connection's locks are freed
/// only when its server process has ended, which a loaded server does later). A process
/// that dies releases it by closing the connection.
pub struct CycleLock {
    client: postgres::Client,
    key: i64,
}

impl Drop for CycleLock {
    fn drop(&mut self) {
        // Should the unlock fail, the connection closes next and the server frees the
        // lock with it: nothing more can be done from a destructor.
        let _ = self
            .client
            .execute("SELECT pg_advisory_unlock($1)", &[&self.key]);
    }
}

/// A connection of its own that waits for writes committed to the store by any connection
/// (its own process's included): every write transaction notifies the store's channel.
pub struct Listener {
    client: postgres::Client,
    shown: String,
}

impl Listener {
    /// Waits up to `timeout` for a committed write; true when one (or more: all pending
    /// notifications are taken) came. A lost connection is an error (make a new listener).
    pub fn wait(&mut self, timeout: Duration) -> Result<bool> {
        use postgres::fallible_iterator::FallibleIterator;
        let came = {
            let mut notes = self.client.notifications();
            let came = notes.timeout_iter(timeout).next()?.is_some();
            if came {
                while notes.iter().next()?.is_some() {}
            }
            came
        };
        if self.client.is_closed() {
            return Err(Error::StoreUnavailable {
                store: self.shown.clone(),
                reason: "the connection waiting for other writers' changes closed".into(),
                fix: "it is made again at the next wait".into(),
            });
        }
        Ok(came)
    }
}

/// How long a lost connection waits for the server to come back before the operation
/// fails (a restart takes seconds; a failover of a managed server up to a minute).
const RECONNECT_WAIT: Duration = Duration::from_secs(60);

/// The store's notification channel (its id is hex, so the name needs no quoting beyond
/// the double quotes).
fn channel(store_id: &str) -> String {
    format!("\"somna_{store_id}\"")
}

/// `url` as the postgres crate's configuration and the TLS it asks for (`pg_tls.rs`).
fn parse_url(url: &str) -> Result<(postgres::Config, TlsUrl)> {
    let tls = TlsUrl::parse(url)?;
    let config = tls.url.parse().map_err(|e| Error::StoreUnavailable {
        store: "(a postgres:// URL)".into(),
        reason: format!("the URL does not parse ({e})"),
        fix: "Write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE".into(),
    })?;
    Ok((config, tls))
}

/// A server to connect to: its configuration (the password from the URL, `PGPASSWORD` or
/// `~/.pgpass`), the TLS the URL asks for, and how it is shown (no password).
struct Server {
    config: postgres::Config,
    tls: MakeRustlsConnect,
    shown: String,
}

impl Server {
    fn from_url(url: &str) -> Result<Self> {
        let (mut config, tls) = parse_url(url)?;
        let shown = shown(&config);
        if config.get_password().is_none() {
            if let Some(p) = password_from_env(&config) {
                config.password(p);
            }
        }
        config.application_name("somna");
        let tls = tls.connector(&shown)?;
        Ok(Self { config, tls, shown })
    }

    fn unavailable(&self, reason: String, fix: &str) -> Error {
        Error::StoreUnavailable {
            store: self.shown.clone(),
            reason,
            fix: fix.into(),
        }
    }

    fn connect(&self) -> Result<postgres::Client> {
        self.config
            .connect(self.tls.clone())
            .map_err(|e| connect_error(&e, &|r, f| self.unavailable(r, f)))
    }
}

/// Connects to the store at `url` and brings its schema up to date.
pub(super) fn connect(url: &str) -> Result<PgConn> {
    let server = Server::from_url(url)?;
    let conn = PgConn {
        client: RefCell::new(server.connect()?),
        tls: server.tls.clone(),
        prepared: RefCell::default(),
        in_transaction: Cell::new(false),
        own_writes: Cell::new(0),
        mean_lexemes: Cell::new(None),
        shown: server.shown.clone(),
        store_id: RefCell::default(),
        config: server.config.clone(),
    };
    migrate(&conn).map_err(|e| match e {
        Error::Postgres(pe) => connect_error(&pe, &|r, f| server.unavailable(r, f)),
        other => other,
    })?;
    Ok(conn)
}

/// The URL of the store kept in schema `schema` of the database at `server_url`, the
/// schema created if missing (dropped with everything in it first when `fresh`): one
/// database can hold many stores side by side. `schema` is a plain lower-case identifier.
pub fn schema_store_url(server_url: &str, schema: &str, fresh: bool) -> Result<String> {
    let plain = schema.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && schema
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !plain {
        return Err(Error::InvalidInput(format!(
            "a store's schema is named by lower-case letters, digits and _ (got {schema:?})"
        )));
    }
    let mut client = Server::from_url(server_url)?.connect()?;
    if fresh {
        client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))?;
    }
    client.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))?;
    let sep = if server_url.contains('?') { '&' } else { '?' };
    Ok(format!(
        "{server_url}{sep}options=-c%20search_path%3D{schema}%2Cpublic"
    ))
}

/// What a failed connection or schema set-up means to the person who asked.
fn connect_error(e: &postgres::Error, unavailable: &dyn Fn(String, &str) -> Error) -> Error {
    use postgres::error::SqlState;
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if db.message().contains("no encryption") {
            return unavailable(
                format!(
                    "the server accepts this user only over TLS ({})",
                    db.message()
                ),
                "Add sslmode=require (or verify-full with sslrootcert) to the URL",
            );
        }
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            return unavailable(
                format!("the server refused the user or password ({})", db.message()),
                "Check the user and password (in the URL, PGPASSWORD or ~/.pgpass)",
            );
        }
        if *code == SqlState::INVALID_CATALOG_NAME {
            return unavailable(
                format!("the database does not exist ({})", db.message()),
                "Create it first (CREATE DATABASE …) or name another in the URL",
            );
        }
        if db.message().contains("extension \"vector\"") || db.message().contains("vector.control")
        {
            return unavailable(
                format!("the pgvector extension is not available ({})", db.message()),
                "Install pgvector on the server and run CREATE EXTENSION vector in this database as a user allowed to",
            );
        }
        return unavailable(
            format!("the server answered: {}", db.message()),
            "See the server's log",
        );
    }
    if let Some((reason, fix)) = super::pg_tls::explain(e) {
        return unavailable(reason, fix);
    }
    let text = e.to_string();
    if text.contains("password missing") {
        return unavailable(
            "the server asks for a password and none was given".into(),
            "Give it in the URL, PGPASSWORD or ~/.pgpass",
        );
    }
    unavailable(
        format!("the server cannot be reached ({})", source_text(e)),
        "Check that Postgres runs and listens at that host and port",
    )
}

/// The innermost cause of `e` (e.g. "Connection refused (os error 111)").
fn source_text(e: &postgres::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// `user@host:port/database`, the way a store is named in messages.
fn shown(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

/// The password from `PGPASSWORD`, else the first matching line of the password file
/// (`PGPASSFILE`, else `~/.pgpass`: `host:port:database:user:password`, `*` matching any).
fn password_from_env(config: &postgres::Config) -> Option<Vec<u8>> {
    if let Ok(p) = std::env::var("PGPASSWORD") {
        return Some(p.into_bytes());
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let want = [
        host.as_str(),
        port.as_str(),
        config.get_dbname().unwrap_or(""),
        config.get_user().unwrap_or(""),
    ];
    pgpass_lookup(&text, &want).map(String::into_bytes)
}

/// The password of the first line of a `.pgpass` text matching `want` (host, port,
/// database, user).
fn pgpass_lookup(text: &str, want: &[&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        // Fields are separated by ':'; "\:" and "\\" are a colon and a backslash.
        let mut fields = vec![String::new()];
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => fields.last_mut()?.extend(chars.next()),
                ':' => fields.push(String::new()),
                c => fields.last_mut()?.push(c),
            }
        }
        if fields.len() == 5
            && fields[..4]
                .iter()
                .zip(want)
                .all(|(f, w)| f == "*" || f == w)
        {
            return fields.pop();
        }
    }
    None
}

/// pgvector's index over the embeddings, if missing (`Tx::restore_vector_index` builds it
/// again after a bulk load).
macro_rules! vector_index {
    () => {
        "CREATE INDEX IF NOT EXISTS memory_vectors_hnsw
    ON memory_vectors USING hnsw (embedding vector_cosine_ops)"
    };
}
pub(super) const VECTOR_INDEX: &str = vector_index!();

/// What the schema gained after stores were first made from it, as idempotent statements
/// run at every open (a store made before then gets it once, made since finds it there):
/// the embeddings moved from `memories.embedding` to `memory_vectors` (the old column's
/// space is reclaimed as rows are rewritten, or at once by `VACUUM FULL memories`), and
/// golden queries keep their vectors (schema 13, `migrations/0013_golden_vectors.sql`) and
/// the text each vector is of (schema 14, `migrations/0014_golden_vector_text.sql`).
const ADDED: &str = concat!(
    "SET LOCAL maintenance_work_mem = '256MB';
ALTER TABLE golden_queries ADD COLUMN IF NOT EXISTS vector BYTEA;
ALTER TABLE golden_queries ADD COLUMN IF NOT EXISTS vector_model TEXT;
ALTER TABLE golden_queries ADD COLUMN IF NOT EXISTS vector_text TEXT;
CREATE TABLE IF NOT EXISTS memory_vectors (
    id        BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    embedding vector(384) NOT NULL
);
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
               AND table_name = 'memories' AND column_name = 'embedding') THEN
        INSERT INTO memory_vectors (id, embedding)
            SELECT id, embedding FROM memories WHERE embedding IS NOT NULL;
        ALTER TABLE memories DROP COLUMN embedding;
    END IF;
END $$;
",
    vector_index!(),
    ";
CREATE INDEX IF NOT EXISTS memories_turns_coalesced
    ON memories ((COALESCE(conversation, '')), (COALESCE(session, '')), kind, id);"
);

/// Creates the schema in an empty database, or checks the version of an existing one.
/// Several processes may do this at once: the first to take [`SCHEMA_LOCK`] creates it.
fn migrate(conn: &PgConn) -> Result<()> {
    write_with(conn, SCHEMA_LOCK, |c| {
        let exists: bool = c
            .query(
                // In the schema the store lives in (the first of the search path), not in any
                // schema the search path reaches.
                &c.prepare_raw(
                    "SELECT EXISTS (SELECT 1 FROM information_schema.tables
                     WHERE table_schema = current_schema() AND table_name = 'somna_schema')",
                )?,
                &[],
            )?
            .first()
            .map(|r| r.get(0))
            .unwrap_or(false);
        if !exists {
            c.batch_execute(include_str!("postgres/schema.sql"))?;
            c.batch_execute(&format!(
                "CREATE TABLE somna_writes (n BIGINT NOT NULL);
                 INSERT INTO somna_writes (n) VALUES (0);
                 CREATE TABLE somna_schema (version BIGINT NOT NULL, store_id TEXT NOT NULL);
                 INSERT INTO somna_schema (version, store_id)
                 VALUES ({PG_SCHEMA_VERSION}, md5(random()::text || clock_timestamp()::text));"
            ))?;
        }
        let (version, store_id): (i64, String) = c
            .query(
                &c.prepare_raw("SELECT version, store_id FROM somna_schema LIMIT 1")?,
                &[],
            )?
            .first()
            .map(|r| (r.get(0), r.get(1)))
            .unwrap_or_default();
        *c.store_id.borrow_mut() = store_id;
        if version > PG_SCHEMA_VERSION {
            return Err(Error::SchemaTooNew {
                path: PathBuf::from(&c.shown),
                found: version,
                known: PG_SCHEMA_VERSION,
            });
        }
        if version < PG_UPGRADES_FROM {
            return Err(Error::Internal(format!(
                "the Postgres store is at schema {version}, this build knows {PG_SCHEMA_VERSION} and has no migration between them"
            )));
        }
        c.batch_execute(ADDED)?;
        // What a later schema added is in `ADDED`, now run: the store is at this version.
        if version < PG_SCHEMA_VERSION {
            c.batch_execute(&format!(
                "UPDATE somna_schema SET version = {PG_SCHEMA_VERSION}"
            ))?;
        }
        Ok(())
    })
}

/// Runs `f` in one write transaction holding the store's write lock; a failed `f` rolls
/// it back. `f` runs once.
pub(super) fn write<T>(conn: &PgConn, f: impl FnOnce(&PgConn) -> Result<T>) -> Result<T> {
    let out = write_with(conn, lock_key(&conn.store_id.borrow(), 1), |c| {
        let out = f(c)?;
        // Counted and announced in the transaction: the counter moves, and listeners hear
        // of it, when and only if the write commits.
        c.batch_execute(&format!(
            "UPDATE somna_writes SET n = n + 1; NOTIFY {}",
            channel(&c.store_id.borrow())
        ))?;
        Ok(out)
    })?;
    conn.own_writes.set(conn.own_writes.get() + 1);
    Ok(out)
}

fn write_with<T>(conn: &PgConn, lock: i64, f: impl FnOnce(&PgConn) -> Result<T>) -> Result<T> {
    conn.batch_execute(&format!("BEGIN; SELECT pg_advisory_xact_lock({lock});"))?;
    conn.in_transaction.set(true);
    let out = f(conn);
    let end = match &out {
        Ok(_) => "COMMIT",
        Err(_) => "ROLLBACK",
    };
    let ended = conn.batch_execute(end);
    conn.in_transaction.set(false);
    let out = out?;
    ended?;
    Ok(out)
}

/// Runs `f` over one consistent snapshot (a read-only repeatable-read transaction); inside
/// a transaction already open, `f` runs in it.
pub(super) fn snapshot<T>(conn: &PgConn, f: impl FnOnce() -> Result<T>) -> Result<T> {
    if conn.in_transaction.get() {
        return f();
    }
    conn.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
    conn.in_transaction.set(true);
    let out = f();
    let ended = conn.batch_execute("ROLLBACK");
    conn.in_transaction.set(false);
    let out = out?;
    ended?;
    Ok(out)
}

impl PgConn {
    /// The store as shown to people (no password).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The mean number of lexemes per memory of a store of `rows` memories (see
    /// `mean_lexemes`).
    pub(super) fn mean_lexemes(&self, rows: i64) -> Result<f64> {
        if let Some((at, m)) = self.mean_lexemes.get() {
            if (rows - at).abs() * 10 <= at.max(100) {
                return Ok(m);
            }
        }
        let stmt = self.prepare(
            "SELECT CAST(COALESCE(AVG(length(fts)), 10) AS DOUBLE PRECISION)
             FROM (SELECT fts FROM memories ORDER BY id DESC LIMIT 10000) s",
        )?;
        let mean: f64 = self
            .query(&stmt, &[])?
            .first()
            .map(|r| r.get(0))
            .unwrap_or(10.0);
        let mean = mean.max(1.0);
        self.mean_lexemes.set(Some((rows, mean)));
        Ok(mean)
    }

    /// The id the store was given when it was created.
    pub fn store_id(&self) -> String {
        self.store_id.borrow().clone()
    }

    /// Takes the store's sleep lock on a new connection, or [`Error::CycleRunning`] when
    /// another connection holds it.
    pub fn cycle_lock(&self) -> Result<CycleLock> {
        let mut client = self.config.connect(self.tls.clone())?;
        let key = lock_key(&self.store_id.borrow(), 2);
        let stmt = client.prepare("SELECT pg_try_advisory_lock($1)")?;
        let held: bool = client.query_one(&stmt, &[&key])?.get(0);
        if !held {
            return Err(Error::CycleRunning);
        }
        Ok(CycleLock { client, key })
    }

    /// A [`Listener`] on a new connection, listening to the store's channel.
    /// Another connection to this store, made as this one was (its schema is up to date).
    pub fn sibling(&self) -> Result<PgConn> {
        Ok(PgConn {
            client: RefCell::new(self.config.connect(self.tls.clone())?),
            tls: self.tls.clone(),
            prepared: RefCell::default(),
            in_transaction: Cell::new(false),
            own_writes: Cell::new(0),
            mean_lexemes: Cell::new(None),
            shown: self.shown.clone(),
            store_id: RefCell::new(self.store_id.borrow().clone()),
            config: self.config.clone(),
        })
    }

    pub fn listener(&self) -> Result<Listener> {
        let mut client = self.config.connect(self.tls.clone())?;
        client.batch_execute(&format!("LISTEN {}", channel(&self.store_id.borrow())))?;
        Ok(Listener {
            client,
            shown: self.shown.clone(),
        })
    }

    /// The write transactions other connections committed to the store: the
    /// `somna_writes` counter (every write transaction adds one as it commits) less this
    /// connection's own. It changes when another connection commits and only then, as
    /// SQLite's `data_version` does.
    pub fn others_writes(&self) -> Result<i64> {
        let stmt = self.prepare("SELECT n FROM somna_writes")?;
        let last: i64 = self
            .query(&stmt, &[])?
            .first()
            .map(|r| r.get(0))
            .unwrap_or(0);
        Ok(last - self.own_writes.get())
    }

    /// Outside a transaction, a connection the server closed (it restarted, or dropped
    /// the connection) is made again, waiting up to [`RECONNECT_WAIT`] for the server to
    /// come back; the statements prepared on the old one are forgotten. Inside one, the
    /// loss is the transaction's error: it is rolled back by the server, and its caller
    /// decides whether to run it again.
    fn ensure_connected(&self) -> Result<()> {
        if self.in_transaction.get() || !self.client.borrow().is_closed() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            match self.config.connect(self.tls.clone()) {
                Ok(client) => {
                    *self.client.borrow_mut() = client;
                    self.prepared.borrow_mut().clear();
                    return Ok(());
                }
                Err(e) if crate::error::server_away(&e) && started.elapsed() < RECONNECT_WAIT => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                Err(e) => {
                    let unavailable = |reason: String, fix: &str| Error::StoreUnavailable {
                        store: self.shown.clone(),
                        reason: format!("the connection was lost and not made again: {reason}"),
                        fix: fix.into(),
                    };
                    return Err(connect_error(&e, &unavailable));
                }
            }
        }
    }

    /// Prepares `sql` (SQLite-style `?N` placeholders) once per connection.
    pub(super) fn prepare(&self, sql: &str) -> Result<postgres::Statement> {
        self.ensure_connected()?;
        if let Some(s) = self.prepared.borrow().get(sql) {
            return Ok(s.clone());
        }
        let stmt = self.prepare_raw(&placeholders(sql))?;
        self.prepared
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    fn prepare_raw(&self, sql: &str) -> Result<postgres::Statement> {
        Ok(self.client.borrow_mut().prepare(sql)?)
    }

    fn query(
        &self,
        stmt: &postgres::Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>> {
        Ok(self.client.borrow_mut().query(stmt, params)?)
    }

    pub(super) fn batch_execute(&self, sql: &str) -> Result<()> {
        self.ensure_connected()?;
        Ok(self.client.borrow_mut().batch_execute(sql)?)
    }

    pub(super) fn execute_values(
        &self,
        stmt: &postgres::Statement,
        values: &[Value],
    ) -> Result<u64> {
        let args: Vec<Arg<'_>> = values.iter().map(Arg).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as _).collect();
        Ok(self.client.borrow_mut().execute(stmt, &refs)?)
    }

    pub(super) fn query_values(
        &self,
        stmt: &postgres::Statement,
        values: &[Value],
    ) -> Result<Vec<postgres::Row>> {
        let args: Vec<Arg<'_>> = values.iter().map(Arg).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as _).collect();
        self.query(stmt, &refs)
    }
}

/// `sql` with SQLite's parameters (`?N`, and `?` for the next number) written as
/// Postgres's (`$N`); quoted text and names are left alone.
pub(super) fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    let mut highest = 0u32;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = if digits.is_empty() {
                    highest + 1
                } else {
                    digits.parse().unwrap_or(0)
                };
                highest = highest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
            }
            (None, c) => out.push(c),
        }
    }
    out
}

/// A [`Value`] bound as the server typed its parameter (SQLite stores any value in any
/// column; Postgres asks for the column's type).
#[derive(Debug)]
struct Arg<'a>(&'a Value);

impl ToSql for Arg<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let mismatch = || -> Box<dyn std::error::Error + Sync + Send> {
            format!("{:?} cannot be bound to a parameter of type {ty}", self.0).into()
        };
        match (self.0, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Integer(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Integer(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Integer(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Integer(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Integer(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Integer(i), &Type::FLOAT4) => (*i as f32).to_sql(ty, out),
            (Value::Integer(i), &Type::TEXT | &Type::VARCHAR) => i.to_string().to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Real(f), &Type::INT8) if f.fract() == 0.0 => (*f as i64).to_sql(ty, out),
            (Value::Real(f), &Type::TEXT | &Type::VARCHAR) => f.to_string().to_sql(ty, out),
            (Value::Text(s), &Type::TEXT | &Type::VARCHAR | &Type::BPCHAR | &Type::NAME) => {
                s.as_str().to_sql(ty, out)
            }
            (Value::Text(s), &Type::JSON | &Type::JSONB) => {
                if *ty == Type::JSONB {
                    out.extend_from_slice(&[1]);
                }
                out.extend_from_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(s), &Type::INT8) => s.parse::<i64>()?.to_sql(ty, out),
            (Value::Blob(b), &Type::BYTEA) => b.as_slice().to_sql(ty, out),
            (Value::Blob(b), t) if t.name() == "vector" => {
                let v = super::blob_to_vec(b).ok_or_else(mismatch)?;
                pgvector::Vector::from(v).to_sql(ty, out)
            }
            _ => Err(mismatch()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_parameters_become_numbered_ones_outside_quotes() {
        assert_eq!(
            placeholders("SELECT ?1, ?2, '?' , \"a?\" FROM t WHERE a = ?1 AND b = ?"),
            "SELECT $1, $2, '?' , \"a?\" FROM t WHERE a = $1 AND b = $3"
        );
        assert_eq!(
            placeholders("a IN (?, ?) LIMIT ?"),
            "a IN ($1, $2) LIMIT $3"
        );
    }

    #[test]
    fn a_pgpass_line_matches_with_wildcards_and_escapes() {
        let text = "# comment\nother:5432:*:somna:no\n*:55432:somna:somna:pa\\:ss\n";
        assert_eq!(
            pgpass_lookup(text, &["127.0.0.1", "55432", "somna", "somna"]).as_deref(),
            Some("pa:ss")
        );
        assert_eq!(pgpass_lookup(text, &["h", "1", "d", "u"]), None);
    }
}
