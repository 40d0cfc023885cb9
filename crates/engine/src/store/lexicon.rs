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
//! it ranks with FTS5, as before, and wakes the thread that keeps the copy.
//!
//! The thread (also woken by each commit through the store) catches the copy up with the
//! changes rather than reading it all again: the triggers that keep `memories_fts` log
//! each document they touch in `memories_fts_log` (the last 65,536 entries), and the
//! copy takes each changed document's length from FTS5's `docsize` and its terms from
//! FTS5's tokenizer over the columns the triggers index, beside the full reading
//! ([`Index::caught_up`]). It checks its work against FTS5: each document's token count
//! against `docsize`, the store's documents and tokens against FTS5's averages record.
//! Where a check fails, the log no longer reaches back, or more than a twentieth of the
//! store changed, the copy is read in full again, no more often than a few times its own
//! reading time (so a store being rewritten all the time spends at most a fifth of a core
//! on it).

use crate::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
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
    data_block(conn, STRUCTURE_ROWID)
}

/// A record of FTS5's `memories_fts_data` (empty if the table has none at `rowid`).
fn data_block(conn: &Connection, rowid: i64) -> Result<Vec<u8>> {
    let mut stmt = conn.prepare_cached("SELECT block FROM memories_fts_data WHERE id = ?1")?;
    Ok(stmt
        .query_row([rowid], |r| r.get(0))
        .optional()?
        .unwrap_or_default())
}

/// One document holding a term: its rowid and the term's weighted frequency in it (the
/// sum over its occurrences of their column's weight).
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    freq: f32,
}

/// A document's length where it has none: it is not in the index.
const ABSENT: u32 = u32::MAX;

/// What a full reading of `memories_fts` found: each term's documents by rowid, and each
/// rowid's length in tokens over all columns ([`ABSENT`] for a rowid not in the index).
struct Base {
    terms: HashMap<Box<str>, Box<[Posting]>>,
    lengths: Vec<u32>,
}

impl Base {
    fn length(&self, doc: u32) -> u32 {
        self.lengths.get(doc as usize).copied().unwrap_or(ABSENT)
    }
}

/// The documents changed since the [`Base`] was read (from `memories_fts_log`): a changed
/// document's postings and length in the base no longer count; those it has now are here.
#[derive(Clone, Default)]
struct Delta {
    /// A bit a rowid: changed since the base.
    changed: Vec<u64>,
    /// The changed documents, in rowid order.
    docs: Vec<u32>,
    /// The changed documents' postings now, each term's in rowid order.
    terms: HashMap<Box<str>, Vec<Posting>>,
    /// The changed documents in the index now, with their lengths and terms.
    present: HashMap<u32, (u32, Vec<Box<str>>)>,
}

impl Delta {
    fn is_changed(&self, doc: u32) -> bool {
        self.changed
            .get(doc as usize / 64)
            .is_some_and(|w| w >> (doc % 64) & 1 == 1)
    }

    fn mark(&mut self, doc: u32) {
        let word = doc as usize / 64;
        if self.changed.len() <= word {
            self.changed.resize(word + 1, 0);
        }
        self.changed[word] |= 1 << (doc % 64);
        if let Err(at) = self.docs.binary_search(&doc) {
            self.docs.insert(at, doc);
        }
    }

    /// Takes `doc`'s postings out (it changed again): its length, if it was present.
    fn remove(&mut self, doc: u32) -> Option<u32> {
        let (length, terms) = self.present.remove(&doc)?;
        for term in terms {
            if let Some(list) = self.terms.get_mut(&term) {
                if let Ok(at) = list.binary_search_by_key(&doc, |p| p.doc) {
                    list.remove(at);
                }
                if list.is_empty() {
                    self.terms.remove(&term);
                }
            }
        }
        Some(length)
    }

