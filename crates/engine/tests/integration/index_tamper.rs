//! A tampered or half-written persisted index (`<db>.index/`), opened by the whole engine:
//! every case must open within 60 s (a hang fails the test instead of hanging the run),
//! rebuild from SQLite with a one-line reason, give the same search results as a fresh
//! build, and leave a valid index directory that the next open loads. Saves from several
//! threads and processes at once must leave a loadable index and no temporary directories.
//!
//! `robustness.rs` covers plain damage (a deleted directory, a truncated graph file, a
//! missing data file, a garbage slot table, a cut manifest, another store's index); this
//! file covers deliberate tampering. `index/persist.rs` has the file-level unit tests of
//! each check.

use crate::common::*;
use crate::robustness::{note, saved_store};
use somna_engine::embed::HashEmbedder;
use somna_engine::index::VectorIndex;
use somna_engine::store::Store;
use somna_engine::{Config, Job, SearchQuery, Somna};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(60);
const INDEX_FILES: [&str; 4] = [
    "graph.hnsw.data",
    "graph.hnsw.graph",
    "manifest.json",
    "slots.bin",
];
/// Set in a child process of this test binary to make `child_process_entry` act.
const CHILD_ENV: &str = "SOMNA_INDEX_TAMPER_CHILD";

/// A store of 300 notes whose saved index is a fresh build from SQLite, with that build's
/// search results.
struct Case {
    dir: tempfile::TempDir,
    cfg: Config,
    reference: Vec<Vec<(i64, String)>>,
}

impl Case {
    fn new() -> Self {
        let (dir, cfg, _) = saved_store(300);
        std::fs::remove_dir_all(index_dir(&cfg)).unwrap();
        let engine = open_bounded(&cfg);
        assert!(engine.open_report().index_rebuilt.is_some());
        let reference = results(&engine);
        drop(engine); // saves the fresh build
        Self {
            dir,
            cfg,
            reference,
        }
    }

    fn index(&self) -> PathBuf {
        index_dir(&self.cfg)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.index().join(name)
    }

    /// Cuts index file `name` to the length `to` gives for its current length.
    fn truncate(&self, name: &str, to: impl FnOnce(u64) -> u64) {
        let path = self.file(name);
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(to(len))
            .unwrap();
    }

    fn manifest(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.file("manifest.json")).unwrap()).unwrap()
    }

    fn set_manifest(&self, m: &serde_json::Value) {
        std::fs::write(self.file("manifest.json"), serde_json::to_vec(m).unwrap()).unwrap();
    }

    /// Records a file's current size and checksum in the manifest, as a deliberate edit
    /// would: the damage is then invisible to the checksum.
    fn reseal(&self, name: &str) {
        use sha2::{Digest, Sha256};
        let content = std::fs::read(self.file(name)).unwrap();
        let sha: String = Sha256::digest(&content)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut m = self.manifest();
        let entry = &mut m["files"][name];
        *entry = if entry.is_string() {
            sha.into() // the format before sizes were recorded
        } else {
            serde_json::json!({ "bytes": content.len(), "sha256": sha })
        };
        self.set_manifest(&m);
    }

    /// Opens the tampered store: the index must be rebuilt for a reason containing `why`,
    /// search as a fresh build does, and be saved valid.
    fn assert_rebuilt(&self, why: &str) {
        let engine = open_bounded(&self.cfg);
        let reason = engine
            .open_report()
            .index_rebuilt
            .clone()
            .expect("the tampered index was loaded instead of rebuilt");
        assert!(reason.contains(why), "rebuilt, but for: {reason}");
        assert!(!reason.contains('\n'), "a reason of one line: {reason}");
        assert_eq!(results(&engine), self.reference, "search after the rebuild");
        drop(engine);
        self.assert_saved_valid();
    }

    /// `<db>.index/` is a real directory of exactly the index's files, nothing is left
    /// beside it, and the next open loads it (no rebuild) and searches the same.
    fn assert_saved_valid(&self) {
        let dir = self.index();
        let meta = std::fs::symlink_metadata(&dir).unwrap();
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, INDEX_FILES);
        for name in INDEX_FILES {
            assert!(std::fs::symlink_metadata(dir.join(name)).unwrap().is_file());
        }
        assert_eq!(leftovers(&self.cfg), Vec::<String>::new());
        let engine = open_bounded(&self.cfg);
        assert_eq!(
            engine.open_report().index_rebuilt,
            None,
            "the index saved after the rebuild was not loaded"
        );
        assert_eq!(
            engine.stats().unwrap().vector_index,
            somna_engine::index::SearchPath::Hnsw
        );
        assert_eq!(results(&engine), self.reference);
    }
}

