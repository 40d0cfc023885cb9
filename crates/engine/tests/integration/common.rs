//! Shared helpers: temporary stores opened with the real model or the hashing embedder,
//! message builders, a sample two-speaker conversation, and store snapshots.

use somna_engine::embed::{BertEmbedder, Embedder, HashEmbedder, ModelDir};
use somna_engine::{paths, AddOptions, Config, Job, Message, Result, Somna};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tempfile::TempDir;

/// The installed all-MiniLM-L6-v2, loaded once per test binary and shared by every test
/// that needs real semantics (loading it costs a 90 MB read and a hash check).
pub fn bert() -> Arc<BertEmbedder> {
    static BERT: OnceLock<Arc<BertEmbedder>> = OnceLock::new();
    BERT.get_or_init(|| {
        let dir = paths::model_dir();
        match BertEmbedder::load(&ModelDir(dir.clone())) {
            Ok(e) => Arc::new(e),
            Err(e) => panic!(
                "the real model is needed at {} (SOMNA_MODEL_DIR overrides): {e}",
                dir.display()
            ),
        }
    })
    .clone()
}

/// An engine on a fresh store in its own temporary directory. `engine` is declared first
/// so it is dropped (and saves its index) before the directory is removed.
pub struct Fixture {
    pub engine: Somna,
    pub cfg: Config,
    pub dir: TempDir,
}

impl Fixture {
    /// A store whose embeddings come from the real model.
    pub fn real() -> Self {
        Self::with(bert())
    }

    /// A store with the fast, non-semantic hashing embedder (384 dimensions).
    pub fn hash() -> Self {
        Self::with(Arc::new(HashEmbedder::new(384)))
    }

    /// A Postgres store (a fresh schema of the test database) with the hashing embedder,
    /// whatever the backend under test; its local caches under the data directory.
    pub fn postgres_hash() -> Self {
        let dir = tempdir();
        let cfg = Config::new(PathBuf::from(postgres_store_url()), paths::model_dir());
        Self::open(dir, cfg, Arc::new(HashEmbedder::new(384)))
    }

    /// A SQLite store with the hashing embedder whatever the backend under test: for
    /// tests of the files beside a SQLite store (its index, its WAL).
    pub fn sqlite_hash() -> Self {
        let dir = tempdir();
        let cfg = sqlite_config(&dir);
        Self::open(dir, cfg, Arc::new(HashEmbedder::new(384)))
    }

    fn with(embedder: Arc<dyn Embedder>) -> Self {
        let dir = tempdir();
        let cfg = config(&dir);
        Self::open(dir, cfg, embedder)
    }

    fn open(dir: TempDir, cfg: Config, embedder: Arc<dyn Embedder>) -> Self {
        let engine = Somna::open_with(&cfg, embedder, &Job::default()).expect("open the store");
        Self { engine, cfg, dir }
    }

    /// Store counts, for asserting that a refused operation wrote nothing.
    pub fn snapshot(&self) -> Snapshot {
        snapshot(&self.engine)
    }
}

pub fn tempdir() -> TempDir {
    tempfile::tempdir().expect("create a temporary directory")
}

/// A config for a fresh store with the installed model's directory: `<dir>/somna.db`, or
/// with `SOMNA_TEST_BACKEND=postgres` a fresh store in the test Postgres (see
/// [`postgres_store_url`]). The whole suite runs once per backend (`scripts/test.sh`).
pub fn config(dir: &TempDir) -> Config {
    match backend() {
        Backend::Sqlite => sqlite_config(dir),
        // One store per directory, as a file would be: the schema is named after it.
        Backend::Postgres => Config::new(
            PathBuf::from(postgres_schema_url(&schema_for(dir.path()))),
            paths::model_dir(),
        ),
    }
}

/// The test schema of a temporary directory: `t_<process>_<hash of its path>`.
fn schema_for(dir: &std::path::Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut h);
    format!(
        "t_{}_{}",
        std::process::id(),
        h.finish() % 1_000_000_000_000
    )
}

/// A config for `<dir>/somna.db`, whatever the backend under test: for tests of what only
/// a SQLite file has (its bytes, its WAL, its sidecar files).
pub fn sqlite_config(dir: &TempDir) -> Config {
    Config::new(dir.path().join("somna.db"), paths::model_dir())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The backend this run tests: `SOMNA_TEST_BACKEND` (`sqlite`, the default, or
/// `postgres`).
pub fn backend() -> Backend {
    match std::env::var("SOMNA_TEST_BACKEND").as_deref() {
        Ok("postgres") => Backend::Postgres,
        Ok("sqlite") | Err(_) => Backend::Sqlite,
        Ok(other) => panic!("SOMNA_TEST_BACKEND is sqlite or postgres, not {other:?}"),
    }
}

/// The test Postgres: `SOMNA_TEST_PG_URL`. Tests that need it fail without it; they never
/// skip.
pub fn postgres_server_url() -> String {
    std::env::var("SOMNA_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "SOMNA_TEST_PG_URL is not set: this test needs a Postgres with pgvector. \
             Start one with `scripts/pg.sh start` and export SOMNA_TEST_PG_URL=\"$(scripts/pg.sh url)\""
        )
    })
}

