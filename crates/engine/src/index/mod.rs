//! The vector index: HNSW (hnsw_rs, dot-product distance on unit vectors) plus an exact row
//! of every current vector, derived from the store and rebuildable from it at any time.
//! With a graph, a row is the graph's own point: the vectors are held once.
//!
//! * Every vector written gets a new *slot* in the graph; an updated memory's old slot stays
//!   in the graph as a tombstone and is filtered out of searches, as are deleted memories.
//! * Persisted beside the database (`<db>.index/`): the hnsw_rs dump, the slot → memory id
//!   table and a manifest with the store's embedding change-log position and the size and
//!   sha256 of each file. On open the index is verified before hnsw_rs reads a byte (file
//!   types, sizes, hashes, the dump's structure), then checked (point count, a self-search
//!   probe) and caught up from the change log; anything wrong means a rebuild from SQLite.
//!   Saves go through a temporary directory and a lock (see `persist`).
//! * Searches over a small candidate set (a scoped or filtered search, a small store) are
//!   exact; larger ones use HNSW with the candidate filter applied during the graph walk.
//! * A store that holds its vectors in an index of its own (Postgres with pgvector, shared by
//!   every process that opens it) gets no graph here: larger searches are asked of the
//!   database, over a connection the index keeps for them, and nothing is saved beside the
//!   store. The rows are read from it only when something needs every vector (clustering,
//!   projection, sleep cycles, curation, time travel: [`read_with_vectors`]); until then a
//!   process (a CLI call, an MCP server) opens the store without reading a vector.

mod dump_check;
mod persist;

pub use persist::index_dir;

use crate::embed::dot;
use crate::events::Job;
use crate::store::Store;
use crate::{Error, Result};
use hnsw_rs::hnsw::Point;
use hnsw_rs::prelude::{DistDot, Hnsw};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

/// A point of the graph: its vector is the memory's exact vector. (The patched anndists
/// clamps 1 − a·b at 0 instead of asserting it, so the vectors go in unscaled.)
type GraphPoint = Arc<Point<'static, f32>>;

/// The exact vectors of the indexed memories, one row per memory.
enum Rows {
    /// Held here, row-major: an index whose database answers searches.
    Flat(Vec<f32>),
    /// The graph's points, whose vectors are read in place (not copied).
    Points(Vec<GraphPoint>),
}

/// What a row is set to: a vector to copy, or the graph point that holds it.
enum RowValue<'a> {
    Copy(&'a [f32]),
    Point(GraphPoint),
}

/// Below this many candidates a search is exact (a brute-force scan is faster and exact).
pub const EXACT_LIMIT: usize = 10_000;

/// A search's candidates: their ids, and the same ids as a set when the caller holds one
/// (see [`VectorIndex::search_among`]).
#[derive(Clone, Copy)]
pub struct Among<'a> {
    pub ids: &'a [i64],
    pub set: Option<&'a HashSet<i64>>,
}

/// The longest list a search asks the database for while its filter rejects what comes.
const MAX_ASKED: usize = 100_000;

/// HNSW construction and search parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IndexParams {
    /// Neighbours kept per node (M). hnsw_rs drops the farthest neighbour instead of
    /// re-running the selection heuristic when a list is full, so it needs a larger M than
    /// hnswlib for the same recall at scale (see README, "Index").
    pub m: usize,
    pub ef_construction: usize,
    /// Default breadth of a search (raised to at least 2·k).
    pub ef_search: usize,
}

impl Default for IndexParams {
    fn default() -> Self {
        Self {
            m: 32,
            ef_construction: 200,
            ef_search: 96,
        }
    }
}

/// How a search found its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SearchPath {
    Exact,
    /// The engine's HNSW index (hnsw_rs).
    Hnsw,
    /// pgvector's HNSW index, in the Postgres store.
    Pgvector,
}