/// Opens the store on another thread; fails if that takes more than 60 s.
fn open_bounded(cfg: &Config) -> Somna {
    let (tx, rx) = mpsc::channel();
    let cfg = cfg.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Somna::open_with(
            &cfg,
            Arc::new(HashEmbedder::new(384)),
            &Job::default(),
        ));
    });
    rx.recv_timeout(BOUND)
        .expect("opening the store did not finish within 60 s")
        .expect("open the store")
}

/// Hits (id, semantic similarity) of a few searches, in rank order.
fn results(engine: &Somna) -> Vec<Vec<(i64, String)>> {
    [0, 42, 150, 233, 299]
        .iter()
        .map(|&i| {
            let r = engine.search_readonly(&SearchQuery::new(note(i))).unwrap();
            r.hits
                .iter()
                .map(|h| (h.memory.id, format!("{:.6}", h.signals.semantic)))
                .collect()
        })
        .collect()
}

/// Entries beside the index directory (temporary or set-aside directories) other than it
/// and its lock file.
fn leftovers(cfg: &Config) -> Vec<String> {
    let dir = index_dir(cfg);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&name) && *n != name && *n != format!("{name}.lock"))
        .collect()
}

#[test]
fn a_manifest_listing_no_files_is_rebuilt() {
    let case = Case::new();
    let mut m = case.manifest();
    m["files"] = serde_json::json!({});
    case.set_manifest(&m);
    case.assert_rebuilt("lists other files");
}

#[test]
fn a_truncated_data_file_is_rebuilt() {
    let case = Case::new();
    case.truncate("graph.hnsw.data", |len| len - 1000);
    case.assert_rebuilt("graph.hnsw.data is");
}

#[test]
fn a_truncated_data_file_with_a_matching_manifest_is_rebuilt() {
    // The case where hnsw_rs' loader calls process::exit(1): the checksum matches.
    let case = Case::new();
    case.truncate("graph.hnsw.data", |len| len / 2);
    case.reseal("graph.hnsw.data");
    case.assert_rebuilt("disagrees with the slot count");
}

#[test]
fn a_manifest_naming_dev_zero_is_rebuilt() {
    let case = Case::new();
    let mut m = case.manifest();
    let files = m["files"].as_object_mut().unwrap();
    let entry = files.remove("slots.bin").unwrap();
    files.insert("/dev/zero".into(), entry);
    case.set_manifest(&m);
    case.assert_rebuilt("lists other files");
}

#[test]
fn a_manifest_naming_paths_outside_the_directory_is_rebuilt() {
    for bad in ["../somna.db", "/etc/passwd", "./slots.bin"] {
        let case = Case::new();
        let mut m = case.manifest();
        let files = m["files"].as_object_mut().unwrap();
        let entry = files.remove("graph.hnsw.graph").unwrap();
        files.insert(bad.into(), entry);
        case.set_manifest(&m);
        case.assert_rebuilt("lists other files");
    }
    let case = Case::new();
    let mut m = case.manifest();
    m["basename"] = "../../graph".into();
    case.set_manifest(&m);
    case.assert_rebuilt("another graph");
}

#[test]
fn a_huge_manifest_is_rebuilt() {
    let case = Case::new();
    let mut m = case.manifest();
    m["padding"] = vec![0u8; 4 << 20].into();
    case.set_manifest(&m);
    case.assert_rebuilt("implausibly large");
}

