//! The trailer `somna-appimage-build` writes after the SquashFS image: a magic, the length of
//! the payload it covers (the image and its padding) and the payload's SHA-256.
//!
//! The digest names the cache directory without reading the payload, so a start with a warm
//! cache costs no hashing; before extracting, the runtime checks the payload against it, so a
//! damaged download is refused instead of unpacked. SquashFS readers stop at the image's
//! `bytes_used`, so `unsquashfs -o $(app --appimage-offset) app` ignores the trailer.

use sha2::{Digest, Sha256};
use std::io::Read;

/// The trailer's first bytes.
pub const MAGIC: [u8; 16] = *b"SOMNA-APPIMAGE-1";

/// Bytes in a trailer: magic, payload length (u64, little endian), SHA-256.
pub const LEN: u64 = 16 + 8 + 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// Bytes between the end of the runtime and the start of the trailer.
    pub payload_len: u64,
    pub sha256: [u8; 32],
}

impl Trailer {
    pub fn to_bytes(self) -> [u8; LEN as usize] {
        let mut bytes = [0u8; LEN as usize];
        bytes[..16].copy_from_slice(&MAGIC);
        bytes[16..24].copy_from_slice(&self.payload_len.to_le_bytes());
        bytes[24..].copy_from_slice(&self.sha256);
        bytes
    }

    /// Reads a trailer; `None` when the bytes do not start with [`MAGIC`].
    pub fn parse(bytes: &[u8; LEN as usize]) -> Option<Trailer> {
        if bytes[..16] != MAGIC {
            return None;
        }
        Some(Trailer {
            payload_len: u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes")),
            sha256: bytes[24..].try_into().expect("32 bytes"),
        })
    }

    /// The first 16 hex digits of the digest: enough to tell images apart in a cache.
    pub fn short_id(&self) -> String {
        self.sha256[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The SHA-256 of everything `reader` yields.
pub fn sha256_of(mut reader: impl Read) -> std::io::Result<[u8; 32]> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut buffer)? {
            0 => return Ok(hasher.finalize().into()),
            n => hasher.update(&buffer[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailer_reads_back_as_written() {
        let trailer = Trailer {
            payload_len: 123_456_789,
            sha256: [7; 32],
        };
        assert_eq!(Trailer::parse(&trailer.to_bytes()), Some(trailer));
    }

    #[test]
    fn bytes_without_the_magic_are_no_trailer() {
        let mut bytes = Trailer {
            payload_len: 1,
            sha256: [0; 32],
        }
        .to_bytes();
        bytes[0] = b's';
        assert_eq!(Trailer::parse(&bytes), None);
    }

    #[test]
    fn the_short_id_is_the_digest_s_first_sixteen_hex_digits() {
        let sha256 = sha256_of(&b"abc"[..]).unwrap();
        let trailer = Trailer {
            payload_len: 3,
            sha256,
        };
        assert_eq!(trailer.short_id(), "ba7816bf8f01cfea");
    }
}
