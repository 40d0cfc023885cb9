//! Saving and verified loading of the vector index (`<db>.index/`).
//!
//! On disk, beside the database:
//! * `<db>.index/`: `manifest.json`, `slots.bin` (the slot → memory id table) and the hnsw_rs
//!   dump `graph.hnsw.graph` + `graph.hnsw.data`. The manifest records the size and sha256
//!   of each of those three files.
//! * `<db>.index.lock`: the advisory lock (`File::lock`) that orders saves and loads across
//!   threads and processes. A save holds it exclusively from its first write to its last
//!   rename, a load holds it shared while it checks and reads the files.
//! * `<db>.index.tmp-<pid>-<n>-<random>` and `<db>.index.old-<pid>-<n>-<random>`: a save in
//!   progress and the directory it replaces; both exist only while their save holds the lock.
//!
//! Loading trusts nothing: the directory must be a real directory, the manifest a small
//! regular file naming exactly the expected files, each file a regular file (no symlink,
//! device or fifo; opened without following links and without blocking) of the recorded
//! size and checksum, the slot table as long as the manifest says, and the hnsw_rs dump is
//! walked field by field (`dump_check`) before hnsw_rs reads it. Any doubt is an
//! `IndexCorrupt` error, which `VectorIndex::open` turns into a rebuild from SQLite.
//!
//! Saving writes a complete new directory under a unique temporary name, syncs it, moves
//! the current directory (or whatever is at its name: a file, a link) aside, renames the new
//! one in and removes the old one. A crash leaves the old index, the new one, or no index
//! (rebuilt on the next open); never a half-written one under the real name.

use super::dump_check::{self, Source};
use super::{IndexParams, VectorIndex};
use crate::embed::model::sha256_file;
use crate::store::Store;
use crate::{Error, Result};
use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::{DistDot, Hnsw};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Format 2 records each file's size beside its checksum; format 3 holds the vectors
/// unscaled (the index reads them from the graph). An index saved in an earlier format is
/// rebuilt once.
const FORMAT: u32 = 3;
const MANIFEST: &str = "manifest.json";
const IDS: &str = "slots.bin";
/// The hnsw_rs dump's basename (in a fresh directory hnsw_rs keeps the name it is given).
const BASENAME: &str = "graph";
/// A manifest is a few hundred bytes; anything much larger is not one of ours.
const MANIFEST_MAX_BYTES: u64 = 64 * 1024;
/// How long a load waits for a save in progress before reading without the lock (what it
/// reads is checked either way; waiting avoids a needless rebuild).
const LOAD_WAIT: Duration = Duration::from_secs(10);
/// How long a save waits for another save or a load. One that waits longer gives up; its
/// index stays marked unsaved and is saved next time (or caught up on the next open).
const SAVE_WAIT: Duration = Duration::from_secs(if cfg!(test) { 2 } else { 30 });
/// Temporary directories are removed by the next save as soon as it holds the lock (their
/// owner, which held the lock all along, is gone). Without a working lock, or for the
/// fixed-name temporary directory of earlier versions (which took no lock), only after an
/// hour: a save takes seconds even for a large index, so an hour-old one is abandoned.
const STALE_AGE: Duration = Duration::from_secs(3600);

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    format: u32,
    dim: usize,
    params: IndexParams,
    /// Store change-log position the saved graph reflects.
    seq: i64,
    slots: usize,
    /// hnsw_rs dump basename (always `BASENAME`).
    basename: String,
    /// Size and sha256 of every file of the index but the manifest.
    files: BTreeMap<String, FileEntry>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    bytes: u64,
    sha256: String,
}

/// `<db>.index` beside a file store; `None` for an in-memory store.
pub fn index_dir(db: &Path) -> Option<PathBuf> {
    (db != Path::new(":memory:")).then(|| {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".index");
        db.with_file_name(name)
    })
}

fn corrupt(dir: &Path, reason: impl Into<String>) -> Error {
    Error::IndexCorrupt {
        path: dir.to_path_buf(),
        reason: reason.into(),
    }
}

fn graph_name() -> String {
    format!("{BASENAME}.hnsw.graph")
}

fn data_name() -> String {
    format!("{BASENAME}.hnsw.data")
}