/// What answers a search over more candidates than an exact scan should take.
enum Neighbours {
    /// The engine's own HNSW graph over the rows.
    Graph(Hnsw<'static, f32, DistDot>),
    /// The store's database (pgvector's index), over a connection of the index's own, so
    /// that a search neither waits for the engine's store lock nor runs inside one of its
    /// transactions.
    Database(Mutex<Store>),
}

pub struct VectorIndex {
    dim: usize,
    params: IndexParams,
    neighbours: Neighbours,
    /// Memory id of every graph slot, in insertion order (empty without a graph).
    slot_ids: Vec<i64>,
    /// The live slot of each indexed memory.
    current: HashMap<i64, usize>,
    /// Exact vectors of the indexed memories; `row_of` maps id → row.
    rows: Rows,
    row_ids: Vec<i64>,
    row_of: HashMap<i64, usize>,
    /// Highest embed_seq of the store reflected here.
    seq: i64,
    /// Whether the rows hold every vector of the store (always, with a graph; once
    /// [`VectorIndex::load_rows`] ran, with the database).
    rows_loaded: bool,
    dir: Option<PathBuf>,
    /// Set when something changed since the last save.
    dirty: bool,
    /// Vectors inserted or removed since the last save (see [`VectorIndex::save_when_due`]).
    unsaved: usize,
}

/// A graph of at least this many points is saved after a write only once the vectors
/// written since its last save reach `1 / SAVE_FRACTION` of it (see
/// [`VectorIndex::save_when_due`]); a smaller one after every write.
const SAVE_EVERY_WRITE_BELOW: usize = 32_768;
const SAVE_FRACTION: usize = 16;

impl VectorIndex {
    /// An empty in-memory index.
    pub fn new(dim: usize, params: IndexParams, capacity: usize) -> Self {
        Self {
            dim,
            params,
            neighbours: Neighbours::Graph(new_graph(params, capacity)),
            slot_ids: Vec::new(),
            current: HashMap::new(),
            rows: Rows::Points(Vec::new()),
            row_ids: Vec::new(),
            row_of: HashMap::new(),
            seq: 0,
            rows_loaded: true,
            dir: None,
            dirty: false,
            unsaved: 0,
        }
    }

    /// Opens the index persisted for `store` (verifying it and catching it up), or builds it
    /// from the store when it is missing, stale beyond repair or corrupt. Returns the index
    /// and, when a rebuild happened, why.
    pub fn open(
        store: &Store,
        dim: usize,
        params: IndexParams,
        job: &Job,
    ) -> Result<(Self, Option<String>)> {
        if let Some(database) = store.sibling()? {
            return Ok((Self::over_database(store, database, dim, params), None));
        }
        let dir = persist::index_dir(store.path());
        let loaded = match &dir {
            Some(d) => persist::load(d, store, dim, params),
            None => Err(Error::IndexCorrupt {
                path: PathBuf::from(":memory:"),
                reason: "in-memory store".into(),
            }),
        };
        let (mut index, rebuilt) = match loaded {
            Ok(index) => (index, None),
            Err(e) => {
                let reason = match &e {
                    Error::IndexCorrupt { reason, .. } => reason.clone(),
                    other => other.to_string(),
                };
                let mut index = Self::build(store, dim, params, job)?;
                index.dir = dir.clone();
                (index, Some(reason))
            }
        };
        index.dir = dir;
        index.catch_up(store, job)?;
        let mut rebuilt = rebuilt;
        if let Some(reason) = &mut rebuilt {
            // The rebuilt index works from memory; failing to save it (a read-only
            // directory, a full disk) must not make the store unusable. It is retried on
            // the next save.
            if let Err(e) = index.save() {
                reason.push_str(&format!("; the rebuilt index could not be saved: {e}"));
            }
        }
        Ok((index, rebuilt))
    }

    /// An index of `store`, whose database answers searches over `database` (another
    /// connection to it); no vector is read yet. A graph an earlier version kept beside the
    /// store for it is removed.
    fn over_database(store: &Store, database: Store, dim: usize, params: IndexParams) -> Self {
        if let Some(dir) = persist::index_dir(store.path()).filter(|d| d.is_dir()) {
            // Only a cache: a failure to remove it costs disk space, nothing else.
            let _ = std::fs::remove_dir_all(dir);
        }
        Self {
            neighbours: Neighbours::Database(Mutex::new(database)),
            rows: Rows::Flat(Vec::new()),
            rows_loaded: false,
            ..Self::new(dim, params, 1)
        }
    }