#[test]
fn a_manifest_whose_slot_count_disagrees_is_rebuilt() {
    let case = Case::new();
    let mut m = case.manifest();
    m["slots"] = (m["slots"].as_u64().unwrap() - 1).into();
    case.set_manifest(&m);
    case.assert_rebuilt("disagrees with the slot count");
}

#[test]
fn a_slot_table_of_the_wrong_length_is_rebuilt() {
    let case = Case::new();
    let ids = case.file("slots.bin");
    let mut content = std::fs::read(&ids).unwrap();
    content.truncate(content.len() - 3);
    std::fs::write(&ids, content).unwrap();
    case.reseal("slots.bin");
    case.assert_rebuilt("slot table's size");
}

#[test]
fn a_data_record_of_impossible_length_is_rebuilt() {
    // hnsw_rs would allocate the recorded length (an abort, not a panic).
    let case = Case::new();
    let data = case.file("graph.hnsw.data");
    let mut content = std::fs::read(&data).unwrap();
    let at = 4 + std::mem::size_of::<usize>() + 12;
    content[at..at + 8].copy_from_slice(&(1u64 << 46).to_ne_bytes());
    std::fs::write(&data, content).unwrap();
    case.reseal("graph.hnsw.data");
    case.assert_rebuilt("bad length");
}

#[test]
fn a_vector_changed_in_the_graph_is_rebuilt() {
    // The graph's points are the index's exact vectors (nothing else holds them): one
    // that differs from the store's, in a dump that parses, must not be loaded.
    let case = Case::new();
    let data = case.file("graph.hnsw.data");
    let mut content = std::fs::read(&data).unwrap();
    // the first point's first coordinate, after its id and its length
    let at = 4 + std::mem::size_of::<usize>() + 12 + 8;
    let x = f32::from_ne_bytes(content[at..at + 4].try_into().unwrap());
    content[at..at + 4].copy_from_slice(&(x + 0.25).to_ne_bytes());
    std::fs::write(&data, content).unwrap();
    case.reseal("graph.hnsw.data");
    case.assert_rebuilt("differs from the store's");
}

#[test]
fn an_index_saved_by_the_previous_format_is_rebuilt() {
    let case = Case::new();
    let mut m = case.manifest();
    m["format"] = 1.into();
    let files = m["files"].as_object_mut().unwrap();
    for entry in files.values_mut() {
        *entry = entry["sha256"].clone();
    }
    case.set_manifest(&m);
    case.assert_rebuilt("another version");
}

#[test]
fn an_index_path_that_is_a_regular_file_is_rebuilt_and_replaced() {
    let case = Case::new();
    std::fs::remove_dir_all(case.index()).unwrap();
    std::fs::write(case.index(), b"a regular file").unwrap();
    case.assert_rebuilt("not a directory");
}

#[cfg(unix)]
#[test]
fn special_files_in_the_index_are_rebuilt_without_reading_them() {
    use std::os::unix::fs::symlink;
    let case = Case::new();
    std::fs::remove_file(case.file("slots.bin")).unwrap();
    symlink("/dev/zero", case.file("slots.bin")).unwrap();
    case.assert_rebuilt("not a regular file");

    for name in ["graph.hnsw.data", "manifest.json"] {
        let case = Case::new();
        std::fs::remove_file(case.file(name)).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(case.file(name))
            .status()
            .unwrap();
        assert!(made.success());
        case.assert_rebuilt("not a regular file");
    }
}

#[cfg(unix)]
#[test]
fn an_index_path_that_is_a_link_is_rebuilt_and_its_target_left_alone() {
    let case = Case::new();
    let target = case.dir.path().join("elsewhere");
    std::fs::rename(case.index(), &target).unwrap();
    std::os::unix::fs::symlink(&target, case.index()).unwrap();
    case.assert_rebuilt("symbolic link");
    // The link was replaced by a directory; what it pointed to is untouched.
    let mut names: Vec<String> = std::fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, INDEX_FILES);
}

