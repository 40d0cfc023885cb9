//! A structural check of an hnsw_rs dump (`<base>.hnsw.graph` + `<base>.hnsw.data`) done
//! before hnsw_rs is allowed to read it.
//!
//! hnsw_rs' loader trusts its input: a short data file makes it call `process::exit(1)`, a
//! bad magic or id trips an `assert!`, a length field is allocated as read (`vec![0; len]`,
//! an abort on a huge value), and neighbour and entry-point ranks are used as unchecked
//! indices. The sha256 in the manifest catches accidental damage, not a file rewritten
//! together with its checksum, so every field hnsw_rs would read is checked here against
//! what this index saves (format, parameters, dimension, point count, ranks, ids), with every
//! read bounded by the file's recorded size. What passes is a dump hnsw_rs loads without
//! exiting, panicking or allocating more than the files' size.
//!
//! The format (native-endian, `usize` of the platform), from hnsw_rs 0.3.5 `hnswio.rs`:
//! * graph: description (magic, dump mode, max connections, level scale, layer count, ef,
//!   point count, dimension, distance name, type name), then the layer count again, then per
//!   layer a magic, its point count and its points (magic, origin id, layer, rank, and per
//!   description layer a neighbour count and neighbours: origin id, layer, rank, distance),
//!   then the entry point (origin id, layer, rank).
//! * data: magic and dimension, then per point in the graph's order: magic, origin id, byte
//!   length and the vector.

use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{ErrorKind, Read};

// hnsw_rs' private constants (hnswio.rs, hnsw.rs).
const MAGICDESCR_4: u32 = 0x002a_6779;
const MAGICLAYER: u32 = 0x000a_676f;
const MAGICPOINT: u32 = 0x000a_678f;
const MAGICDATAP: u32 = 0xa67f_0000;
/// Layers of an hnsw_rs graph (`NB_LAYER_MAX`); a dump always records all of them.
pub(super) const NB_LAYER_MAX: usize = 16;
const USIZE: usize = std::mem::size_of::<usize>();
/// Bytes of one neighbour record: origin id, layer (u8), rank (i32), distance (f32).
const NEIGHBOUR_BYTES: u64 = USIZE as u64 + 1 + 4 + 4;

/// Size of a data file holding `points` vectors of `dim` f32: its header plus one record
/// (magic, origin id, byte length, vector) per point. `None` on overflow.
pub(super) fn data_file_len(points: usize, dim: usize) -> Option<u64> {
    let record = (4 + 8 + 8 + 4 * dim) as u64;
    (points as u64)
        .checked_mul(record)?
        .checked_add((4 + USIZE) as u64)
}

/// Reads one file of a known length in large chunks, hashing all it reads, and hands out
/// small pieces: one bounded pass both checks the structure and computes the sha256.
pub(super) struct Source {
    name: String,
    file: File,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Bytes of the file (of its recorded length) not read into `buf` yet.
    left: u64,
    hasher: Sha256,
}

impl Source {
    pub(super) fn new(name: &str, file: File, len: u64) -> Self {
        Self {
            name: name.to_string(),
            file,
            buf: vec![0; 1 << 20],
            pos: 0,
            end: 0,
            left: len,
            hasher: Sha256::new(),
        }
    }

    /// Bytes not handed out yet.
    pub(super) fn remaining(&self) -> u64 {
        self.left + (self.end - self.pos) as u64
    }

    fn fail(&self, what: impl std::fmt::Display) -> String {
        format!("{}: {what}", self.name)
    }

