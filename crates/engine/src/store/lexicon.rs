//! FTS5's BM25, ranked in memory: the lexical search of a large SQLite store without
//! FTS5's cost per match.
//!
//! FTS5 scores every document that holds a query word through its auxiliary-function
//! API, about a microsecond each: at 100,000 memories a query's 5,000 matches took 5–6 ms
//! to rank, at 1,000,000 its 49,000 took 74–77 ms (README, "Speed"). Finding them took a
//! tenth of that. So a large store keeps a copy of the index in memory, an [`Index`]: each
//! term's documents with the term's weighted frequency in each, and each document's BM25
//! length normalisation. It is read from FTS5's own tables (the `instance` vocabulary and
//! the `docsize` table), so its terms are the ones FTS5 made, and a query's words are
//! turned into terms by FTS5's own tokenizer (`somna-fts5`). [`Index::rank`] computes
//! FTS5's `bm25()` with the table's column weights, the same operations word by word in
//! the query's order, so its scores are FTS5's and the ranking the same (the tests hold
//! the two equal to 1e-9). Stores of fewer than [`LEXICON_FROM_ROWS`] memories, in-memory stores and
//! Postgres rank as before.
//!
//! The copy is used only while it is exact. It carries the FTS5 structure record it was
//! read with (a row FTS5 rewrites on every change to the index); a search reads the
//! record in its own snapshot and ranks in memory only if the two are the same. Otherwise
//! it ranks with FTS5, as before, and wakes the thread that reads the copy again, which
//! does so no more often than a few times its own reading time (so a store being written
//! to all the time spends at most a fifth of a core on it).

use crate::{Error, Result};
use rusqlite::Connection;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Stores with at least this many memories rank in memory; below it FTS5's own ranking
/// costs well under a millisecond.
pub(super) const LEXICON_FROM_ROWS: i64 = 20_000;

/// `memories_fts`'s tokenizer, as its `tokenize` option declares it.
pub(super) const TOKENIZER: &[&str] = &["porter", "unicode61", "remove_diacritics", "2"];

/// BM25's weight of each of `memories_fts`'s columns, by name, as the lexical search passes
/// them to `bm25()`: text; who (0: the actor signal covers it); what (a copy of the text);
/// when, where, why, how.
fn column_weight(column: &str) -> Option<f64> {
    Some(match column {
        "text" => 1.0,
        "who" | "what" => 0.0,
        "when" | "where" | "why" | "how" => 0.5,
        _ => return None,
    })
}

/// The rowid of FTS5's structure record in `memories_fts_data`: rewritten by every
/// change to the index (each commit adds a segment to it).
const STRUCTURE_ROWID: i64 = 10;

/// The version of `memories_fts` that a read in `conn`'s current snapshot sees.
pub(super) fn version(conn: &Connection) -> Result<Vec<u8>> {
    let mut stmt = conn.prepare_cached("SELECT block FROM memories_fts_data WHERE id = ?1")?;
    let mut rows = stmt.query([STRUCTURE_ROWID])?;
    Ok(match rows.next()? {
        Some(row) => row.get(0)?,
        None => Vec::new(),
    })
}

/// One document holding a term: its rowid and the term's weighted frequency in it (the
/// sum over its occurrences of their column's weight).
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    freq: f32,
}

/// `memories_fts` in memory, as one version of it had it (see the module comment).
pub(super) struct Index {
    version: Vec<u8>,
    /// Each term's documents, by rowid.
    terms: HashMap<Box<str>, Box<[Posting]>>,
    /// Each rowid's BM25 length normalisation, `k1 · (1 − b + b · length / avgdl)` with
    /// its length in tokens over all columns (for a rowid not in the index, a length of 0).
    norms: Vec<f64>,
    rows: i64,
}