    /// Reads every vector of the store into the rows, if they are not there yet.
    pub fn load_rows(&mut self, job: &Job) -> Result<()> {
        if self.rows_loaded {
            return Ok(());
        }
        let all = match &self.neighbours {
            Neighbours::Database(database) => database
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .read()
                .embeddings_since(0)?,
            Neighbours::Graph(_) => Vec::new(),
        };
        self.insert_batch(all, job)?;
        self.rows_loaded = true;
        Ok(())
    }

    /// Builds the index from every embedding in the store.
    pub fn build(store: &Store, dim: usize, params: IndexParams, job: &Job) -> Result<Self> {
        let all = store.read().embeddings_since(0)?;
        let mut index = Self::new(dim, params, all.len().max(1024));
        index.insert_batch(all, job)?;
        Ok(index)
    }

    /// Inserts whatever the store's change log has beyond this index's position.
    pub fn catch_up(&mut self, store: &Store, job: &Job) -> Result<usize> {
        if !self.rows_loaded {
            // Read in full when first needed.
            return Ok(0);
        }
        let newer = store.read().embeddings_since(self.seq)?;
        let n = newer.len();
        self.insert_batch(newer, job)?;
        Ok(n)
    }

    /// Inserts (id, vector, embed_seq) triples; graph insertion runs in parallel chunks with
    /// progress and cancellation between chunks. The graph takes the vectors as they are
    /// (no copy). A vector of the wrong dimension fails its chunk before anything of the
    /// chunk is inserted.
    pub fn insert_batch(&mut self, items: Vec<(i64, Vec<f32>, i64)>, job: &Job) -> Result<()> {
        const CHUNK: usize = 2048;
        let total = items.len() as u64;
        let mut done = 0;
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            job.cancel.check()?;
            let chunk: Vec<(i64, Vec<f32>, i64)> = items.by_ref().take(CHUNK).collect();
            for (_, v, _) in &chunk {
                self.check_dim(v)?;
            }
            done += chunk.len() as u64;
            let Some(graph) = self.graph() else {
                for (id, v, seq) in chunk {
                    self.set_row(id, RowValue::Copy(&v));
                    self.seq = self.seq.max(seq);
                }
                job.report("index", done, total);
                continue;
            };
            let first_slot = self.slot_ids.len();
            let mut placed = Vec::with_capacity(chunk.len());
            let mut owned = Vec::with_capacity(chunk.len());
            for (i, (id, v, seq)) in chunk.into_iter().enumerate() {
                placed.push((id, seq));
                owned.push((v, first_slot + i));
            }
            let points = if owned.len() > 64 {
                graph.parallel_insert_owned(owned)
            } else {
                owned
                    .into_iter()
                    .map(|(v, slot)| graph.insert_owned(v, slot))
                    .collect()
            };
            let placed_len = placed.len();
            for (i, ((id, seq), point)) in placed.into_iter().zip(points).enumerate() {
                self.slot_ids.push(id);
                self.set_row(id, RowValue::Point(point));
                self.current.insert(id, first_slot + i);
                self.seq = self.seq.max(seq);
            }
            self.dirty = true;
            self.unsaved += placed_len;
            job.report("index", done, total);
        }
        Ok(())
    }

    /// Adds or replaces one memory's vector.
    pub fn upsert(&mut self, id: i64, v: &[f32], seq: i64) -> Result<()> {
        self.insert_batch(vec![(id, v.to_vec(), seq)], &Job::default())
    }

    /// Forgets a memory (its graph slot becomes a tombstone).
    pub fn remove(&mut self, id: i64) {
        self.current.remove(&id);
        if let Some(row) = self.row_of.remove(&id) {
            // Swap-remove the row, fixing the moved row's mapping.
            let last = self.row_ids.len() - 1;
            if row != last {
                let moved = self.row_ids[last];
                self.row_ids[row] = moved;
                self.row_of.insert(moved, row);
            }
            self.row_ids.pop();
            match &mut self.rows {
                Rows::Flat(rows) => {
                    let (a, b) = (row * self.dim, last * self.dim);
                    rows.copy_within(b..b + self.dim, a);
                    rows.truncate(last * self.dim);
                }
                Rows::Points(points) => {
                    points.swap_remove(row);
                }
            }
        }
        self.dirty = true;
        self.unsaved += 1;
    }