/// The URL of a fresh, empty store in the test Postgres: a new schema of its database.
/// The schemas are named by process and time, so runs never meet (`scripts/pg.sh clean`
/// drops them).
pub fn postgres_store_url() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    postgres_schema_url(&format!(
        "t_{}_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The URL of the store in schema `schema` of the test database, created if missing.
pub fn postgres_schema_url(schema: &str) -> String {
    somna_engine::store::schema_store_url(&postgres_server_url(), schema, false)
        .unwrap_or_else(|e| panic!("cannot make the test schema at SOMNA_TEST_PG_URL: {e}"))
}

pub fn open_hash(cfg: &Config) -> Somna {
    Somna::open_with(cfg, Arc::new(HashEmbedder::new(384)), &Job::default())
        .expect("open the store")
}

/// `<db>.index/`, where the vector index is persisted.
pub fn index_dir(cfg: &Config) -> PathBuf {
    let mut name = cfg
        .db_path
        .file_name()
        .expect("db file name")
        .to_os_string();
    name.push(".index");
    cfg.db_path.with_file_name(name)
}

/// Adding without extracting facts (episodes only).
pub fn no_facts() -> AddOptions {
    AddOptions {
        extract_facts: false,
        ..Default::default()
    }
}

pub fn msg(speaker: &str, text: &str) -> Message {
    Message {
        role: "user".into(),
        speaker: Some(speaker.into()),
        text: text.into(),
        session: None,
        occurred_at: None,
        external_id: None,
        metadata: serde_json::Value::Null,
    }
}

pub fn msg_at(speaker: &str, text: &str, session: &str, occurred_at: i64) -> Message {
    Message {
        session: Some(session.into()),
        occurred_at: Some(occurred_at),
        ..msg(speaker, text)
    }
}

/// Unix milliseconds of a UTC date and time.
pub fn ts(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    chrono::NaiveDate::from_ymd_opt(y, mo, d)
        .and_then(|date| date.and_hms_opt(h, mi, 0))
        .expect("valid date")
        .and_utc()
        .timestamp_millis()
}

/// The code of an expected error (panics, showing the value, on success).
pub fn err_code<T: std::fmt::Debug>(r: Result<T>) -> &'static str {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e.code(),
    }
}

/// Row counts of every table a write touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub memories: i64,
    pub messages: i64,
    pub links: i64,
    pub history: i64,
}

pub fn snapshot(engine: &Somna) -> Snapshot {
    engine
        .with_store(|s| {
            let count = |table: &str| -> Result<i64> {
                s.conn()
                    .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            };
            Ok(Snapshot {
                memories: count("memories")?,
                messages: count("messages")?,
                links: count("links")?,
                history: count("history")?,
            })
        })
        .expect("count rows")
}

/// Memories that are not deleted and have an embedding: what the vector index must hold.
pub fn embedded_live_memories(engine: &Somna) -> usize {
    engine
        .with_store(|s| {
            let conn = s.conn();
            conn.query_row(
                conn.pick(
                    "SELECT COUNT(*) FROM memories WHERE embedding IS NOT NULL AND deleted_at IS NULL",
                    "SELECT COUNT(*) FROM memories m JOIN memory_vectors v ON v.id = m.id
                     WHERE m.deleted_at IS NULL",
                ),
                [],
                |r| r.get::<i64>(0),
            )
        })
        .expect("count embedded memories") as usize
}

pub const CONVERSATION: &str = "alice-bob";

/// The turns of the sample conversation, by purpose; indices into [`sample_conversation`].
pub mod turn {
    pub const PUPPY: usize = 0;
    pub const PUPPY_AGAIN: usize = 2;
    pub const PASTRY_CHEF: usize = 3;
    pub const DOLOMITES: usize = 4;
    pub const PARSE_CONFIG: usize = 6;
    pub const VIOLIN: usize = 9;
    pub const LISBON: usize = 10;
    pub const BIRTHDAY: usize = 11;
}

/// Two speakers, twelve turns in two dated sessions, one file path, two first-person
/// statements that become facts, and two near-duplicate turns about the same puppy.
pub fn sample_conversation() -> Vec<Message> {
    let s1 = |h, mi| ts(2023, 5, 3, h, mi);
    let s2 = |h, mi| ts(2023, 6, 20, h, mi);
    vec![
        msg_at("Alice", "Hi Bob! I finally adopted a golden retriever puppy named Max last weekend.", "s1", s1(18, 0)),
        msg_at("Bob", "Congratulations! How is the little guy settling in at home?", "s1", s1(18, 2)),
        msg_at("Alice", "Max, my golden retriever puppy, chews everything but he is already house-trained.", "s1", s1(18, 4)),
        msg_at("Bob", "I work as a pastry chef at a bakery downtown, so I will bake him some dog biscuits.", "s1", s1(18, 6)),
        msg_at("Alice", "My sister and I are planning a hiking trip to the Dolomites in July.", "s1", s1(18, 9)),
        msg_at("Bob", "Book the mountain huts early, they fill up fast in summer.", "s1", s1(18, 11)),
        msg_at("Alice", "The deploy failed again: parse_config rejects empty values in /etc/somna/config.toml.", "s2", s2(9, 30)),
        msg_at("Bob", "Did you check the logs? The error message usually names the bad key.", "s2", s2(9, 32)),
        msg_at("Alice", "Yes, adding a default for the timeout key fixed it.", "s2", s2(9, 35)),
        msg_at("Bob", "Unrelated, but my daughter started violin lessons and practises every evening.", "s2", s2(9, 40)),
        msg_at("Alice", "I live in Lisbon, so I take the tram to the office every morning.", "s2", s2(9, 42)),
        msg_at("Bob", "Let's celebrate your birthday on the 14th of July at the Italian restaurant by the river.", "s2", s2(9, 45)),
    ]
}