// FTS5's constants, and its arithmetic in its order (fts5_aux.c).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Why a reading of the index stopped.
enum Unread {
    /// The store is closing.
    Cancelled,
    /// A rowid beyond the in-memory layout (past `u32`), or a column FTS5 does not have
    /// here: this store ranks with FTS5.
    Unsupported,
}

impl Index {
    /// Reads `memories_fts` through `conn` in one snapshot.
    fn read(conn: &Connection, closing: &AtomicBool) -> Result<std::result::Result<Self, Unread>> {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.somna_fts_instance
                 USING fts5vocab(main, memories_fts, instance)",
        )?;
        let snapshot = conn.unchecked_transaction()?;
        let version = version(conn)?;
        let mut lengths: Vec<u32> = Vec::new();
        let (mut rows, mut tokens) = (0i64, 0u64);
        {
            let mut stmt = conn.prepare("SELECT id, sz FROM memories_fts_docsize")?;
            let mut cursor = stmt.query([])?;
            while let Some(row) = cursor.next()? {
                let Ok(id) = u32::try_from(row.get::<_, i64>(0)?) else {
                    return Ok(Err(Unread::Unsupported));
                };
                let id = id as usize;
                let length = varints_sum(row.get_ref(1)?.as_blob().unwrap_or_default());
                if lengths.len() <= id {
                    lengths.resize(id + 1, 0);
                }
                lengths[id] = length;
                rows += 1;
                tokens += u64::from(length);
            }
        }
        let mut terms: HashMap<Box<str>, Box<[Posting]>> = HashMap::new();
        {
            // In term order, and within a term in rowid order: one posting a (term, doc).
            let mut stmt = conn.prepare("SELECT term, doc, col FROM temp.somna_fts_instance")?;
            let mut cursor = stmt.query([])?;
            let mut term = String::new();
            let mut postings: Vec<Posting> = Vec::new();
            let mut seen = 0u64;
            while let Some(row) = cursor.next()? {
                seen += 1;
                if seen.is_multiple_of(1 << 16) && closing.load(Ordering::Relaxed) {
                    return Ok(Err(Unread::Cancelled));
                }
                let this = row.get_ref(0)?.as_str().unwrap_or_default();
                if this != term {
                    if !postings.is_empty() {
                        terms.insert(term.as_str().into(), std::mem::take(&mut postings).into());
                    }
                    term.clear();
                    term.push_str(this);
                }
                let Ok(doc) = u32::try_from(row.get::<_, i64>(1)?) else {
                    return Ok(Err(Unread::Unsupported));
                };
                let Some(weight) = column_weight(row.get_ref(2)?.as_str().unwrap_or_default())
                else {
                    return Ok(Err(Unread::Unsupported));
                };
                match postings.last_mut() {
                    Some(p) if p.doc == doc => p.freq += weight as f32,
                    _ => postings.push(Posting {
                        doc,
                        freq: weight as f32,
                    }),
                }
            }
            if !postings.is_empty() {
                terms.insert(term.as_str().into(), postings.into());
            }
        }
        snapshot.rollback()?;
        let avgdl = tokens as f64 / rows.max(1) as f64;
        let norms = lengths
            .into_iter()
            .map(|d| K1 * (1.0 - B + B * f64::from(d) / avgdl))
            .collect();
        Ok(Ok(Self {
            version,
            terms,
            norms,
            rows,
        }))
    }

    /// How many documents hold `term` (FTS5's count of a one-term phrase's matches).
    pub(super) fn documents(&self, term: &str) -> i64 {
        self.terms.get(term).map_or(0, |p| p.len() as i64)
    }

    /// The documents matching any of `phrases` (one term each, a query word as FTS5's
    /// tokenizer made it) by FTS5's `bm25()` of them with the columns' weights, best first
    /// (ties by rowid), at most `limit`: what `ORDER BY -bm25(...) DESC LIMIT` returns.
    ///
    /// Document at a time: the terms' lists (each in rowid order) are walked together, so
    /// each document's score is summed at once, term by term in the query's order (FTS5's
    /// order, so the same sum), and kept only if it is among the best `limit`.
    /// The lists and the normalisations are read front to back, once: adding scores term by
    /// term in a hash map instead took 3.0 ms at p50 and 7.0 at p99 at a million memories
    /// (where a query's words are in a few hundred thousand of them), against 2.5 and 4.1
    /// (README, "BM25 in memory").
    pub(super) fn rank(&self, phrases: &[String], limit: usize) -> Vec<(i64, f64)> {
        if limit == 0 {
            return Vec::new();
        }
        let n = self.rows as f64;
        let lists: Vec<(&[Posting], f64)> = phrases
            .iter()
            .map(|term| {
                let postings = self.terms.get(term.as_str()).map_or(&[][..], |p| &p[..]);
                let hits = postings.len() as f64;
                let idf = ((n - hits + 0.5) / (hits + 0.5)).ln();
                (postings, if idf <= 0.0 { 1e-6 } else { idf })
            })
            .collect();
        let mut at = vec![0usize; lists.len()];
        let mut best: BinaryHeap<Worst> = BinaryHeap::with_capacity(limit + 1);
        loop {
            let next = lists
                .iter()
                .zip(&at)
                .filter_map(|((postings, _), &i)| postings.get(i).map(|p| p.doc))
                .min();
            let Some(doc) = next else { break };
            let norm = self
                .norms
                .get(doc as usize)
                .copied()
                .unwrap_or(K1 * (1.0 - B));
            let mut score = 0.0;
            for ((postings, idf), i) in lists.iter().zip(at.iter_mut()) {
                if let Some(p) = postings.get(*i).filter(|p| p.doc == doc) {
                    let f = f64::from(p.freq);
                    score += idf * ((f * (K1 + 1.0)) / (f + norm));
                    *i += 1;
                }
            }
            let this = Worst(score, doc);
            if best.len() < limit {
                best.push(this);
            } else if best.peek().is_some_and(|worst| this < *worst) {
                best.pop();
                best.push(this);
            }
        }
        // Ascending in `Worst`'s order is best first.
        best.into_sorted_vec()
            .into_iter()
            .map(|Worst(s, doc)| (i64::from(doc), s))
            .collect()
    }
}

