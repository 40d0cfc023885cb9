//! Somna's own JSON export: the whole store with ids preserved, so an export imported into
//! an empty store is the same store: every memory (with its embedding and access counts),
//! link, message, history entry and co-access pair (version 1), and since version 2 the
//! operation log (sleep cycles and curations, undone ones too), the concept clusters with
//! their members, merges and energies, the cached layouts (and their kept past computations),
//! the golden queries and their
//! runs, the ledger, the settings and the highest memory id ever given. Every section
//! added after version 1 defaults to empty, so an older export still imports. The vector
//! index and the lexical index are not exported: they are rebuilt from the memories.
//! [`write_export`] writes one to a file all or nothing.

use crate::memory::Memory;
pub use crate::store::ExportedMessage;
use crate::store::{
    CoAccess, Contradiction, CycleRow, ExportedClusters, ExportedGoldenResult, ExportedLedgerEntry,
    GoldenQuery, GoldenRunRow, HistoryEntry, LayoutSnapshot, Link, Restatement, StoredLayout,
};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub const EXPORT_FORMAT: &str = "somna-export";
/// The version [`crate::Somna::export`] writes; every version up to it imports.
pub const EXPORT_VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMemory {
    #[serde(flatten)]
    pub memory: Memory,
    /// Stored so an import needs no model and loses nothing.
    pub embedding: Option<Vec<f32>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportDoc {
    pub format: String,
    pub version: u32,
    pub exported_at: i64,
    pub memories: Vec<ExportedMemory>,
    pub links: Vec<Link>,
    pub messages: Vec<ExportedMessage>,
    pub history: Vec<HistoryEntry>,
    #[serde(default)]
    pub co_access: Vec<CoAccess>,
    /// The operation log: sleep cycles and curations, with what each changed (so they can
    /// still be undone after an import).
    #[serde(default)]
    pub operations: Vec<CycleRow>,
    #[serde(default)]
    pub clusters: ExportedClusters,
    #[serde(default)]
    pub layouts: Vec<StoredLayout>,
    /// Every kept full computation of the layouts (where the points were over time). An
    /// export without them gets its cached layouts as the first.
    #[serde(default)]
    pub layout_history: Vec<LayoutSnapshot>,
    #[serde(default)]
    pub golden_queries: Vec<GoldenQuery>,
    #[serde(default)]
    pub golden_runs: Vec<GoldenRunRow>,
    #[serde(default)]
    pub golden_results: Vec<ExportedGoldenResult>,
    #[serde(default)]
    pub ledger: Vec<ExportedLedgerEntry>,
    /// Facts a newer fact contradicts (the second rule of "stale").
    #[serde(default)]
    pub fact_contradictions: Vec<Contradiction>,
    /// Facts said again, how often and when last (a fact is confirmed when said again).
    #[serde(default)]
    pub fact_restated: Vec<Restatement>,
    /// The store's settings (`meta`): the embedding model, sleep settings, the liquid
    /// clustering step.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// The highest memory id ever given, so ids of memories removed before the export are
    /// not given again.
    #[serde(default)]
    pub last_memory_id: Option<i64>,
}

impl ExportDoc {
    /// An export of nothing, at `exported_at`.
    pub fn empty(exported_at: i64) -> ExportDoc {
        ExportDoc {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            exported_at,
            memories: Vec::new(),
            links: Vec::new(),
            messages: Vec::new(),
            history: Vec::new(),
            co_access: Vec::new(),
            operations: Vec::new(),
            clusters: ExportedClusters::default(),
            layouts: Vec::new(),
            layout_history: Vec::new(),
            golden_queries: Vec::new(),
            golden_runs: Vec::new(),
            golden_results: Vec::new(),
            ledger: Vec::new(),
            fact_contradictions: Vec::new(),
            fact_restated: Vec::new(),
            settings: BTreeMap::new(),
            last_memory_id: None,
        }
    }
}

/// Writes `doc` as JSON (`pretty`: indented) to `path`, or fails with [`Error::Io`] naming
/// it. A failed export never leaves a partial file under `path`: the JSON goes to a
/// temporary file in the same folder, which is flushed (a full disk is an error, not a
/// short file), synced, and only then renamed over `path`; a file already there stays as
/// it was until then. The temporary file is removed on any failure. A new file gets the
/// usual permissions (0666 less the umask); a replaced one keeps its own.
///
/// An existing path that is not a regular file (`/dev/stdout`, a FIFO) is written in
/// place and flushed: renaming over it would replace the device, not write to it.
pub fn write_export(doc: &ExportDoc, path: &Path, pretty: bool) -> Result<()> {
    write_file(path, |w| {
        if pretty {
            serde_json::to_writer_pretty(&mut *w, doc)?;
        } else {
            serde_json::to_writer(&mut *w, doc)?;
        }
        w.write_all(b"\n")
    })
}

/// Writes what `body` writes to `path` as [`write_export`] describes.
fn write_file(path: &Path, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    let failed = |e: io::Error| Error::io(path, e);
    let existing = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(failed(e)),
    };
    if let Some(m) = existing.as_ref().filter(|m| !m.is_file()) {
        if m.is_dir() {
            return Err(failed(io::Error::other("is a directory, not a file")));
        }
        let file = OpenOptions::new().write(true).open(path).map_err(failed)?;
        let mut w = BufWriter::new(file);
        body(&mut w).map_err(failed)?;
        return w.flush().map_err(failed);
    }
    // Through a symbolic link: the file it names is replaced, the link stays.
    let resolved = match existing {
        Some(_) => std::fs::canonicalize(path).map_err(failed)?,
        None => path.to_path_buf(),
    };
    let path = resolved.as_path();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| failed(io::Error::other("names no file")))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Through open(2), so less the umask, as `File::create` would make it.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    // From here on, an early return drops `tmp`, which deletes the temporary file.
    if let Some(m) = &existing {
        tmp.as_file()
            .set_permissions(m.permissions())
            .map_err(failed)?;
    }
    {
        let mut w = BufWriter::new(tmp.as_file_mut());
        body(&mut w).map_err(failed)?;
        // `BufWriter`'s drop would flush too, but drop the error: a full disk here must fail.
        w.flush().map_err(failed)?;
    }
    tmp.as_file().sync_all().map_err(failed)?;
    tmp.persist(path).map_err(|e| failed(e.error))?;
    // The rename is durable once the folder is synced (not possible everywhere: best effort).
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files in `dir`, by name.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A body that writes part of its output, then fails as a full disk would.
    fn fails_midway(w: &mut dyn Write) -> io::Result<()> {
        w.write_all(&[b'x'; 100_000])?;
        Err(io::Error::other("no space left (simulated)"))
    }

    #[test]
    fn a_failed_write_leaves_no_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let err = write_file(&path, fails_midway).unwrap_err();
        assert_eq!(err.code(), "io");
        assert!(err.to_string().contains("out.json"), "{err}");
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn a_failed_write_over_a_file_leaves_the_old_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "the old export").unwrap();
        assert_eq!(write_file(&path, fails_midway).unwrap_err().code(), "io");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "the old export");
        assert_eq!(names(dir.path()), ["out.json"]);
    }

    #[test]
    fn a_write_replaces_the_file_keeping_its_permissions_and_a_link_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_file(&path, |w| w.write_all(b"first")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            // The umask decides, as for File::create; never the temporary file's 0600.
            assert_ne!(mode(&path), 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            write_file(&link, |w| w.write_all(b"second")).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
            assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
            assert_eq!(mode(&path), 0o640);
            assert_eq!(names(dir.path()), ["link.json", "out.json"]);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_export_to_a_full_device_is_an_error_and_the_device_stays() {
        use std::os::unix::fs::FileTypeExt;
        let path = Path::new("/dev/full");
        if !std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device()) {
            eprintln!("no /dev/full here: skipped");
            return;
        }
        let doc = ExportDoc::empty(0);
        let err = write_export(&doc, path, true).unwrap_err();
        assert_eq!(err.code(), "io");
        match err {
            Error::Io { source, .. } => assert_eq!(source.raw_os_error(), Some(28), "{source}"),
            other => panic!("{other}"),
        }
        assert!(std::fs::metadata(path)
            .unwrap()
            .file_type()
            .is_char_device());
        assert!(!names(Path::new("/dev"))
            .iter()
            .any(|n| n.starts_with(".full.")));
    }
}
