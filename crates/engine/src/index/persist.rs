//! Saving and verified loading of the vector index (`<db>.index/`).

use super::{IndexParams, VectorIndex};
use crate::embed::model::sha256_file;
use crate::store::Store;
use crate::{Error, Result};
use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::{DistDot, Hnsw};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const FORMAT: u32 = 1;
const MANIFEST: &str = "manifest.json";
const IDS: &str = "slots.bin";

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    dim: usize,
    params: IndexParams,
    /// Store change-log position the saved graph reflects.
    seq: i64,
    slots: usize,
    /// hnsw_rs dump basename (it may choose another than asked).
    basename: String,
    /// sha256 of every file of the index.
    files: HashMap<String, String>,
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

pub fn save(index: &VectorIndex, dir: &Path) -> Result<()> {
    let tmp = dir.with_extension("index.tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let basename = index
        .graph
        .file_dump(&tmp, "graph")
        .map_err(|e| corrupt(&tmp, format!("dump failed: {e}")))?;
    let ids: Vec<u8> = index
        .slot_ids
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let ids_path = tmp.join(IDS);
    std::fs::write(&ids_path, ids).map_err(|e| Error::io(&ids_path, e))?;
    let mut files = HashMap::new();
    for name in [
        format!("{basename}.hnsw.graph"),
        format!("{basename}.hnsw.data"),
        IDS.to_string(),
    ] {
        files.insert(name.clone(), sha256_file(&tmp.join(&name))?);
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
    std::fs::write(&mpath, serde_json::to_vec_pretty(&manifest)?)
        .map_err(|e| Error::io(&mpath, e))?;
    // Swap in the new directory; a crash in between leaves either the old index, or no
    // index (rebuilt on next open), never a half-written one under the real name.
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&tmp, dir).map_err(|e| Error::io(dir, e))?;
    Ok(())
}

pub fn load(dir: &Path, store: &Store, dim: usize, params: IndexParams) -> Result<VectorIndex> {
    let mpath = dir.join(MANIFEST);
    let text = std::fs::read(&mpath).map_err(|_| corrupt(dir, "no saved index"))?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| corrupt(dir, format!("unreadable manifest: {e}")))?;
    if manifest.format != FORMAT || manifest.dim != dim {
        return Err(corrupt(dir, "saved with another format or dimension"));
    }
    if (manifest.params.m, manifest.params.ef_construction) != (params.m, params.ef_construction) {
        return Err(corrupt(dir, "saved with other construction parameters"));
    }
    for (name, expected) in &manifest.files {
        let actual =
            sha256_file(&dir.join(name)).map_err(|_| corrupt(dir, format!("{name} missing")))?;
        if &actual != expected {
            return Err(corrupt(dir, format!("{name} does not match its checksum")));
        }
    }
    if manifest.seq > store.read().max_embed_seq()? {
        return Err(corrupt(
            dir,
            "index is ahead of the store (another store's index?)",
        ));
    }
    let ids_bytes = std::fs::read(dir.join(IDS)).map_err(|e| Error::io(dir.join(IDS), e))?;
    let slot_ids: Vec<i64> = ids_bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8-byte chunk")))
        .collect();
    if slot_ids.len() != manifest.slots {
        return Err(corrupt(dir, "slot table length differs from the manifest"));
    }

    // hnsw_rs panics (asserts) on malformed files; the checksums make that unlikely, and a
    // panic is still turned into a rebuild. A reloaded graph borrows from its HnswIo for its
    // whole life, so the (small) HnswIo is leaked once per load to give the graph 'static.
    let dir_owned = dir.to_path_buf();
    let basename = manifest.basename.clone();
    let graph: Hnsw<'static, f32, DistDot> = std::panic::catch_unwind(move || {
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(&dir_owned, &basename)));
        io.load_hnsw::<f32, DistDot>()
    })
    .map_err(|_| corrupt(dir, "the graph files could not be parsed"))?
    .map_err(|e| corrupt(dir, format!("reload failed: {e}")))?;
    if graph.get_nb_point() != slot_ids.len() {
        return Err(corrupt(
            dir,
            "graph point count differs from the slot table",
        ));
    }

    let mut index = VectorIndex {
        dim,
        params: IndexParams {
            ef_search: params.ef_search,
            ..manifest.params
        },
        graph,
        slot_ids,
        current: HashMap::new(),
        rows: Vec::new(),
        row_ids: Vec::new(),
        row_of: HashMap::new(),
        seq: manifest.seq,
        dir: Some(dir.to_path_buf()),
        dirty: false,
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
        index.set_row(id, &v);
        index.current.insert(id, slot);
    }
    probe(&index).map_err(|reason| corrupt(dir, reason))?;
    Ok(index)
}

/// A few current vectors must find their own slot: catches a graph that parses but does
/// not belong to these vectors.
fn probe(index: &VectorIndex) -> std::result::Result<(), String> {
    let step = (index.row_ids.len() / 8).max(1);
    for &id in index.row_ids.iter().step_by(step).take(8) {
        let v: Vec<f32> = index
            .vector(id)
            .expect("row")
            .iter()
            .map(|x| x * super::SHRINK)
            .collect();
        let want = index.current[&id];
        let found = index.graph.search(&v, 10, 64);
        if !found.iter().any(|n| n.d_id == want) {
            return Err(format!("self-search probe failed for memory {id}"));
        }
    }
    Ok(())
}