    /// Sets the row of `id`, appending one if it has none. A graph's rows are its points, a
    /// database's index holds copies: the value must be of the index's kind.
    fn set_row(&mut self, id: i64, value: RowValue) {
        let row = self.row_of.get(&id).copied();
        if row.is_none() {
            self.row_of.insert(id, self.row_ids.len());
            self.row_ids.push(id);
        }
        match (&mut self.rows, value) {
            (Rows::Flat(rows), RowValue::Copy(v)) => match row {
                Some(r) => rows[r * self.dim..(r + 1) * self.dim].copy_from_slice(v),
                None => rows.extend_from_slice(v),
            },
            (Rows::Points(points), RowValue::Point(p)) => match row {
                Some(r) => points[r] = p,
                None => points.push(p),
            },
            _ => unreachable!("a graph's rows are its points, a database's index holds copies"),
        }
    }

    /// The vector of row `r`.
    fn row(&self, r: usize) -> &[f32] {
        match &self.rows {
            Rows::Flat(rows) => &rows[r * self.dim..(r + 1) * self.dim],
            Rows::Points(points) => points[r].get_v(),
        }
    }

    fn check_dim(&self, v: &[f32]) -> Result<()> {
        if v.len() != self.dim {
            return Err(Error::InvalidInput(format!(
                "vector of {} dimensions, the index holds {}",
                v.len(),
                self.dim
            )));
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.row_ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.row_ids.is_empty()
    }

    /// Graph slots no longer current (superseded or deleted).
    pub fn tombstones(&self) -> usize {
        self.slot_ids.len() - self.current.len()
    }

    /// Ids of the indexed memories, in no particular order.
    pub fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.row_ids.iter().copied()
    }

    /// Whether the store's database answers the larger searches (there is no graph here).
    pub fn in_database(&self) -> bool {
        matches!(self.neighbours, Neighbours::Database(_))
    }

