//! The liquid loop's neighbour lists saved beside the store (`<db>.liquid`), so a restart
//! does not rebuild them (the slowest part of a first step: 13.9 s at 100K memories).
//!
//! Layout (little-endian): magic `SMLN`, format u32, k u32, the index change-log position
//! the lists reflect (i64), the number of lists (u64); then per memory its id (i64), the
//! list length (u32) and (neighbour id i64, cosine f32) pairs. The file is derived data: any
//! mismatch or damage makes the loader return `None` and the lists are rebuilt.

use crate::{Error, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 4] = b"SMLN";
const FORMAT: u32 = 1;

/// Neighbour lists by memory id: (neighbour id, cosine similarity).
pub type Lists = HashMap<i64, Vec<(i64, f32)>>;

/// `<db>.liquid` beside a file store; `None` for an in-memory store.
pub fn path_for(db: &Path) -> Option<PathBuf> {
    (db != Path::new(":memory:")).then(|| {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".liquid");
        db.with_file_name(name)
    })
}

pub fn save<'a>(
    path: &Path,
    k: usize,
    seq: i64,
    lists: impl ExactSizeIterator<Item = (i64, &'a [(i64, f32)])>,
) -> Result<()> {
    let mut out = Vec::with_capacity(24 + lists.len() * (12 + k * 12));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(k as u32).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(lists.len() as u64).to_le_bytes());
    for (id, list) in lists {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&(list.len() as u32).to_le_bytes());
        for (n, s) in list {
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&s.to_le_bytes());
        }
    }
    let tmp = path.with_extension("liquid.tmp");
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    f.write_all(&out)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// The saved lists and the change-log position they reflect, if the file exists, is
/// whole and was made with `k` neighbours.
pub fn load(path: &Path, k: usize) -> Option<(i64, Lists)> {
    let bytes = std::fs::read(path).ok()?;
    let mut r = Reader(&bytes);
    if r.take(4)? != MAGIC || r.u32()? != FORMAT || r.u32()? as usize != k {
        return None;
    }
    let seq = r.i64()?;
    let count = r.u64()? as usize;
    let mut lists = HashMap::with_capacity(count.min(bytes.len() / 12));
    for _ in 0..count {
        let id = r.i64()?;
        let len = r.u32()? as usize;
        let mut list = Vec::with_capacity(len.min(1024));
        for _ in 0..len {
            list.push((r.i64()?, f32::from_le_bytes(r.take(4)?.try_into().ok()?)));
        }
        lists.insert(id, list);
    }
    r.0.is_empty().then_some((seq, lists))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip_and_damage_or_another_k_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(&dir.path().join("s.db")).unwrap();
        assert!(path.ends_with("s.db.liquid"));
        let a = vec![(2, 0.9f32), (3, 0.5)];
        let b = vec![(1, 0.9f32)];
        save(&path, 2, 42, [(1i64, &a[..]), (2, &b[..])].into_iter()).unwrap();
        let (seq, lists) = load(&path, 2).unwrap();
        assert_eq!(seq, 42);
        assert_eq!(lists[&1], a);
        assert_eq!(lists[&2], b);
        assert!(load(&path, 3).is_none(), "made with another k");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(load(&path, 2).is_none(), "truncated");
        std::fs::write(&path, b"garbage").unwrap();
        assert!(load(&path, 2).is_none());
        assert!(path_for(Path::new(":memory:")).is_none());
    }
}