    fn insert(&mut self, doc: u32, length: u32, freqs: HashMap<String, f32>) {
        let mut terms = Vec::with_capacity(freqs.len());
        for (term, freq) in freqs {
            let term: Box<str> = term.into();
            let list = self.terms.entry(term.clone()).or_default();
            let at = list.partition_point(|p| p.doc < doc);
            list.insert(at, Posting { doc, freq });
            terms.push(term);
        }
        self.present.insert(doc, (length, terms));
    }
}

/// `memories_fts` in memory, as one version of it had it (see the module comment): a full
/// reading and the changes since.
pub(super) struct Index {
    version: Vec<u8>,
    /// The last entry of `memories_fts_log` it holds.
    logged: i64,
    base: Arc<Base>,
    delta: Delta,
    /// Documents in the index, and their tokens over all columns.
    rows: i64,
    tokens: u64,
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

/// The last entry of `memories_fts_log` (0 if it is empty).
fn last_logged(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(seq), 0) FROM memories_fts_log",
        [],
        |r| r.get(0),
    )?)
}

/// FTS5's own count of the documents in `memories_fts` and of their tokens over all
/// columns (its averages record, which every change keeps current).
fn totals(conn: &Connection) -> Result<(i64, u64)> {
    let values = varints(&data_block(conn, AVERAGES_ROWID)?);
    let documents = values.first().copied().unwrap_or(0);
    Ok((
        i64::try_from(documents).unwrap_or(i64::MAX),
        values.iter().skip(1).sum(),
    ))
}

/// FTS5's longest term (`FTS5_MAX_TOKEN_SIZE`): it cuts longer tokens to this many bytes.
const MAX_TOKEN_BYTES: usize = 32_768;

/// The rowid of FTS5's averages record in `memories_fts_data`.
const AVERAGES_ROWID: i64 = 1;

/// The most documents an index takes from the log before it is read in full again: past
/// this share of the store, a full reading is as cheap as walking the changes at each
/// search.
const DELTA_SHARE: f64 = 0.05;