/// The files a saved index consists of besides its manifest, in name order.
fn expected_files() -> Vec<String> {
    let mut names = vec![graph_name(), data_name(), IDS.to_string()];
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------
// Saving

/// Writes `index` to `dir`. Returns `false`, having written nothing, when another save or
/// load held the index lock for longer than `SAVE_WAIT`.
pub fn save(index: &VectorIndex, dir: &Path) -> Result<bool> {
    let lock = IndexLock::acquire(dir, true, SAVE_WAIT);
    if matches!(lock, IndexLock::Busy) {
        return Ok(false);
    }
    clean_stale(dir, matches!(lock, IndexLock::Held(_)));
    let tmp = sibling(dir, "tmp");
    let written = write_dir(index, &tmp).and_then(|()| install(&tmp, dir));
    if written.is_err() {
        remove_entry(&tmp);
    }
    drop(lock);
    written.map(|()| true)
}

/// Writes a complete index directory at `tmp` (which must not exist), synced to disk.
fn write_dir(index: &VectorIndex, tmp: &Path) -> Result<()> {
    std::fs::create_dir(tmp).map_err(|e| Error::io(tmp, e))?;
    let graph = index.graph().ok_or_else(|| {
        corrupt(
            tmp,
            "no graph to save: the store's database answers searches",
        )
    })?;
    // hnsw_rs panics when it cannot create its files.
    let basename = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        graph.file_dump(tmp, BASENAME)
    }))
    .map_err(|_| corrupt(tmp, "the graph files could not be created"))?
    .map_err(|e| corrupt(tmp, format!("dump failed: {e}")))?;
    if basename != BASENAME {
        return Err(corrupt(tmp, format!("hnsw_rs dumped as {basename}")));
    }
    let ids: Vec<u8> = index
        .slot_ids
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let ids_path = tmp.join(IDS);
    std::fs::write(&ids_path, ids).map_err(|e| Error::io(&ids_path, e))?;
    let mut files = BTreeMap::new();
    for name in expected_files() {
        let path = tmp.join(&name);
        let f = File::open(&path).map_err(|e| Error::io(&path, e))?;
        f.sync_all().map_err(|e| Error::io(&path, e))?;
        let bytes = f.metadata().map_err(|e| Error::io(&path, e))?.len();
        let sha256 = sha256_file(&path)?;
        files.insert(name, FileEntry { bytes, sha256 });
    }
    let manifest = Manifest {
        format: FORMAT,
        dim: index.dim,
        params: index.params,
        seq: index.seq,
        slots: index.slot_ids.len(),
        basename,
        files,
    };
    let mpath = tmp.join(MANIFEST);
    let mut f = File::create(&mpath).map_err(|e| Error::io(&mpath, e))?;
    std::io::Write::write_all(&mut f, &serde_json::to_vec_pretty(&manifest)?)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(&mpath, e))?;
    sync_dir(tmp);
    Ok(())
}

/// Puts the finished directory `tmp` in place of `dir`. Renaming a directory over a
/// non-empty one fails (and over a file or link too), so whatever is at `dir` is first
/// renamed aside, then `tmp` in, then the old one removed. If `tmp` cannot be moved in, the
/// old one is put back.
fn install(tmp: &Path, dir: &Path) -> Result<()> {
    let aside = match std::fs::symlink_metadata(dir) {
        Ok(_) => {
            let aside = sibling(dir, "old");
            // Renames a link itself, never what it points to.
            std::fs::rename(dir, &aside).map_err(|e| Error::io(dir, e))?;
            Some(aside)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(dir, e)),
    };
    if let Err(e) = std::fs::rename(tmp, dir) {
        if let Some(aside) = &aside {
            let _ = std::fs::rename(aside, dir);
        }
        return Err(Error::io(dir, e));
    }
    sync_dir(&parent_of(dir));
    if let Some(aside) = aside {
        remove_entry(&aside);
    }
    Ok(())
}

/// A unique name beside `dir`: `<dir>.<kind>-<pid>-<counter>-<random>`.
fn sibling(dir: &Path, kind: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(format!(
        ".{kind}-{}-{}-{:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        rand::random::<u32>()
    ));
    dir.with_file_name(name)
}