    /// The next `n` bytes.
    pub(super) fn take(&mut self, n: usize) -> Result<&[u8], String> {
        if self.end - self.pos < n {
            if n as u64 > self.remaining() {
                return Err(self.fail("ends early"));
            }
            if n > self.buf.len() {
                return Err(self.fail("record too large"));
            }
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            while self.end < n {
                let room = (self.buf.len() - self.end).min(self.left.min(1 << 30) as usize);
                match self.file.read(&mut self.buf[self.end..self.end + room]) {
                    Ok(0) => return Err(self.fail("shorter than its recorded size")),
                    Ok(k) => {
                        self.hasher.update(&self.buf[self.end..self.end + k]);
                        self.end += k;
                        self.left -= k as u64;
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(self.fail(format!("unreadable ({e})"))),
                }
            }
        }
        let piece = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(piece)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    pub(super) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }

    pub(super) fn u32(&mut self) -> Result<u32, String> {
        self.array().map(u32::from_ne_bytes)
    }

    pub(super) fn i32(&mut self) -> Result<i32, String> {
        self.array().map(i32::from_ne_bytes)
    }

    pub(super) fn u64(&mut self) -> Result<u64, String> {
        self.array().map(u64::from_ne_bytes)
    }

    pub(super) fn i64_le(&mut self) -> Result<i64, String> {
        self.array().map(i64::from_le_bytes)
    }

    pub(super) fn usize(&mut self) -> Result<usize, String> {
        self.array().map(usize::from_ne_bytes)
    }

    pub(super) fn f32(&mut self) -> Result<f32, String> {
        self.array().map(f32::from_ne_bytes)
    }

    pub(super) fn f64(&mut self) -> Result<f64, String> {
        self.array().map(f64::from_ne_bytes)
    }

    /// The hex sha256 of the whole file (its recorded length); an error if the structure
    /// did not account for every byte.
    pub(super) fn finish(self) -> Result<String, String> {
        if self.remaining() != 0 {
            return Err(self.fail(format!("{} unexpected trailing bytes", self.remaining())));
        }
        // `take` hashed all it read, and reads never go past the recorded length.
        Ok(hex(&self.hasher.finalize()))
    }
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the dump must contain: the values this index's graph is saved with.
pub(super) struct Expect {
    pub dim: usize,
    pub points: usize,
    pub max_nb_connection: u8,
    pub ef_construction: usize,
    pub distance: String,
    pub value_type: &'static str,
}

/// Checks the graph and data files together, point by point, as hnsw_rs will read them.
pub(super) fn check(graph: &mut Source, data: &mut Source, e: &Expect) -> Result<(), String> {
    check_description(graph, e)?;
    if data.u32()? != MAGICDATAP {
        return Err(data.fail("bad header"));
    }
    if data.usize()? != e.dim {
        return Err(data.fail("dimension differs"));
    }
    let layers = graph.u8()? as usize;
    if layers > NB_LAYER_MAX {
        return Err(graph.fail("too many layers"));
    }
    let mut seen = vec![false; e.points];
    let mut layer_len = Vec::with_capacity(layers);
    // Highest rank any neighbour names in each layer (checked once all layers are known).
    let mut highest_ref: [Option<usize>; NB_LAYER_MAX] = [None; NB_LAYER_MAX];
    let mut total = 0usize;
    for l in 0..layers {
        if graph.u32()? != MAGICLAYER {
            return Err(graph.fail(format!("bad magic at layer {l}")));
        }
        let n = graph.usize()?;
        if n > e.points - total {
            return Err(graph.fail("more points than recorded"));
        }
        for r in 0..n {
            let origin = check_point(graph, e, l, r, &mut seen, &mut highest_ref)?;
            check_vector(data, e, origin)?;
        }
        layer_len.push(n);
        total += n;
    }
    if total != e.points {
        return Err(graph.fail(format!("{total} points, {} recorded", e.points)));
    }
    for (l, highest) in highest_ref.iter().enumerate() {
        if let Some(rank) = highest {
            if layer_len.get(l).is_none_or(|&len| *rank >= len) {
                return Err(graph.fail(format!("a neighbour names a missing point of layer {l}")));
            }
        }
    }
    let origin = graph.usize()?;
    let layer = graph.u8()? as usize;
    let rank = graph.i32()?;
    let in_range = origin < e.points
        && rank >= 0
        && layer_len
            .get(layer)
            .is_some_and(|&len| (rank as usize) < len);
    if !in_range {
        return Err(graph.fail("the entry point is not a point of the graph"));
    }
    Ok(())
}

fn check_description(graph: &mut Source, e: &Expect) -> Result<(), String> {
    if graph.u32()? != MAGICDESCR_4 {
        return Err(graph.fail("not an hnsw_rs dump of the expected version"));
    }
    if graph.u8()? != 1 {
        return Err(graph.fail("not a full dump"));
    }
    if graph.u8()? != e.max_nb_connection {
        return Err(graph.fail("saved with another number of connections"));
    }
    let scale = graph.f64()?;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(graph.fail("bad level scale"));
    }
    if graph.u8()? as usize != NB_LAYER_MAX {
        return Err(graph.fail("bad layer count"));
    }
    if graph.usize()? != e.ef_construction {
        return Err(graph.fail("saved with another ef_construction"));
    }
    if graph.usize()? != e.points {
        return Err(graph.fail("point count differs from the manifest"));
    }
    if graph.usize()? != e.dim {
        return Err(graph.fail("dimension differs"));
    }
    for (what, want) in [
        ("distance", e.distance.as_str()),
        ("value type", e.value_type),
    ] {
        let len = graph.usize()?;
        if len != want.len() || graph.take(len)? != want.as_bytes() {
            return Err(graph.fail(format!("another {what}")));
        }
    }
    Ok(())
}

/// One point's graph record; returns its origin id.
fn check_point(
    graph: &mut Source,
    e: &Expect,
    layer: usize,
    rank: usize,
    seen: &mut [bool],
    highest_ref: &mut [Option<usize>; NB_LAYER_MAX],
) -> Result<usize, String> {
    if graph.u32()? != MAGICPOINT {
        return Err(graph.fail("bad point magic"));
    }
    let origin = graph.usize()?;
    if origin >= e.points || std::mem::replace(&mut seen[origin], true) {
        return Err(graph.fail(format!("bad or repeated point id {origin}")));
    }
    if graph.u8()? as usize != layer || graph.i32()? as i64 != rank as i64 {
        return Err(graph.fail(format!("point {origin} is out of place")));
    }
    for _ in 0..NB_LAYER_MAX {
        let k = graph.usize()?;
        // Bounds what is read (never what is allocated: nothing is) by the file's size.
        if k > e.points || (k as u64).saturating_mul(NEIGHBOUR_BYTES) > graph.remaining() {
            return Err(graph.fail(format!("point {origin} has an impossible neighbour count")));
        }
        for _ in 0..k {
            let d_id = graph.usize()?;
            let n_layer = graph.u8()? as usize;
            let n_rank = graph.i32()?;
            let distance = graph.f32()?;
            if d_id >= e.points || n_layer >= NB_LAYER_MAX || n_rank < 0 || distance.is_nan() {
                return Err(graph.fail(format!("point {origin} has a bad neighbour")));
            }
            let h = &mut highest_ref[n_layer];
            *h = Some(h.map_or(n_rank as usize, |x| x.max(n_rank as usize)));
        }
    }
    Ok(origin)
}

/// One point's data record, which must follow the graph's order.
fn check_vector(data: &mut Source, e: &Expect, origin: usize) -> Result<(), String> {
    if data.u32()? != MAGICDATAP {
        return Err(data.fail("bad point magic"));
    }
    if data.u64()? != origin as u64 {
        return Err(data.fail(format!("point {origin} is out of order")));
    }
    if data.u64()? != 4 * e.dim as u64 {
        return Err(data.fail(format!("point {origin} has a bad length")));
    }
    let v = data.take(4 * e.dim)?;
    let finite = v
        .chunks_exact(4)
        .all(|c| f32::from_ne_bytes(c.try_into().expect("4 bytes")).is_finite());
    if !finite {
        return Err(data.fail(format!("point {origin} has a non-finite value")));
    }
    Ok(())
}