/// A ranked document, ordered so that the greatest is the worst: the lowest score, and
/// of equal scores the highest rowid (the top of a heap of the best is the one to drop).
#[derive(Debug, Clone, Copy)]
struct Worst(f64, u32);

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Worst {}

/// The sum of a `docsize` blob's varints (one token count a column; SQLite's varint, as
/// FTS5 writes it).
fn varints_sum(blob: &[u8]) -> u32 {
    let mut sum = 0u32;
    let mut value = 0u32;
    let mut len = 0;
    for &byte in blob {
        len += 1;
        if len == 9 {
            // The ninth byte of a varint holds eight bits; no token count gets there.
            value = (value << 8) | u32::from(byte);
        } else {
            value = (value << 7) | u32::from(byte & 0x7f);
            if byte & 0x80 != 0 {
                continue;
            }
        }
        sum = sum.saturating_add(value);
        value = 0;
        len = 0;
    }
    sum
}

/// What the store and its reading thread share.
#[derive(Default)]
struct Shared {
    index: RwLock<Option<Arc<Index>>>,
    closing: AtomicBool,
    /// Counts the readings finished, for [`Lexicon::wait_fresh`].
    readings: Mutex<u64>,
    read: Condvar,
}

/// One store file's in-memory index and the thread that reads it (started by the first
/// search that finds it missing or stale).
pub(super) struct Lexicon {
    db: PathBuf,
    shared: Arc<Shared>,
    thread: Mutex<Option<(SyncSender<()>, JoinHandle<()>)>>,
}

impl Lexicon {
    pub(super) fn new(db: &Path) -> Self {
        Self {
            db: db.to_path_buf(),
            shared: Arc::default(),
            thread: Mutex::new(None),
        }
    }