fn parent_of(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Removes the temporary and set-aside directories that saves killed before the end left
/// behind. With the lock held every one is stale: their saves held the lock as long as they
/// existed. Without it, only those older than `STALE_AGE`.
fn clean_stale(dir: &Path, lock_held: bool) {
    let Some(name) = dir.file_name() else {
        return;
    };
    let mut prefixes = Vec::new();
    for kind in ["tmp-", "old-"] {
        let mut p = name.to_os_string();
        p.push(format!(".{kind}"));
        prefixes.push(p);
    }
    let mut legacy = name.to_os_string();
    legacy.push(".tmp");
    let Ok(entries) = std::fs::read_dir(parent_of(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        let ours = prefixes.iter().any(|p| {
            entry_name
                .as_encoded_bytes()
                .starts_with(p.as_encoded_bytes())
        });
        if !ours && entry_name != legacy {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_AGE);
        if old || (ours && lock_held) {
            remove_entry(&entry.path());
        }
    }
}

/// Removes a file, link or directory tree (never following a link); errors are ignored
/// (what is left is retried by the next save).
fn remove_entry(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Makes a directory's entries durable (best effort; not possible on every platform).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The index lock, `<db>.index.lock` beside the directory.
enum IndexLock {
    /// Held until dropped.
    Held(#[allow(dead_code)] File),
    /// Locking is impossible here (read-only directory, file system without locks).
    Unavailable,
    /// Someone else held it for the whole wait.
    Busy,
}

impl IndexLock {
    fn acquire(dir: &Path, exclusive: bool, wait: Duration) -> Self {
        let mut path = dir.as_os_str().to_os_string();
        path.push(".lock");
        let Some(file) = open_lock_file(Path::new(&path), exclusive) else {
            return IndexLock::Unavailable;
        };
        let start = Instant::now();
        loop {
            let tried = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match tried {
                Ok(()) => return IndexLock::Held(file),
                Err(TryLockError::WouldBlock) if start.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(TryLockError::WouldBlock) => return IndexLock::Busy,
                Err(TryLockError::Error(_)) => return IndexLock::Unavailable,
            }
        }
    }
}

/// Opens (creating) the lock file. Something else at its name (a directory, link, fifo) is
/// removed first when `repair` is set (by a save), else the lock is given up.
fn open_lock_file(path: &Path, repair: bool) -> Option<File> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            if !repair {
                return None;
            }
            remove_entry(path);
        }
    }
    let mut rw = OpenOptions::new();
    rw.read(true).write(true).create(true);
    no_follow_no_block(&mut rw);
    let mut ro = OpenOptions::new();
    ro.read(true);
    no_follow_no_block(&mut ro);
    let file = rw.open(path).or_else(|_| ro.open(path)).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// Opening must neither follow a link nor block (a fifo blocks an ordinary open until a
/// writer appears). Devices and fifos are refused after opening, by their type.
fn no_follow_no_block(opts: &mut OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    let _ = opts;
}

// ---------------------------------------------------------------------------------------
// Loading

pub fn load(dir: &Path, store: &Store, dim: usize, params: IndexParams) -> Result<VectorIndex> {
    check_dir(dir).map_err(|reason| corrupt(dir, reason))?;
    // Held until the graph is read, so that no save replaces the files in between.
    let lock = IndexLock::acquire(dir, false, LOAD_WAIT);
    let Verified { manifest, slot_ids } =
        verify(dir, dim, params).map_err(|reason| corrupt(dir, reason))?;
    if manifest.seq > store.read().max_embed_seq()? {
        return Err(corrupt(
            dir,
            "index is ahead of the store (another store's index?)",
        ));
    }
    let graph = load_graph(dir, slot_ids.len())?;
    drop(lock);
    // (load_graph checked that every slot has exactly one point)
    let mut by_slot: Vec<Option<super::GraphPoint>> = vec![None; slot_ids.len()];
    for point in graph.get_point_indexation() {
        let slot = point.get_origin_id();
        by_slot[slot] = Some(point);
    }

    let mut index = VectorIndex {
        dim,
        params: IndexParams {
            ef_search: params.ef_search,
            ..manifest.params
        },
        neighbours: super::Neighbours::Graph(graph),
        slot_ids,
        current: HashMap::new(),
        rows: super::Rows::Points(Vec::new()),
        row_ids: Vec::new(),
        row_of: HashMap::new(),
        seq: manifest.seq,
        rows_loaded: true,
        dir: Some(dir.to_path_buf()),
        dirty: false,
        unsaved: 0,
    };
    let mut last_slot: HashMap<i64, usize> = HashMap::new();
    for (slot, &id) in index.slot_ids.iter().enumerate() {
        last_slot.insert(id, slot);
    }
    for (id, v, seq) in store.read().embeddings_since(0)? {
        if seq > manifest.seq {
            continue; // caught up after loading
        }
        let slot = *last_slot
            .get(&id)
            .ok_or_else(|| corrupt(dir, format!("memory {id} is missing from the graph")))?;
        if v.len() != dim {
            return Err(corrupt(
                dir,
                format!("memory {id} has a {}-d vector", v.len()),
            ));
        }
        // The rows are the graph's points: each must hold the store's vector exactly.
        let point = by_slot[slot]
            .clone()
            .ok_or_else(|| corrupt(dir, format!("slot {slot} has no point")))?;
        if point.get_v() != v.as_slice() {
            return Err(corrupt(
                dir,
                format!("memory {id}'s vector in the graph differs from the store's"),
            ));
        }
        index.set_row(id, super::RowValue::Point(point));
        index.current.insert(id, slot);
    }
    probe(&index).map_err(|reason| corrupt(dir, reason))?;
    Ok(index)
}

/// The index directory must be a directory, not a link to one, a file or anything else.
fn check_dir(dir: &Path) -> std::result::Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => Err("no saved index".into()),
        Err(e) => Err(format!("unreadable ({e})")),
        Ok(m) if m.file_type().is_symlink() => Err("it is a symbolic link".into()),
        Ok(m) if !m.is_dir() => Err("it is not a directory".into()),
        Ok(_) => Ok(()),
    }
}