#[test]
fn a_stale_temporary_directory_is_removed_by_the_next_save() {
    let case = Case::new();
    // What a save killed mid-way leaves: a temporary directory and a set-aside old one.
    let mut tmp = case.index().into_os_string();
    tmp.push(".tmp-4000000-0-0badc0de");
    let mut old = case.index().into_os_string();
    old.push(".old-4000000-0-0badc0de");
    for d in [&tmp, &old] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(Path::new(d).join("graph.hnsw.data"), b"half").unwrap();
    }
    // A crash between moving the old directory aside and the new one in: no index.
    std::fs::remove_dir_all(case.index()).unwrap();
    case.assert_rebuilt("no saved index");
}

/// Opens the store's index alone and saves it `rounds` times, each time after re-adding
/// one stored vector (the index then has something to save, and the store is unchanged).
fn save_repeatedly(db: &Path, rounds: usize) {
    let store = Store::open(db).unwrap();
    let cfg = Config::new(db, "");
    let (mut index, _) = VectorIndex::open(&store, 384, cfg.index, &Job::default()).unwrap();
    let all = store.read().embeddings_since(0).unwrap();
    for round in 0..rounds {
        let (id, v, seq) = &all[(round * 37) % all.len()];
        index.upsert(*id, v, *seq).unwrap();
        index.save().unwrap();
    }
}

#[test]
fn concurrent_saves_from_threads_leave_a_loadable_index() {
    let case = Case::new();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| save_repeatedly(&case.cfg.db_path, 10));
        }
    });
    case.assert_saved_valid();
}

/// Runs this test binary's `child_process_entry` with `task`; returns its stdout and stderr.
fn run_child(task: &str) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "index_tamper::child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, task)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a child for at most 60 s (killing it after), returning its output.
fn wait_bounded(mut child: std::process::Child) -> std::process::Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > BOUND {
            let _ = child.kill();
            panic!("the child process did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The other process's side of the multi-process tests (a no-op in a normal run).
#[test]
fn child_process_entry() {
    let Ok(task) = std::env::var(CHILD_ENV) else {
        return;
    };
    match task.split_once(':') {
        Some(("save", db)) => save_repeatedly(Path::new(db), 10),
        Some(("open", db)) => {
            let engine = Somna::open_with(
                &Config::new(db, ""),
                Arc::new(HashEmbedder::new(384)),
                &Job::default(),
            )
            .unwrap();
            println!("REBUILT: {:?}", engine.open_report().index_rebuilt);
        }
        _ => panic!("unknown task {task}"),
    }
}

#[test]
fn concurrent_saves_from_two_processes_leave_a_loadable_index() {
    let case = Case::new();
    let db = case.cfg.db_path.to_str().unwrap().to_string();
    let children: Vec<_> = (0..2).map(|_| run_child(&format!("save:{db}"))).collect();
    save_repeatedly(&case.cfg.db_path, 10);
    for child in children {
        let out = wait_bounded(child);
        assert!(
            out.status.success(),
            "the saving process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    case.assert_saved_valid();
}

#[test]
fn a_tampered_index_never_ends_or_stalls_the_process() {
    // In a separate process, so that an exit or abort inside hnsw_rs fails this test
    // rather than ending the test run: the dump is truncated with a matching manifest
    // (process::exit(1) in hnsw_rs' loader), and the process must open the store, say
    // why it rebuilt, and exit normally with nothing on stderr.
    let case = Case::new();
    let data = case.file("graph.hnsw.data");
    let content = std::fs::read(&data).unwrap();
    std::fs::write(&data, &content[..content.len() / 2]).unwrap();
    case.reseal("graph.hnsw.data");
    let out = wait_bounded(run_child(&format!(
        "open:{}",
        case.cfg.db_path.to_str().unwrap()
    )));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("REBUILT: Some("), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    case.assert_saved_valid();
}