    /// The index if it is the version `version` (read in the caller's snapshot); if not,
    /// wakes the reading thread and answers `None`.
    pub(super) fn fresh(&self, version: &[u8]) -> Option<Arc<Index>> {
        let index = self.current();
        if let Some(index) = index.filter(|i| i.version == version) {
            return Some(index);
        }
        self.wake();
        None
    }

    fn current(&self) -> Option<Arc<Index>> {
        self.shared
            .index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Asks the thread to read the index again (starting it if need be). A wake-up
    /// already pending is enough.
    pub(super) fn wake(&self) {
        let mut thread = self
            .thread
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if thread.is_none() {
            let (wake, woken) = mpsc::sync_channel(1);
            let (db, shared) = (self.db.clone(), self.shared.clone());
            match std::thread::Builder::new()
                .name("somna-lexicon".into())
                .spawn(move || run(&db, &shared, &woken))
            {
                Ok(handle) => *thread = Some((wake, handle)),
                // No thread: the store goes on ranking with FTS5.
                Err(_) => return,
            }
        }
        if let Some((wake, _)) = thread.as_ref() {
            let _ = wake.try_send(());
        }
    }

    /// Waits up to `timeout` for an index of version `version` (for benches and tests
    /// that measure the steady state): whether it came.
    pub(super) fn wait_fresh(&self, version: &[u8], timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut readings = self
            .shared
            .readings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            if self.fresh(version).is_some() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let seen = *readings;
            let (guard, _) = self
                .shared
                .read
                .wait_timeout_while(readings, left, |r| *r == seen)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            readings = guard;
        }
    }
}

impl Drop for Lexicon {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::Relaxed);
        let thread = self
            .thread
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some((wake, handle)) = thread {
            // Closing the channel ends the loop; a reading under way stops at its next check.
            drop(wake);
            let _ = handle.join();
        }
    }
}

/// A reading is followed by a pause of this many times its length before the next.
const PAUSE_FACTOR: u32 = 4;

/// Reads the index each time it is woken and finds it stale, until the store closes.
fn run(db: &Path, shared: &Shared, woken: &Receiver<()>) {
    let Ok(conn) = open(db) else { return };
    while woken.recv().is_ok() {
        let current = shared
            .index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let stale = match version(&conn) {
            Ok(v) => current.is_none_or(|i| i.version != v),
            Err(_) => false,
        };
        let started = Instant::now();
        if stale {
            match Index::read(&conn, &shared.closing) {
                Ok(Ok(index)) => {
                    *shared
                        .index
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(index));
                }
                Ok(Err(Unread::Cancelled)) => return,
                // This store ranks with FTS5 (an error reading is the disk's or a lock's:
                // the next search's wake-up tries again).
                Ok(Err(Unread::Unsupported)) => return,
                Err(_) => {}
            }
        }
        {
            let mut readings = shared
                .readings
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *readings += 1;
            shared.read.notify_all();
        }
        if stale {
            let pause = started.elapsed() * PAUSE_FACTOR;
            let until = Instant::now() + pause;
            while !shared.closing.load(Ordering::Relaxed) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20).min(pause));
            }
        }
    }
}