/// A saved index whose files passed every check.
struct Verified {
    manifest: Manifest,
    slot_ids: Vec<i64>,
}

/// Checks everything hnsw_rs and the slot table will read, reading each file once.
fn verify(dir: &Path, dim: usize, params: IndexParams) -> std::result::Result<Verified, String> {
    check_dir(dir)?;
    let manifest = read_manifest(dir)?;
    if manifest.dim != dim {
        return Err("saved with another dimension".into());
    }
    if (manifest.params.m, manifest.params.ef_construction) != (params.m, params.ef_construction) {
        return Err("saved with other construction parameters".into());
    }
    if manifest.basename != BASENAME {
        return Err("the manifest names another graph".into());
    }
    if !manifest.files.keys().eq(expected_files().iter()) {
        return Err("the manifest lists other files than an index has".into());
    }
    if manifest.slots == 0 {
        return Err("the manifest records an empty graph".into());
    }
    let entry = |name: &str| &manifest.files[name];
    // Sizes first: the slot table and the data file follow from the point count.
    let ids_len = (manifest.slots as u64).checked_mul(8);
    let data_len = dump_check::data_file_len(manifest.slots, dim);
    if Some(entry(IDS).bytes) != ids_len {
        return Err("the slot table's size disagrees with the slot count".into());
    }
    if Some(entry(&data_name()).bytes) != data_len {
        return Err("the data file's size disagrees with the slot count".into());
    }
    let open = |name: &str| -> std::result::Result<Source, String> {
        let (file, bytes) = open_regular(&dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
        if bytes != entry(name).bytes {
            return Err(format!(
                "{name} is {bytes} bytes, the manifest says {}",
                entry(name).bytes
            ));
        }
        Ok(Source::new(name, file, bytes))
    };
    let check_sum = |name: &str, src: Source| -> std::result::Result<(), String> {
        if src.finish()? != entry(name).sha256 {
            return Err(format!("{name} does not match its checksum"));
        }
        Ok(())
    };

    let mut ids = open(IDS)?;
    let mut graph = open(&graph_name())?;
    let mut data = open(&data_name())?;
    let slot_ids = (0..manifest.slots)
        .map(|_| ids.i64_le())
        .collect::<std::result::Result<Vec<i64>, String>>()?;
    check_sum(IDS, ids)?;
    let reference = super::new_graph(params, 1);
    let expect = dump_check::Expect {
        dim,
        points: manifest.slots,
        max_nb_connection: reference.get_max_nb_connection(),
        ef_construction: reference.get_ef_construction(),
        distance: reference.get_distance_name(),
        value_type: std::any::type_name::<f32>(),
    };
    dump_check::check(&mut graph, &mut data, &expect)?;
    check_sum(&graph_name(), graph)?;
    check_sum(&data_name(), data)?;
    Ok(Verified { manifest, slot_ids })
}

fn read_manifest(dir: &Path) -> std::result::Result<Manifest, String> {
    let (file, bytes) = open_regular(&dir.join(MANIFEST)).map_err(|e| format!("manifest: {e}"))?;
    if bytes > MANIFEST_MAX_BYTES {
        return Err(format!("the manifest is implausibly large ({bytes} bytes)"));
    }
    let mut text = Vec::new();
    file.take(MANIFEST_MAX_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("unreadable manifest: {e}"))?;
    if text.len() as u64 > MANIFEST_MAX_BYTES {
        return Err("the manifest is implausibly large".into());
    }
    #[derive(Deserialize)]
    struct Version {
        format: Option<u32>,
    }
    let version: Version =
        serde_json::from_slice(&text).map_err(|e| format!("unreadable manifest: {e}"))?;
    if version.format != Some(FORMAT) {
        return Err("saved by another version".into());
    }
    serde_json::from_slice(&text).map_err(|e| format!("unreadable manifest: {e}"))
}

/// Opens a file of the index for reading: it must be a regular file, reached without
/// following a link. Returns it with its size.
fn open_regular(path: &Path) -> std::result::Result<(File, u64), String> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    no_follow_no_block(&mut opts);
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Err("missing".into()),
        Ok(m) if !m.file_type().is_file() => return Err("not a regular file".into()),
        _ => {}
    }
    let file = opts
        .open(path)
        .map_err(|e| format!("cannot be opened ({e})"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read ({e})"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    Ok((file, meta.len()))
}

/// Reads the checked dump with hnsw_rs, then confirms it got the graph that was checked:
/// hnsw_rs reopens the files by name, and a point id beyond the slot table would make
/// every search panic.
fn load_graph(dir: &Path, slots: usize) -> Result<Hnsw<'static, f32, DistDot>> {
    // A reloaded graph borrows from its HnswIo for its whole life, so the (small) HnswIo
    // is leaked once per load to give the graph 'static. hnsw_rs cannot panic on a dump
    // that passed the checks; a panic is still turned into a rebuild.
    let dir_owned = dir.to_path_buf();
    let graph: Hnsw<'static, f32, DistDot> = std::panic::catch_unwind(move || {
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(&dir_owned, BASENAME)));
        io.load_hnsw::<f32, DistDot>()
    })
    .map_err(|_| corrupt(dir, "the graph files could not be parsed"))?
    .map_err(|e| corrupt(dir, format!("reload failed: {e}")))?;
    if graph.get_nb_point() != slots {
        return Err(corrupt(
            dir,
            "graph point count differs from the slot table",
        ));
    }
    let mut seen = vec![false; slots];
    for point in graph.get_point_indexation() {
        let id = point.get_origin_id();
        if id >= slots || std::mem::replace(&mut seen[id], true) {
            return Err(corrupt(dir, "the graph changed while it was read"));
        }
    }
    Ok(graph)
}

