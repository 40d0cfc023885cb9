//! Point data for the 3D view as one little-endian binary buffer, so 100K points cross the
//! IPC boundary without JSON and land in typed arrays without copying per point.
//!
//! Layout (every section starts 4-byte aligned; `n` points):
//! ```text
//! "SMPA"  u32 n  f64 t0 (Unix ms of the earliest time)
//! i32 ids[n]  i32 clusters[n]  f32 times[n] (seconds since t0)  u32 access[n]
//! f32 importance[n]  f32 energy[n]  u8 kinds[n]  u8 states[n]  (zero padding to 4)
//! ```
//! Layouts: `"SMPL"  u32 n  u32 dims  u32 0  i32 ids[n]  f32 coords[n*dims]`.

use somna_engine::memory::{Kind, State};
use somna_engine::points::PointAttributes;

fn push_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

fn id32(id: i64) -> i32 {
    // Ids are AUTOINCREMENT row ids; a store would need 2^31 memories to exceed this.
    i32::try_from(id).unwrap_or(i32::MAX)
}

pub fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::Episode => 0,
        Kind::Fact => 1,
        Kind::Summary => 2,
        Kind::Schema => 3,
    }
}

pub fn state_code(s: State) -> u8 {
    match s {
        State::Active => 0,
        State::Warm => 1,
        State::Cold => 2,
        State::Archived => 3,
        State::Forgotten => 4,
    }
}

pub fn pack_attributes(a: &PointAttributes) -> Vec<u8> {
    let n = a.len();
    let t0 = a.times.iter().copied().min().unwrap_or(0);
    let mut buf = Vec::with_capacity(16 + n * 22 + 4);
    buf.extend_from_slice(b"SMPA");
    push_u32(&mut buf, n as u32);
    buf.extend_from_slice(&(t0 as f64).to_le_bytes());
    for &id in &a.ids {
        buf.extend_from_slice(&id32(id).to_le_bytes());
    }
    for &c in &a.clusters {
        buf.extend_from_slice(&(c.clamp(-1, i32::MAX as i64) as i32).to_le_bytes());
    }
    for &t in &a.times {
        buf.extend_from_slice(&(((t - t0) as f64 / 1000.0) as f32).to_le_bytes());
    }
    for &c in &a.access_counts {
        push_u32(&mut buf, c.clamp(0, u32::MAX as i64) as u32);
    }
    for &i in &a.importance {
        buf.extend_from_slice(&i.to_le_bytes());
    }
    for &e in &a.energy {
        buf.extend_from_slice(&e.to_le_bytes());
    }
    buf.extend(a.kinds.iter().map(|&k| kind_code(k)));
    buf.extend(a.states.iter().map(|&s| state_code(s)));
    while buf.len() % 4 != 0 {
        buf.push(0);
    }
    buf
}

/// A layout's ids and row-major coordinates.
pub fn pack_layout(ids: &[i64], dims: usize, coords: &[f32]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(16 + ids.len() * (4 + 4 * dims));
    buf.extend_from_slice(b"SMPL");
    push_u32(&mut buf, ids.len() as u32);
    push_u32(&mut buf, dims as u32);
    push_u32(&mut buf, 0);
    for &id in ids {
        buf.extend_from_slice(&id32(id).to_le_bytes());
    }
    for &c in coords {
        buf.extend_from_slice(&c.to_le_bytes());
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_packed_in_documented_order_and_aligned() {
        let a = PointAttributes {
            ids: vec![7, 9, 11],
            kinds: vec![Kind::Episode, Kind::Fact, Kind::Schema],
            states: vec![State::Active, State::Cold, State::Warm],
            clusters: vec![-1, 3, 3],
            times: vec![5_000, 2_000, 3_500],
            access_counts: vec![0, 4, 1],
            importance: vec![0.5, 0.25, 1.0],
            energy: vec![0.0, 0.75, 0.1],
        };
        let b = pack_attributes(&a);
        assert_eq!(&b[..4], b"SMPA");
        assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 3);
        assert_eq!(f64::from_le_bytes(b[8..16].try_into().unwrap()), 2000.0);
        let i32_at = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!([i32_at(16), i32_at(20), i32_at(24)], [7, 9, 11]);
        assert_eq!([i32_at(28), i32_at(32), i32_at(36)], [-1, 3, 3]);
        assert_eq!([f32_at(40), f32_at(44), f32_at(48)], [3.0, 0.0, 1.5]);
        assert_eq!(i32_at(56), 4);
        assert_eq!(f32_at(72), 1.0);
        assert_eq!(f32_at(80), 0.75);
        assert_eq!(&b[88..94], &[0, 1, 3, 0, 2, 1]);
        assert_eq!(b.len() % 4, 0);
    }

    #[test]
    fn layout_header_and_coordinates() {
        let b = pack_layout(&[1, 2], 3, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(&b[..4], b"SMPL");
        assert_eq!(b.len(), 16 + 2 * 4 + 6 * 4);
        assert_eq!(
            f32::from_le_bytes(b[b.len() - 4..].try_into().unwrap()),
            5.0
        );
    }
}