/// The reading thread's own connection to the store file.
fn open(db: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::Internal(format!("opening {} to read its index: {e}", db.display())))?;
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Kind, NewMemory};
    use crate::store::{Db, MemoryFilter, Store, Tx};

    /// Words with their inflections (stemmed alike), names, diacritics and a few common
    /// words, so that matches span every column and every document frequency.
    const WORDS: &[&str] = &[
        "run",
        "running",
        "runs",
        "garden",
        "gardens",
        "gardening",
        "café",
        "cafe",
        "Müller",
        "naïve",
        "Kafka",
        "kafka's",
        "paint",
        "painted",
        "painting",
        "trip",
        "trips",
        "hiking",
        "hike",
        "Paris",
        "Tokyo",
        "東京",
        "dog",
        "dogs",
        "guitar",
        "concert",
        "concerts",
        "the",
        "and",
        "today",
        "yesterday",
        "May",
        "2023",
        "book",
        "books",
        "reading",
    ];

    /// `words` words: a quarter from [`WORDS`], the rest made-up words `zq0`, `zq1`, …
    /// of skewed frequency (so that query words range from rare to common).
    fn text(seed: &mut u64, words: usize) -> String {
        let mut next = || {
            // xorshift: reproducible, no dependency.
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        (0..words)
            .map(|_| {
                let r = next();
                if r % 4 == 0 {
                    WORDS[((r >> 8) % WORDS.len() as u64) as usize].to_string()
                } else {
                    format!("zq{}", (r >> 8) % 3000 * ((next() >> 8) % 3000) / 3000)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A file store of `n` memories, some with 5W1H fields.
    fn store(dir: &Path, n: usize) -> Store {
        let mut store = Store::open(&dir.join("s.db")).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        store
            .transaction(|tx| {
                for i in 0..n {
                    let mut m = NewMemory::new(Kind::Episode, text(&mut seed, 3 + i % 17));
                    if i % 3 == 0 {
                        m.w5h1.who = Some(text(&mut seed, 1));
                        m.w5h1.what = Some(m.text.clone());
                        m.w5h1.when = Some(text(&mut seed, 2));
                    }
                    if i % 5 == 0 {
                        m.w5h1.where_ = Some(text(&mut seed, 1));
                        m.w5h1.how = Some(text(&mut seed, 3));
                    }
                    tx.insert_memory(&m, 1.0, 0)?;
                }
                Ok(())
            })
            .unwrap();
        store
    }

    const QUERIES: &[&str] = &[
        "running in the garden",
        "Cafe Müller naive",
        "kafka concert tickets",
        "painted books",
        "東京 trip",
        "the and",
        "hiking in Paris in May 2023",
        "zebra",
        "dogs dog",
        "zq1 zq2 garden",
        "zq17 zq2000 running café",
        "zq0 zq0 zq5",
        "zq2999",
    ];

    /// FTS5's own ranking of `query`: the store's search with no index in memory (and
    /// `lexical_search_fts5`, which benches compare with, gives the same).
    fn by_fts5(store: &Store, query: &str, limit: usize) -> Vec<(i64, f64)> {
        let Db::Sqlite(conn) = store.read().db else {
            unreachable!("a SQLite store")
        };
        let tx = Tx {
            db: Db::Sqlite(conn),
            pending: None,
            lexicon: None,
        };
        let plain = tx
            .lexical_search(query, &MemoryFilter::default(), limit)
            .unwrap();
        let fts5 = store
            .read()
            .lexical_search_fts5(query, &MemoryFilter::default(), limit)
            .unwrap();
        assert_eq!(plain, fts5, "{query}");
        plain
    }

    /// Scores equal to FTS5's to rounding, and the same documents wherever the scores
    /// tell them apart (FTS5 breaks ties in its own order).
    fn assert_same(ours: &[(i64, f64)], fts5: &[(i64, f64)], query: &str) {
        assert_eq!(ours.len(), fts5.len(), "{query}: how many");
        for (i, (a, b)) in ours.iter().zip(fts5).enumerate() {
            assert!(
                (a.1 - b.1).abs() <= 1e-9 * b.1.abs().max(1.0),
                "{query}: score {i} {} vs FTS5's {}",
                a.1,
                b.1
            );
        }
        let tied =
            |list: &[(i64, f64)], s: f64| list.iter().filter(|h| (h.1 - s).abs() < 1e-9).count();
        for (a, b) in ours.iter().zip(fts5) {
            if tied(fts5, b.1) == 1 && tied(ours, a.1) == 1 {
                assert_eq!(a.0, b.0, "{query}: a document scored {}", b.1);
            }
        }
    }

    #[test]
    fn ranks_as_fts5_ranks_and_only_while_the_index_is_that_version() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path(), LEXICON_FROM_ROWS as usize + 500);
        assert!(store.wait_lexical(Duration::from_secs(120)).unwrap());
        for limit in [10, 150, 100_000] {
            for q in QUERIES {
                let ours = store
                    .read()
                    .lexical_search(q, &MemoryFilter::default(), limit)
                    .unwrap();
                assert_same(&ours, &by_fts5(&store, q, limit), q);
            }
        }
        // The in-memory ranking is what answered: a read of this version has it.
        let Db::Sqlite(conn) = store.read().db else {
            unreachable!()
        };
        let v = version(conn).unwrap();
        let lexicon = store.lexicon.clone().unwrap();
        assert!(lexicon.fresh(&v).is_some());

        // Each kind of write gives the index a new version; until it is read again the
        // search is FTS5's and finds what was written.
        let mut seen = vec![v];
        let new = store
            .transaction(|tx| {
                tx.insert_memory(&NewMemory::new(Kind::Episode, "zebra crossing"), 1.0, 0)
            })
            .unwrap();
        let version_now = |store: &Store| {
            let Db::Sqlite(conn) = store.read().db else {
                unreachable!()
            };
            version(conn).unwrap()
        };
        let v = version_now(&store);
        assert!(!seen.contains(&v), "an insert kept the version");
        seen.push(v.clone());
        assert!(lexicon.fresh(&v).is_none() || lexicon.current().is_some_and(|i| i.version == v));
        let hits = store
            .read()
            .lexical_search("zebra", &MemoryFilter::default(), 10)
            .unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [new]);
        assert!(store.wait_lexical(Duration::from_secs(120)).unwrap());
        let hits = store
            .read()
            .lexical_search("zebra", &MemoryFilter::default(), 10)
            .unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [new]);

        store
            .transaction(|tx| {
                let mut m = tx.get_memory(new)?.unwrap();
                m.text = "okapi crossing".into();
                tx.write_memory_fields(&m, 0)
            })
            .unwrap();
        let v = version_now(&store);
        assert!(!seen.contains(&v), "an update kept the version");
        seen.push(v);
        assert!(store
            .read()
            .lexical_search("zebra", &MemoryFilter::default(), 10)
            .unwrap()
            .is_empty());
        assert!(store.wait_lexical(Duration::from_secs(120)).unwrap());
        assert!(store
            .read()
            .lexical_search("zebra", &MemoryFilter::default(), 10)
            .unwrap()
            .is_empty());
        assert_eq!(
            store
                .read()
                .lexical_search("okapi", &MemoryFilter::default(), 10)
                .unwrap()
                .len(),
            1
        );
        for q in QUERIES {
            let ours = store
                .read()
                .lexical_search(q, &MemoryFilter::default(), 150)
                .unwrap();
            assert_same(&ours, &by_fts5(&store, q, 150), q);
        }

        store.transaction(|tx| tx.hard_delete(new)).unwrap();
        let v = version_now(&store);
        assert!(!seen.contains(&v), "a delete kept the version");
        assert!(store
            .read()
            .lexical_search("okapi", &MemoryFilter::default(), 10)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_small_or_in_memory_store_ranks_with_fts5() {
        let store = Store::open_in_memory().unwrap();
        assert!(store.lexicon.is_none());
        assert!(!store.wait_lexical(Duration::from_secs(1)).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let small = self::store(dir.path(), 100);
        assert!(!small.wait_lexical(Duration::from_secs(1)).unwrap());
    }

    #[test]
    fn docsize_varints_sum_to_the_row_length() {
        assert_eq!(varints_sum(&[3, 0, 0, 5, 1, 0, 2]), 11);
        // 200 = 0x81 0x48 in SQLite's varint.
        assert_eq!(varints_sum(&[0x81, 0x48, 1]), 201);
        assert_eq!(varints_sum(&[]), 0);
    }
}