impl Index {
    /// Reads `memories_fts` through `conn` in one snapshot.
    fn read(conn: &Connection, closing: &AtomicBool) -> Result<std::result::Result<Self, Unread>> {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.somna_fts_instance
                 USING fts5vocab(main, memories_fts, instance)",
        )?;
        let snapshot = conn.unchecked_transaction()?;
        let version = version(conn)?;
        let logged = last_logged(conn)?;
        let mut lengths: Vec<u32> = Vec::new();
        let (mut rows, mut tokens) = (0i64, 0u64);
        {
            let mut stmt = conn.prepare("SELECT id, sz FROM memories_fts_docsize")?;
            let mut cursor = stmt.query([])?;
            while let Some(row) = cursor.next()? {
                let Some(id) = u32::try_from(row.get::<_, i64>(0)?)
                    .ok()
                    .filter(|&id| id != ABSENT)
                else {
                    return Ok(Err(Unread::Unsupported));
                };
                let id = id as usize;
                let length = varints_sum(row.get_ref(1)?.as_blob().unwrap_or_default());
                if lengths.len() <= id {
                    lengths.resize(id + 1, ABSENT);
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
        Ok(Ok(Self {
            version,
            logged,
            base: Arc::new(Base { terms, lengths }),
            delta: Delta::default(),
            rows,
            tokens,
        }))
    }

    /// This index brought up to the version `conn` sees, from the documents
    /// `memories_fts_log` says changed since it was made: their lengths from FTS5's
    /// `docsize`, their terms by FTS5's own tokenizer over the columns the triggers index.
    /// `None` where that cannot be exact, and the index must be read in full: the log no
    /// longer reaches back to this index, too many documents changed, a document's tokens
    /// or the store's totals are not FTS5's.
    fn caught_up(&self, conn: &Connection) -> Result<Option<Self>> {
        let snapshot = conn.unchecked_transaction()?;
        let version = version(conn)?;
        let (first, last): (Option<i64>, Option<i64>) =
            conn.query_row("SELECT MIN(seq), MAX(seq) FROM memories_fts_log", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let (first, last) = (first.unwrap_or(0), last.unwrap_or(0));
        if last < self.logged || (last > self.logged && first > self.logged + 1) {
            return Ok(None);
        }
        let docs: Vec<i64> = conn
            .prepare("SELECT DISTINCT doc FROM memories_fts_log WHERE seq > ?1")?
            .query_map([self.logged], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if (self.delta.docs.len() + docs.len()) as f64 > DELTA_SHARE * self.rows.max(1) as f64 {
            return Ok(None);
        }
        let tokenizer = somna_fts5::Tokenizer::new(conn, TOKENIZER)?;
        let mut sizes = conn.prepare("SELECT sz FROM memories_fts_docsize WHERE id = ?1")?;
        let mut columns = conn.prepare(
            "SELECT text, who, what, \"when\", \"where\", why, how FROM memories WHERE id = ?1",
        )?;
        const COLUMNS: [&str; 7] = ["text", "who", "what", "when", "where", "why", "how"];
        let mut delta = self.delta.clone();
        let (mut rows, mut tokens) = (self.rows, self.tokens);
        for doc in docs {
            let Some(doc) = u32::try_from(doc).ok().filter(|&d| d != ABSENT) else {
                return Ok(None);
            };
            // What the document held: its earlier change's postings, or the base's.
            let before = if delta.is_changed(doc) {
                delta.remove(doc)
            } else {
                Some(self.base.length(doc)).filter(|&l| l != ABSENT)
            };
            if let Some(length) = before {
                rows -= 1;
                tokens -= u64::from(length);
            }
            delta.mark(doc);
            let size: Option<Vec<u8>> = sizes.query_row([doc], |r| r.get(0)).optional()?;
            let Some(size) = size else { continue };
            let texts: Option<[Option<String>; 7]> = columns
                .query_row([doc], |r| {
                    Ok([
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ])
                })
                .optional()?;
            let Some(texts) = texts else { return Ok(None) };
            let counts = varints(&size);
            let mut freqs: HashMap<String, f32> = HashMap::new();
            for (i, (column, text)) in COLUMNS.iter().zip(&texts).enumerate() {
                let terms = match text {
                    Some(text) => tokenizer.document_terms(text)?,
                    None => Vec::new(),
                };
                // FTS5 cuts a token past 32 KiB short where it may split a character.
                if terms.len() as u64 != counts.get(i).copied().unwrap_or(0)
                    || terms.iter().any(|t| t.len() > MAX_TOKEN_BYTES)
                {
                    return Ok(None);
                }
                let weight = column_weight(column).unwrap_or(0.0) as f32;
                for term in terms {
                    *freqs.entry(term).or_insert(0.0) += weight;
                }
            }
            let length = varints_sum(&size);
            delta.insert(doc, length, freqs);
            rows += 1;
            tokens += u64::from(length);
        }
        if totals(conn)? != (rows, tokens) {
            return Ok(None);
        }
        snapshot.rollback()?;
        Ok(Some(Self {
            version,
            logged: last,
            base: self.base.clone(),
            delta,
            rows,
            tokens,
        }))
    }

    /// `doc`'s length now ([`ABSENT`] if it is not in the index).
    fn length(&self, doc: u32) -> u32 {
        if self.delta.is_changed(doc) {
            self.delta.present.get(&doc).map_or(ABSENT, |p| p.0)
        } else {
            self.base.length(doc)
        }
    }

    /// `term`'s documents in the base (changed ones among them no longer count) and among
    /// the changed documents.
    fn lists(&self, term: &str) -> (&[Posting], &[Posting]) {
        (
            self.base.terms.get(term).map_or(&[][..], |p| &p[..]),
            self.delta.terms.get(term).map_or(&[][..], |p| &p[..]),
        )
    }

    /// How many documents hold `term` (FTS5's count of a one-term phrase's matches).
    pub(super) fn documents(&self, term: &str) -> i64 {
        let (base, delta) = self.lists(term);
        self.count(base, delta)
    }

    /// How many documents a term's two lists hold now (the base's changed ones left out).
    fn count(&self, base: &[Posting], delta: &[Posting]) -> i64 {
        let changed = if self.delta.docs.len() < base.len() / 16 {
            // A few changed documents: look each up in the list.
            self.delta
                .docs
                .iter()
                .filter(|&&d| base.binary_search_by_key(&d, |p| p.doc).is_ok())
                .count()
        } else {
            base.iter().filter(|p| self.delta.is_changed(p.doc)).count()
        };
        (base.len() - changed + delta.len()) as i64
    }

    /// The documents matching any of `phrases` (one term each, a query word as FTS5's
    /// tokenizer made it) by FTS5's `bm25()` of them with the columns' weights, best first
    /// (ties by rowid), at most `limit`: what `ORDER BY -bm25(...) DESC LIMIT` returns.
    ///
    /// Document at a time: the terms' lists (each in rowid order) are walked together, so
    /// each document's score is summed at once, term by term in the query's order (FTS5's
    /// order, so the same sum), and kept only if it is among the best `limit`. A term has
    /// two lists, the base's (less the changed documents) and the changed documents'; a
    /// document is in one or the other.
    /// The lists and the lengths are read front to back, once: adding scores term by
    /// term in a hash map instead took 3.0 ms at p50 and 7.0 at p99 at a million memories
    /// (where a query's words are in a few hundred thousand of them), against 2.5 and 4.1
    /// (README, "BM25 in memory").
    pub(super) fn rank(&self, phrases: &[String], limit: usize) -> Vec<(i64, f64)> {
        if limit == 0 {
            return Vec::new();
        }
        let n = self.rows as f64;
        let avgdl = self.tokens as f64 / self.rows.max(1) as f64;
        let mut lists: Vec<Cursor> = phrases
            .iter()
            .map(|term| {
                let (base, delta) = self.lists(term);
                let hits = self.count(base, delta) as f64;
                let idf = ((n - hits + 0.5) / (hits + 0.5)).ln();
                Cursor {
                    base,
                    delta,
                    at: (0, 0),
                    idf: if idf <= 0.0 { 1e-6 } else { idf },
                }
            })
            .collect();
        let mut best: BinaryHeap<Worst> = BinaryHeap::with_capacity(limit + 1);
        loop {
            let next = lists
                .iter_mut()
                .filter_map(|c| c.head(&self.delta))
                .map(|p| p.doc)
                .min();
            let Some(doc) = next else { break };
            let length = self.length(doc);
            let d = if length == ABSENT { 0 } else { length };
            let norm = K1 * (1.0 - B + B * f64::from(d) / avgdl);
            let mut score = 0.0;
            for c in &mut lists {
                if let Some(p) = c.take(doc, &self.delta) {
                    let f = f64::from(p.freq);
                    score += c.idf * ((f * (K1 + 1.0)) / (f + norm));
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

/// A term's place in its two lists during [`Index::rank`], and its IDF.
struct Cursor<'a> {
    base: &'a [Posting],
    delta: &'a [Posting],
    at: (usize, usize),
    idf: f64,
}

impl Cursor<'_> {
    /// The term's next document (the base's changed documents skipped).
    fn head(&mut self, changes: &Delta) -> Option<Posting> {
        while self
            .base
            .get(self.at.0)
            .is_some_and(|p| changes.is_changed(p.doc))
        {
            self.at.0 += 1;
        }
        match (self.base.get(self.at.0), self.delta.get(self.at.1)) {
            (Some(b), Some(d)) => Some(if b.doc < d.doc { *b } else { *d }),
            (b, d) => b.or(d).copied(),
        }
    }

    /// The posting of `doc` if it is the term's next document, moving past it.
    fn take(&mut self, doc: u32, changes: &Delta) -> Option<Posting> {
        let head = self.head(changes).filter(|p| p.doc == doc)?;
        if self.base.get(self.at.0).is_some_and(|p| p.doc == doc) {
            self.at.0 += 1;
        } else {
            self.at.1 += 1;
        }
        Some(head)
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

/// The varints of a `docsize` or averages blob (SQLite's varint, as FTS5 writes them).
fn varints(blob: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut value = 0u64;
    let mut len = 0;
    for &byte in blob {
        len += 1;
        if len == 9 {
            // The ninth byte of a varint holds eight bits.
            value = (value << 8) | u64::from(byte);
        } else {
            value = (value << 7) | u64::from(byte & 0x7f);
            if byte & 0x80 != 0 {
                continue;
            }
        }
        out.push(value);
        value = 0;
        len = 0;
    }
    out
}

/// The sum of a `docsize` blob's varints (one token count a column).
fn varints_sum(blob: &[u8]) -> u32 {
    let sum: u64 = varints(blob).iter().sum();
    u32::try_from(sum).unwrap_or(u32::MAX - 1)
}

/// What the store and its reading thread share.
#[derive(Default)]
struct Shared {
    index: RwLock<Option<Arc<Index>>>,
    closing: AtomicBool,
    /// Counts the readings finished (full or caught up), for [`Lexicon::wait_fresh`].
    readings: Mutex<u64>,
    /// Counts the full readings.
    full: std::sync::atomic::AtomicU64,
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

    /// How many times the index has been read in full.
    pub(super) fn full_readings(&self) -> u64 {
        self.shared.full.load(Ordering::Relaxed)
    }

    /// After a commit through this store: an index in memory catches up with it now, not
    /// at the next search (which would rank with FTS5 meanwhile). A store without one (too
    /// small, or not searched yet) starts no thread.
    pub(super) fn committed(&self) {
        if self.current().is_some() {
            self.wake();
        }
    }

    /// Asks the thread to bring the index up to date (starting it if need be). A wake-up
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

/// A full reading of an index that was already read (the changes outgrew the log, or
/// could not be followed exactly) is followed by a pause of this many times its length
/// before the next.
const PAUSE_FACTOR: u32 = 4;

/// Brings the index up to date each time it is woken and finds it stale, until the store
/// closes: from the log of changes where it can (`Index::caught_up`), else by a full
/// reading.
fn run(db: &Path, shared: &Shared, woken: &Receiver<()>) {
    let Ok(conn) = open(db) else { return };
    while woken.recv().is_ok() {
        let current = shared
            .index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let stale = match version(&conn) {
            Ok(v) => current.as_ref().is_none_or(|i| i.version != v),
            Err(_) => false,
        };
        let started = Instant::now();
        let mut pause = Duration::ZERO;
        if stale {
            // An error catching up is the disk's or a lock's, as for a reading.
            let caught_up = current
                .as_ref()
                .and_then(|i| i.caught_up(&conn).ok().flatten());
            let index = match caught_up {
                Some(index) => Ok(Ok(index)),
                None => {
                    let index = Index::read(&conn, &shared.closing);
                    if current.is_some() {
                        pause = started.elapsed() * PAUSE_FACTOR;
                    }
                    if matches!(index, Ok(Ok(_))) {
                        shared.full.fetch_add(1, Ordering::Relaxed);
                    }
                    index
                }
            };
            match index {
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
        let until = Instant::now() + pause;
        while !shared.closing.load(Ordering::Relaxed) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20).min(pause));
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

    /// The index in memory now (waiting for it to be the version the store is at).
    fn caught_up(store: &Store) -> Arc<Index> {
        assert!(store.wait_lexical(Duration::from_secs(120)).unwrap());
        store.lexicon.as_ref().unwrap().current().unwrap()
    }

    fn assert_ranks_as_fts5(store: &Store) {
        for limit in [10, 150, 100_000] {
            for q in QUERIES.iter().chain(&["okapi zebra", "zq5 quokka"]) {
                let ours = store
                    .read()
                    .lexical_search(q, &MemoryFilter::default(), limit)
                    .unwrap();
                assert_same(&ours, &by_fts5(store, q, limit), q);
            }
        }
    }

    #[test]
    fn writes_are_caught_up_from_the_log_and_rank_as_fts5() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path(), LEXICON_FROM_ROWS as usize + 500);
        let first = caught_up(&store);
        assert!(first.delta.docs.is_empty());

        // Inserts, updates of text and of 5W1H fields (one memory twice), deletes.
        let mut seed = 77;
        let added = store
            .transaction(|tx| {
                (0..40)
                    .map(|i| {
                        let mut m = NewMemory::new(Kind::Episode, text(&mut seed, 4 + i % 9));
                        if i % 2 == 0 {
                            m.w5h1.when = Some("quokka in May 2023".into());
                        }
                        tx.insert_memory(&m, 1.0, 0)
                    })
                    .collect::<Result<Vec<i64>>>()
            })
            .unwrap();
        store
            .transaction(|tx| {
                for id in (1..=30).chain([added[3]]) {
                    let mut m = tx.get_memory(id)?.unwrap();
                    m.text = format!("okapi {} zebra running", m.text);
                    if id % 2 == 0 {
                        m.w5h1.where_ = Some("Paris café quokka".into());
                        m.w5h1.who = None;
                    }
                    tx.write_memory_fields(&m, 0)?;
                }
                for id in [31, 32, 33, added[5]] {
                    tx.hard_delete(id)?;
                }
                Ok(())
            })
            .unwrap();
        let after = caught_up(&store);
        assert!(
            Arc::ptr_eq(&after.base, &first.base),
            "the writes were caught up from the log, not read in full"
        );
        assert_eq!(after.delta.docs.len(), 40 + 33);
        assert_eq!(after.rows, first.rows + 40 - 4);
        assert_ranks_as_fts5(&store);

        // A memory changed again is counted once, with its latest text.
        store
            .transaction(|tx| {
                let mut m = tx.get_memory(7)?.unwrap();
                m.text = "quokka".into();
                tx.write_memory_fields(&m, 0)
            })
            .unwrap();
        let again = caught_up(&store);
        assert!(Arc::ptr_eq(&again.base, &first.base));
        assert_eq!(again.delta.docs.len(), 40 + 33);
        assert_eq!(again.documents("quokka"), after.documents("quokka") + 1);
        assert_ranks_as_fts5(&store);

        // More changes than a twentieth of the store: read in full again.
        store
            .transaction(|tx| {
                for i in 0..1_100 {
                    tx.insert_memory(
                        &NewMemory::new(Kind::Episode, format!("bulk zq{i} garden")),
                        1.0,
                        0,
                    )?;
                }
                Ok(())
            })
            .unwrap();
        let reread = caught_up(&store);
        assert!(!Arc::ptr_eq(&reread.base, &first.base));
        assert!(reread.delta.docs.is_empty());
        assert_ranks_as_fts5(&store);
    }

    #[test]
    fn the_log_keeps_the_documents_each_change_touched() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let id = store
            .transaction(|tx| tx.insert_memory(&NewMemory::new(Kind::Episode, "a"), 1.0, 0))
            .unwrap();
        store
            .transaction(|tx| {
                let mut m = tx.get_memory(id)?.unwrap();
                m.text = "b".into();
                tx.write_memory_fields(&m, 0)?;
                tx.hard_delete(id)
            })
            .unwrap();
        let Db::Sqlite(conn) = store.read().db else {
            unreachable!()
        };
        let docs: Vec<i64> = conn
            .prepare("SELECT doc FROM memories_fts_log ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(docs, [id, id, id]);
        assert_eq!(totals(conn).unwrap(), (0, 0));
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