    fn graph(&self) -> Option<&Hnsw<'static, f32, DistDot>> {
        match &self.neighbours {
            Neighbours::Graph(g) => Some(g),
            Neighbours::Database(_) => None,
        }
    }

    pub fn seq(&self) -> i64 {
        self.seq
    }

    pub fn params(&self) -> IndexParams {
        self.params
    }

    pub fn vector(&self, id: i64) -> Option<&[f32]> {
        self.row_of.get(&id).map(|&r| self.row(r))
    }

    /// Exact cosine similarity of `query` to memory `id`, if indexed.
    pub fn similarity(&self, query: &[f32], id: i64) -> Option<f32> {
        self.vector(id).map(|v| dot(query, v))
    }

    /// The `k` nearest memories to `query` among `candidates` (all indexed memories if
    /// `None`) that pass `allowed`, best first, as (id, cosine similarity). Exact when the
    /// candidate set is small.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        allowed: Option<&dyn Fn(i64) -> bool>,
        candidates: Option<&[i64]>,
    ) -> (Vec<(i64, f32)>, SearchPath) {
        let among = candidates.map(|ids| Among { ids, set: None });
        self.search_among(query, k, allowed, among)
    }

    /// [`Self::search`] among candidates the caller may also hold as a set: a long list is
    /// looked up in a set while the graph is walked, and without one it is built at every
    /// search (a caller that searches the same long list over and over builds it once).
    pub fn search_among(
        &self,
        query: &[f32],
        k: usize,
        allowed: Option<&dyn Fn(i64) -> bool>,
        among: Option<Among<'_>>,
    ) -> (Vec<(i64, f32)>, SearchPath) {
        // (Another process may have given the database what this one has not caught up with.)
        if k == 0 || (self.is_empty() && !self.in_database()) {
            return (Vec::new(), SearchPath::Exact);
        }
        let candidates = among.as_ref().map(|a| a.ids);
        let built: HashSet<i64>;
        let only: Option<&HashSet<i64>> = match among {
            Some(a) if a.ids.len() > EXACT_LIMIT => Some(match a.set {
                Some(set) => set,
                None => {
                    built = a.ids.iter().copied().collect();
                    &built
                }
            }),
            _ => None,
        };
        let pass = |id: i64| only.is_none_or(|o| o.contains(&id)) && allowed.is_none_or(|f| f(id));
        if let Some(ids) = candidates.filter(|c| c.len() <= EXACT_LIMIT && self.rows_loaded) {
            let scored = ids
                .iter()
                .filter(|&&id| pass(id))
                .filter_map(|&id| self.similarity(query, id).map(|s| (id, s)));
            return (top_k(scored, k), SearchPath::Exact);
        }
        let graph = match &self.neighbours {
            Neighbours::Graph(graph) => graph,
            // Whatever the store's size: the database knows every process's memories.
            Neighbours::Database(database) => {
                return self.search_database(database, query, k, &pass, candidates)
            }
        };
        if self.len() <= EXACT_LIMIT {
            return (self.exact(query, k, &pass), SearchPath::Exact);
        }
        let filter = |slot: &usize| {
            let id = self.slot_ids[*slot];
            self.current.get(&id) == Some(slot) && pass(id)
        };
        let ef = self.params.ef_search.max(2 * k);
        // Without stale slots (updated vectors) or a caller's filter, every slot is a hit.
        let unfiltered =
            allowed.is_none() && only.is_none() && self.slot_ids.len() == self.current.len();
        let found = if unfiltered {
            graph.search(query, k, ef)
        } else {
            graph.search_filter(query, k, ef, Some(&filter))
        };
        let hits: Vec<(i64, f32)> = found
            .into_iter()
            .map(|n| {
                let id = self.slot_ids[n.d_id];
                (id, self.similarity(query, id).unwrap_or(0.0))
            })
            .collect();
        (top_k(hits, k), SearchPath::Hnsw)
    }

    /// A search the database answers: `candidates` (more than an exact scan takes) or all
    /// its current memories, nearest first, with `pass` applied to what comes back; as
    /// long as it rejects some of that, a longer list is asked for. Should the database
    /// fail (a lost connection), the rows held here are scanned exactly instead: slower,
    /// the same answer for every memory this process has caught up with.
    fn search_database(
        &self,
        database: &Mutex<Store>,
        query: &[f32],
        k: usize,
        pass: &dyn Fn(i64) -> bool,
        candidates: Option<&[i64]>,
    ) -> (Vec<(i64, f32)>, SearchPath) {
        use crate::store::VectorScope;
        let scope = candidates.map_or(VectorScope::All, VectorScope::Only);
        let store = database.lock().unwrap_or_else(|p| p.into_inner());
        let mut asked = k + k / 2 + 2;
        loop {
            let ef = self.params.ef_search.max(2 * asked);
            // In a transaction: the search settings are set for it alone.
            match store.snapshot(|tx| tx.nearest_in_database(query, asked, ef, scope, EXACT_LIMIT))
            {
                Ok((hits, exact)) => {
                    let complete = hits.len() < asked;
                    let kept: Vec<(i64, f32)> =
                        hits.into_iter().filter(|&(id, _)| pass(id)).collect();
                    if kept.len() >= k || complete || asked >= MAX_ASKED {
                        let path = if exact {
                            SearchPath::Exact
                        } else {
                            SearchPath::Pgvector
                        };
                        return (kept.into_iter().take(k).collect(), path);
                    }
                    asked *= 4;
                }
                Err(_) => return (self.exact(query, k, pass), SearchPath::Exact),
            }
        }
    }

    /// Graph search only (no exact shortcut, no filter) with an explicit ef: what the ANN
    /// benchmark measures. Empty for an index whose database answers searches.
    pub fn search_graph(&self, query: &[f32], k: usize, ef: usize) -> Vec<(i64, f32)> {
        let Some(graph) = self.graph() else {
            return Vec::new();
        };
        graph
            .search(query, k, ef)
            .into_iter()
            .map(|n| {
                let id = self.slot_ids[n.d_id];
                (id, self.similarity(query, id).unwrap_or(0.0))
            })
            .collect()
    }

    /// Exact top-k over every indexed vector passing `pass`.
    pub fn exact(&self, query: &[f32], k: usize, pass: &dyn Fn(i64) -> bool) -> Vec<(i64, f32)> {
        let scored = self
            .row_ids
            .iter()
            .enumerate()
            .filter(|(_, &id)| pass(id))
            .map(|(r, &id)| (id, dot(query, self.row(r))));
        top_k(scored, k)
    }

    /// Writes the index beside the database (no-op for in-memory stores or when clean).
    /// When another process keeps the index locked for long, nothing is written and the
    /// index stays marked unsaved for the next call.
    pub fn save(&mut self) -> Result<()> {
        if let (Some(dir), true) = (&self.dir, self.dirty) {
            if persist::save(self, dir)? {
                self.dirty = false;
                self.unsaved = 0;
            }
        }
        Ok(())
    }

    /// [`VectorIndex::save`] after a write (an import), when it is due: always for a graph
    /// under [`SAVE_EVERY_WRITE_BELOW`] points, otherwise once the vectors written since
    /// the last save reach a sixteenth of the graph. A save writes the whole graph (2.5 GB
    /// at a million memories), so saving after every import made each import's cost grow
    /// with the store; deferred, it is spread over the imports that follow. What is not
    /// saved yet is in SQLite: the next open catches the index up from the store's change
    /// log (at most a sixteenth of the graph, after a crash), and closing the engine saves.
    /// Returns whether it saved.
    pub fn save_when_due(&mut self) -> Result<bool> {
        if !(save_due(self.len(), self.unsaved) && self.dirty) {
            return Ok(false);
        }
        self.save()?;
        Ok(!self.dirty)
    }
}