/// A few current vectors must find their own slot: catches a graph that parses but whose
/// links do not belong to its points (each point's vector was already compared with the
/// store's). The search is approximate, so one probe may miss in a valid graph: among the
/// 300 near-identical notes of a test store one self-search at ef 64 did in a CI run
/// (2026-12-02), and a single miss made a valid index look damaged, to be rebuilt at every
/// open. Most of the probes must find themselves.
fn probe(index: &VectorIndex) -> std::result::Result<(), String> {
    let graph = index.graph().ok_or("no graph")?;
    let step = (index.row_ids.len() / 8).max(1);
    let mut probed = 0;
    let mut missed = Vec::new();
    for &id in index.row_ids.iter().step_by(step).take(8) {
        let v = index.vector(id).expect("row");
        let want = index.current[&id];
        let found = graph.search(v, 10, 64);
        probed += 1;
        if !found.iter().any(|n| n.d_id == want) {
            missed.push(id);
        }
    }
    probe_verdict(probed, &missed)
}

/// The probe's verdict: damaged when more than half of the `probed` memories did not find
/// themselves (`missed`).
fn probe_verdict(probed: usize, missed: &[i64]) -> std::result::Result<(), String> {
    if missed.len() * 2 <= probed {
        return Ok(());
    }
    Err(format!(
        "self-search probe failed for {} of {probed} memories (the first: memory {})",
        missed.len(),
        missed[0]
    ))
}

#[cfg(test)]
mod tests {
    //! Every check of `verify` on a saved index damaged one way, each bounded in time (a
    //! check that hangs fails instead of hanging the run); the whole-engine counterparts
    //! (open, rebuild, search) are in tests/integration/index_tamper.rs.
    use super::*;
    use crate::events::Job;
    use serde_json::Value;
    use std::sync::mpsc;

    const DIM: usize = 16;

    #[test]
    fn the_probe_tolerates_a_few_misses_of_an_approximate_search_but_not_most() {
        assert_eq!(probe_verdict(8, &[]), Ok(()));
        assert_eq!(probe_verdict(8, &[3]), Ok(()));
        assert_eq!(probe_verdict(8, &[3, 5, 9, 11]), Ok(()));
        let err = probe_verdict(8, &[3, 5, 9, 11, 13]).unwrap_err();
        assert!(err.contains("5 of 8") && err.contains("memory 3"), "{err}");
        assert!(probe_verdict(1, &[7]).is_err());
    }

