//! Shared helpers: temporary stores opened with the real model or the hashing embedder,
//! message builders, a sample two-speaker conversation, and store snapshots.

use somna_engine::embed::{BertEmbedder, Embedder, HashEmbedder, ModelDir};
use somna_engine::{paths, Config, Job, Message, Result, Somna};
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

    fn with(embedder: Arc<dyn Embedder>) -> Self {
        let dir = tempdir();
        let cfg = config(&dir);
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

/// A config for `<dir>/somna.db` with the installed model's directory.
pub fn config(dir: &TempDir) -> Config {
    Config::new(dir.path().join("somna.db"), paths::model_dir())
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
                Ok(s.conn()
                    .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?)
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
            Ok(s.conn().query_row(
                "SELECT COUNT(*) FROM memories WHERE embedding IS NOT NULL AND deleted_at IS NULL",
                [],
                |r| r.get::<_, i64>(0),
            )?)
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