/// Whether an index of `len` vectors, `unsaved` of them written since its last save, is
/// saved after a write (see [`VectorIndex::save_when_due`]).
fn save_due(len: usize, unsaved: usize) -> bool {
    len < SAVE_EVERY_WRITE_BELOW || unsaved.saturating_mul(SAVE_FRACTION) >= len
}

/// The index behind `lock` for reading, its rows holding every vector (read first if they
/// are not: see [`VectorIndex::load_rows`]).
pub(crate) fn read_with_vectors(
    lock: &RwLock<VectorIndex>,
) -> Result<RwLockReadGuard<'_, VectorIndex>> {
    {
        let index = lock.read().unwrap_or_else(|p| p.into_inner());
        if index.rows_loaded {
            return Ok(index);
        }
    }
    lock.write()
        .unwrap_or_else(|p| p.into_inner())
        .load_rows(&Job::default())?;
    Ok(lock.read().unwrap_or_else(|p| p.into_inner()))
}

fn new_graph(params: IndexParams, capacity: usize) -> Hnsw<'static, f32, DistDot> {
    Hnsw::new(params.m, capacity, 16, params.ef_construction, DistDot {})
}

/// The k best (id, score) pairs, best first; ties broken by id for determinism.
pub fn top_k(items: impl IntoIterator<Item = (i64, f32)>, k: usize) -> Vec<(i64, f32)> {
    let mut v: Vec<(i64, f32)> = items.into_iter().collect();
    let cmp = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if v.len() > k {
        v.select_nth_unstable_by(k, cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn a_large_index_is_saved_after_a_write_once_a_sixteenth_of_it_is_unsaved() {
        let params = IndexParams {
            m: 8,
            ef_construction: 16,
            ef_search: 16,
        };
        let dir = tempfile::tempdir().unwrap();
        let mut idx = VectorIndex::new(4, params, 40_000);
        idx.dir = Some(dir.path().join("x.index"));
        let mut next = 0i64;
        let mut write = |idx: &mut VectorIndex, n: usize| {
            let items = unit_vectors(n, 4, next as u64)
                .into_iter()
                .map(|v| {
                    next += 1;
                    (next, v, next)
                })
                .collect();
            idx.insert_batch(items, &Job::default()).unwrap();
        };
        // A small index is saved after every write.
        write(&mut idx, 100);
        assert!(idx.save_when_due().unwrap());
        assert!(!idx.save_when_due().unwrap(), "nothing changed since");
        write(&mut idx, 1);
        assert!(idx.save_when_due().unwrap());
        // A large one once the writes since its last save reach a sixteenth of it.
        write(&mut idx, SAVE_EVERY_WRITE_BELOW);
        assert!(idx.save_when_due().unwrap());
        let len = idx.len();
        write(&mut idx, len / 32);
        assert!(!idx.save_when_due().unwrap());
        assert!(idx.dirty, "still to be saved");
        write(&mut idx, len / 16);
        assert!(idx.save_when_due().unwrap());
        assert!(!idx.dirty);
        // Removals count as writes too.
        for id in 1..=(idx.len() / 16) as i64 {
            idx.remove(id);
        }
        assert!(idx.save_when_due().unwrap());
    }

    pub(crate) fn unit_vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let mut v: Vec<f32> = (0..dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
                crate::embed::normalize(&mut v);
                v
            })
            .collect()
    }

    fn filled(n: usize) -> (VectorIndex, Vec<Vec<f32>>) {
        let vs = unit_vectors(n, 16, 7);
        let mut idx = VectorIndex::new(16, IndexParams::default(), n);
        let items = vs
            .iter()
            .enumerate()
            .map(|(i, v)| (i as i64 + 1, v.clone(), i as i64 + 1))
            .collect();
        idx.insert_batch(items, &Job::default()).unwrap();
        (idx, vs)
    }

    #[test]
    fn exact_search_finds_itself_first() {
        let (idx, vs) = filled(200);
        let (hits, path) = idx.search(&vs[41], 5, None, None);
        assert_eq!(path, SearchPath::Exact);
        assert_eq!(hits[0].0, 42);
        assert!((hits[0].1 - 1.0).abs() < 1e-5);
    }

    #[test]
    fn removed_and_superseded_vectors_are_never_returned() {
        let (mut idx, vs) = filled(300);
        idx.remove(10);
        let (hits, _) = idx.search(&vs[9], 3, None, None);
        assert!(hits.iter().all(|h| h.0 != 10));
        // Re-point memory 20 at memory 30's vector: searching 20's old vector must not find 20.
        idx.upsert(20, &vs[29], 1000).unwrap();
        let (hits, _) = idx.search(&vs[19], 1, None, None);
        assert_ne!(hits[0].0, 20);
        assert_eq!(idx.tombstones(), 2);
        assert_eq!(idx.len(), 299);
    }

    #[test]
    fn graph_search_respects_filters_and_agrees_with_exact() {
        let n = EXACT_LIMIT + 500;
        let vs = unit_vectors(n, 16, 3);
        let mut idx = VectorIndex::new(16, IndexParams::default(), n);
        idx.insert_batch(
            vs.iter()
                .enumerate()
                .map(|(i, v)| (i as i64, v.clone(), i as i64 + 1))
                .collect(),
            &Job::default(),
        )
        .unwrap();
        let even = |id: i64| id % 2 == 0;
        let mut agree = 0;
        for q in 0..20 {
            let (hits, path) = idx.search(&vs[q * 7], 10, Some(&even), None);
            assert_eq!(path, SearchPath::Hnsw);
            assert!(hits.iter().all(|h| h.0 % 2 == 0));
            let exact = idx.exact(&vs[q * 7], 10, &even);
            agree += hits
                .iter()
                .filter(|h| exact.iter().any(|e| e.0 == h.0))
                .count();
        }
        // 16-dimensional random data is easy: recall@10 should be near perfect.
        assert!(agree >= 190, "recall@10 {}", agree as f64 / 200.0);
    }

    #[test]
    fn wrong_dimension_is_an_error_not_a_panic() {
        let mut idx = VectorIndex::new(16, IndexParams::default(), 8);
        let err = idx.upsert(1, &[1.0; 3], 1).unwrap_err();
        assert_eq!(err.code(), "invalid_input");
    }
}