    fn filled(n: usize, seed: u64) -> VectorIndex {
        let vs = super::super::tests::unit_vectors(n, DIM, seed);
        let mut idx = VectorIndex::new(DIM, IndexParams::default(), n);
        let items = vs
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as i64 + 1, v, i as i64 + 1))
            .collect();
        idx.insert_batch(items, &Job::default()).unwrap();
        idx
    }

    /// A temporary directory with an index of 300 vectors saved in `<tmp>/s.db.index`.
    fn saved() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s.db.index");
        assert!(save(&filled(300, 7), &dir).unwrap());
        (tmp, dir)
    }

    /// Runs `f` on another thread and fails if it takes more than 60 s.
    fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the check did not finish within 60 s")
    }

    fn verify_bounded(dir: &Path) -> std::result::Result<(), String> {
        let dir = dir.to_path_buf();
        bounded(move || verify(&dir, DIM, IndexParams::default()).map(|_| ()))
    }

    /// Asserts the index at `dir` is refused, and why.
    fn refused(dir: &Path, why: &str) {
        match verify_bounded(dir) {
            Ok(()) => panic!("a damaged index passed verification"),
            Err(reason) => assert!(reason.contains(why), "refused, but for: {reason}"),
        }
    }

    fn manifest(dir: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(MANIFEST)).unwrap()).unwrap()
    }

    fn set_manifest(dir: &Path, m: &Value) {
        std::fs::write(dir.join(MANIFEST), serde_json::to_vec(m).unwrap()).unwrap();
    }

    /// Records a file's new size and checksum in the manifest: damage a checksum does not
    /// catch, as a deliberate edit would be.
    fn reseal(dir: &Path, name: &str) {
        let path = dir.join(name);
        let mut m = manifest(dir);
        m["files"][name] = serde_json::json!({
            "bytes": std::fs::metadata(&path).unwrap().len(),
            "sha256": sha256_file(&path).unwrap(),
        });
        set_manifest(dir, &m);
    }

    /// Overwrites bytes of a file at `offset` (from the end if negative), then reseals it.
    fn patch(dir: &Path, name: &str, offset: i64, bytes: &[u8]) {
        let path = dir.join(name);
        let mut content = std::fs::read(&path).unwrap();
        let at = if offset < 0 {
            content.len() - (-offset) as usize
        } else {
            offset as usize
        };
        content[at..at + bytes.len()].copy_from_slice(bytes);
        std::fs::write(&path, content).unwrap();
        reseal(dir, name);
    }

    /// Offset in the graph file of the first point of layer 0's first neighbour record.
    fn first_neighbour_offset(dir: &Path) -> usize {
        let g = std::fs::read(dir.join(graph_name())).unwrap();
        let word = std::mem::size_of::<usize>();
        let read_usize = |at: usize| usize::from_ne_bytes(g[at..at + word].try_into().unwrap());
        // description: magic, mode, max connections, level scale, layers, ef, points, dim
        let mut at = 4 + 1 + 1 + 8 + 1 + 3 * word;
        for _ in 0..2 {
            at += word + read_usize(at); // distance name, value type name
        }
        at += 1 + 4 + word; // layer count, layer magic, layer point count
        at += 4 + word + 1 + 4; // point magic, origin id, layer, rank
        assert!(read_usize(at) > 0, "the first point has neighbours");
        at + word
    }

    #[test]
    fn a_saved_index_verifies_and_loads() {
        let (_tmp, dir) = saved();
        let v = verify(&dir, DIM, IndexParams::default()).unwrap();
        assert_eq!(v.slot_ids, (1..=300).collect::<Vec<i64>>());
        let graph = load_graph(&dir, v.slot_ids.len()).unwrap();
        assert_eq!(graph.get_nb_point(), 300);
        let mut entries: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        entries.sort();
        let mut want = expected_files();
        want.push(MANIFEST.into());
        want.sort();
        assert_eq!(entries, want);
    }

    #[test]
    fn a_manifest_listing_no_files_is_refused() {
        let (_tmp, dir) = saved();
        let mut m = manifest(&dir);
        m["files"] = serde_json::json!({});
        set_manifest(&dir, &m);
        refused(&dir, "lists other files");
    }

    #[test]
    fn a_manifest_naming_other_paths_is_refused() {
        for bad in [
            "/dev/zero",
            "../s.db",
            "/etc/passwd",
            "sub/slots.bin",
            "slots.bin/",
        ] {
            let (_tmp, dir) = saved();
            let mut m = manifest(&dir);
            let files = m["files"].as_object_mut().unwrap();
            let entry = files.remove(IDS).unwrap();
            files.insert(bad.into(), entry);
            set_manifest(&dir, &m);
            refused(&dir, "lists other files");
        }
        for bad in ["/dev/zero", "../graph", "/tmp/graph", ""] {
            let (_tmp, dir) = saved();
            let mut m = manifest(&dir);
            m["basename"] = bad.into();
            set_manifest(&dir, &m);
            refused(&dir, "another graph");
        }
    }

    #[test]
    fn a_huge_manifest_is_refused_without_parsing() {
        let (_tmp, dir) = saved();
        let mut m = manifest(&dir);
        m["padding"] = "x".repeat(8 << 20).into();
        set_manifest(&dir, &m);
        refused(&dir, "implausibly large");
    }

    #[test]
    fn unknown_fields_and_other_versions_are_refused() {
        let (_tmp, dir) = saved();
        let mut m = manifest(&dir);
        m["extra"] = 1.into();
        set_manifest(&dir, &m);
        refused(&dir, "unreadable manifest");
        let mut m = manifest(&dir);
        m.as_object_mut().unwrap().remove("extra");
        m["format"] = 1.into();
        set_manifest(&dir, &m);
        refused(&dir, "another version");
    }

    #[test]
    fn a_truncated_data_file_is_refused() {
        // hnsw_rs calls process::exit(1) on a data file that ends early.
        let (_tmp, dir) = saved();
        let data = dir.join(data_name());
        let len = std::fs::metadata(&data).unwrap().len();
        File::options()
            .write(true)
            .open(&data)
            .unwrap()
            .set_len(len - 100)
            .unwrap();
        refused(&dir, "bytes, the manifest says");
        // With the manifest edited to match, the size still disagrees with the slot count.
        reseal(&dir, &data_name());
        refused(&dir, "disagrees with the slot count");
    }

    #[test]
    fn slot_counts_that_disagree_are_refused() {
        let (_tmp, dir) = saved();
        let mut m = manifest(&dir);
        m["slots"] = 301.into();
        set_manifest(&dir, &m);
        refused(&dir, "disagrees with the slot count");
        m["slots"] = 0.into();
        set_manifest(&dir, &m);
        refused(&dir, "empty graph");
    }

    #[test]
    fn a_slot_table_of_the_wrong_length_is_refused() {
        let (_tmp, dir) = saved();
        let ids = dir.join(IDS);
        let mut content = std::fs::read(&ids).unwrap();
        content.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&ids, &content).unwrap();
        reseal(&dir, IDS);
        refused(&dir, "slot table's size");
        // Eight more bytes: one id more than the graph has points.
        content.extend_from_slice(&[0; 5]);
        std::fs::write(&ids, &content).unwrap();
        reseal(&dir, IDS);
        refused(&dir, "slot table's size");
    }

    #[test]
    fn a_changed_byte_fails_the_checksum() {
        let (_tmp, dir) = saved();
        let ids = dir.join(IDS);
        let mut content = std::fs::read(&ids).unwrap();
        content[5] ^= 0x40;
        std::fs::write(&ids, &content).unwrap();
        refused(&dir, "does not match its checksum");
    }

    #[test]
    fn resealed_dumps_that_would_crash_hnsw_rs_are_refused() {
        let word = std::mem::size_of::<usize>();
        let data_point = 4 + word; // the data file's first point record
        let cases: Vec<(&str, i64, Vec<u8>, &str)> = vec![
            // hnsw_rs: vec![0; len] on the recorded length (abort on allocation)
            (
                "data",
                (data_point + 12) as i64,
                u64::MAX.to_ne_bytes().to_vec(),
                "bad length",
            ),
            // hnsw_rs: assert_eq!(origin_id, origin_id_data)
            (
                "data",
                (data_point + 4) as i64,
                7777u64.to_ne_bytes().to_vec(),
                "out of order",
            ),
            // hnsw_rs: assert_eq!(magic, MAGICDATAP)
            ("data", data_point as i64, vec![0; 4], "bad point magic"),
            // a NaN coordinate makes searches panic ("got a NaN in a distance")
            (
                "data",
                (data_point + 20) as i64,
                f32::NAN.to_ne_bytes().to_vec(),
                "non-finite",
            ),
            // hnsw_rs: points_by_layer[layer][rank] of the entry point, unchecked
            ("graph", -4, i32::MAX.to_ne_bytes().to_vec(), "entry point"),
            // hnsw_rs: load_description(..).unwrap() on a bad header
            ("graph", 0, vec![0; 4], "expected version"),
            // the point count hnsw_rs sizes its layers by
            (
                "graph",
                (4 + 1 + 1 + 8 + 1 + word) as i64,
                5usize.to_ne_bytes().to_vec(),
                "point count",
            ),
            (
                "graph",
                (4 + 1 + 1 + 8 + 1 + 2 * word) as i64,
                5usize.to_ne_bytes().to_vec(),
                "dimension",
            ),
        ];
        for (file, offset, bytes, why) in cases {
            let (_tmp, dir) = saved();
            let name = if file == "data" {
                data_name()
            } else {
                graph_name()
            };
            patch(&dir, &name, offset, &bytes);
            refused(&dir, why);
        }
        // A neighbour naming a point that does not exist (an unchecked index in hnsw_rs),
        // and one at a NaN distance (a panic when hnsw_rs sorts the neighbours).
        let (_tmp, dir) = saved();
        let at = first_neighbour_offset(&dir) + std::mem::size_of::<usize>() + 1;
        patch(&dir, &graph_name(), at as i64, &i32::MAX.to_ne_bytes());
        refused(&dir, "missing point");
        let (_tmp, dir) = saved();
        let at = first_neighbour_offset(&dir) + std::mem::size_of::<usize>() + 1 + 4;
        patch(&dir, &graph_name(), at as i64, &f32::NAN.to_ne_bytes());
        refused(&dir, "bad neighbour");
    }

    #[test]
    fn a_graph_with_trailing_bytes_is_refused() {
        let (_tmp, dir) = saved();
        let path = dir.join(graph_name());
        let mut content = std::fs::read(&path).unwrap();
        content.extend_from_slice(b"junk");
        std::fs::write(&path, content).unwrap();
        reseal(&dir, &graph_name());
        refused(&dir, "trailing bytes");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_without_reading_them() {
        use std::os::unix::fs::symlink;
        // A link to /dev/zero in place of the slot table (reading it would never end).
        let (_tmp, dir) = saved();
        std::fs::remove_file(dir.join(IDS)).unwrap();
        symlink("/dev/zero", dir.join(IDS)).unwrap();
        refused(&dir, "not a regular file");
        // A fifo in place of the manifest and of the data file (opening one blocks).
        for name in [MANIFEST.to_string(), data_name()] {
            let (_tmp, dir) = saved();
            std::fs::remove_file(dir.join(&name)).unwrap();
            let made = std::process::Command::new("mkfifo")
                .arg(dir.join(&name))
                .status()
                .unwrap();
            assert!(made.success());
            refused(&dir, "not a regular file");
        }
        // A link to a valid file is refused too: only the directory's own files are read.
        let (tmp, dir) = saved();
        let elsewhere = tmp.path().join("graph-copy");
        std::fs::rename(dir.join(graph_name()), &elsewhere).unwrap();
        symlink(&elsewhere, dir.join(graph_name())).unwrap();
        refused(&dir, "not a regular file");
        // The index directory itself a link to a valid index.
        let (tmp, dir) = saved();
        let real = tmp.path().join("real-index");
        std::fs::rename(&dir, &real).unwrap();
        symlink(&real, &dir).unwrap();
        refused(&dir, "symbolic link");
    }

    #[test]
    fn an_index_path_that_is_a_file_is_refused_then_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s.db.index");
        std::fs::write(&dir, b"not a directory").unwrap();
        refused(&dir, "not a directory");
        assert!(save(&filled(300, 7), &dir).unwrap());
        verify_bounded(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn saving_over_a_link_replaces_the_link_not_its_target() {
        let (tmp, dir) = saved();
        let target = tmp.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep.txt"), b"mine").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&target, &dir).unwrap();
        assert!(save(&filled(300, 7), &dir).unwrap());
        verify_bounded(&dir).unwrap();
        assert!(!std::fs::symlink_metadata(&dir)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(target.join("keep.txt")).unwrap(), b"mine");
    }

    /// Entries beside the index directory other than it and its lock file.
    fn leftovers(dir: &Path) -> Vec<String> {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::read_dir(dir.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&name) && *n != name && *n != format!("{name}.lock"))
            .collect()
    }

    #[test]
    fn concurrent_saves_from_threads_leave_a_valid_index_and_no_junk() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s.db.index");
        let a = filled(300, 7);
        let b = filled(420, 8);
        std::thread::scope(|s| {
            for idx in [&a, &b, &a, &b] {
                let dir = &dir;
                s.spawn(move || {
                    for _ in 0..8 {
                        assert!(save(idx, dir).unwrap());
                    }
                });
            }
        });
        let v = verify(&dir, DIM, IndexParams::default()).unwrap();
        assert!([300, 420].contains(&v.slot_ids.len()));
        load_graph(&dir, v.slot_ids.len()).unwrap();
        assert_eq!(leftovers(&dir), Vec::<String>::new());
    }

    #[test]
    fn stale_temporary_directories_are_removed_by_the_next_save() {
        let (tmp, dir) = saved();
        let stale_tmp = sibling(&dir, "tmp");
        let stale_old = sibling(&dir, "old");
        std::fs::create_dir(&stale_tmp).unwrap();
        std::fs::write(stale_tmp.join(MANIFEST), b"{").unwrap();
        std::fs::create_dir(&stale_old).unwrap();
        // The fixed-name temporary directory of earlier versions: removed only once old.
        let legacy = tmp.path().join("s.db.index.tmp");
        std::fs::write(&legacy, b"").unwrap();
        // Somebody else's file that merely shares the prefix is never touched.
        let unrelated = tmp.path().join("s.db.indexes");
        std::fs::write(&unrelated, b"").unwrap();
        assert!(save(&filled(300, 7), &dir).unwrap());
        assert!(!stale_tmp.exists() && !stale_old.exists());
        assert!(legacy.exists() && unrelated.exists());
        File::options()
            .write(true)
            .open(&legacy)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - 2 * STALE_AGE)
            .unwrap();
        assert!(save(&filled(300, 7), &dir).unwrap());
        assert!(!legacy.exists() && unrelated.exists());
        verify_bounded(&dir).unwrap();
    }

    #[test]
    fn a_save_that_cannot_get_the_lock_writes_nothing() {
        let (_tmp, dir) = saved();
        let before = std::fs::read(dir.join(MANIFEST)).unwrap();
        let IndexLock::Held(holder) = IndexLock::acquire(&dir, true, Duration::ZERO) else {
            panic!("the lock is free");
        };
        let started = Instant::now();
        assert!(!save(&filled(420, 8), &dir).unwrap());
        assert!(started.elapsed() >= SAVE_WAIT);
        assert_eq!(std::fs::read(dir.join(MANIFEST)).unwrap(), before);
        assert_eq!(leftovers(&dir), Vec::<String>::new());
        drop(holder);
        assert!(save(&filled(420, 8), &dir).unwrap());
    }
}
