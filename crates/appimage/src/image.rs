//! An AppImage file as the runtime sees it: the ELF runtime, the SquashFS payload right after
//! it, and the trailer that names and guards the payload.

use crate::elf::{self, ElfHeader};
use crate::error::{Error, Result};
use crate::trailer::{self, Trailer};
use backhand::FilesystemReader;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// An opened AppImage whose layout has been checked (not yet its payload's digest).
#[derive(Debug)]
pub struct AppImage {
    path: PathBuf,
    offset: u64,
    trailer: Trailer,
}

impl AppImage {
    /// Reads the runtime's ELF header and the trailer of the file at `path`.
    pub fn open(path: &Path) -> Result<AppImage> {
        let mut file = open(path)?;
        let len = file
            .metadata()
            .map_err(|source| read_error(path, source))?
            .len();
        let offset = payload_offset(path, &mut file)?;
        if len <= offset {
            return Err(Error::NoImage {
                path: path.to_owned(),
            });
        }
        let trailer = read_trailer(path, &mut file, len)?;
        let payload_len = len.saturating_sub(offset + trailer::LEN);
        if len < offset + trailer::LEN || trailer.payload_len != payload_len {
            return Err(corrupt(
                path,
                format!(
                    "the trailer covers {} bytes but {payload_len} follow the runtime (truncated or padded)",
                    trailer.payload_len
                ),
            ));
        }
        Ok(AppImage {
            path: path.to_owned(),
            offset,
            trailer,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the SquashFS image starts: the end of the runtime's ELF file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn trailer(&self) -> Trailer {
        self.trailer
    }

    /// Reads the whole payload and checks it against the trailer's SHA-256.
    pub fn verify(&self) -> Result<()> {
        let mut file = open(&self.path)?;
        file.seek(SeekFrom::Start(self.offset))
            .map_err(|source| read_error(&self.path, source))?;
        let payload = BufReader::new(file).take(self.trailer.payload_len);
        let actual =
            trailer::sha256_of(payload).map_err(|source| read_error(&self.path, source))?;
        if actual != self.trailer.sha256 {
            return Err(corrupt(
                &self.path,
                "its SHA-256 does not match the one recorded at build time".into(),
            ));
        }
        Ok(())
    }

    /// Opens the SquashFS image for reading.
    pub fn filesystem(&self) -> Result<FilesystemReader<'static>> {
        let file = BufReader::new(open(&self.path)?);
        FilesystemReader::from_reader_with_offset(file, self.offset)
            .map_err(|e| corrupt(&self.path, format!("SquashFS: {e}")))
    }
}

fn payload_offset(path: &Path, file: &mut File) -> Result<u64> {
    let mut header = Vec::with_capacity(elf::HEADER_LEN);
    file.by_ref()
        .take(elf::HEADER_LEN as u64)
        .read_to_end(&mut header)
        .map_err(|source| read_error(path, source))?;
    match ElfHeader::parse(&header) {
        Some(elf) if elf.appimage_type2 => Ok(elf.end()),
        _ => Err(Error::NotAnAppImage {
            path: path.to_owned(),
        }),
    }
}

fn read_trailer(path: &Path, file: &mut File, len: u64) -> Result<Trailer> {
    let missing = || {
        corrupt(
            path,
            "it does not end with a somna-appimage trailer (truncated?)".into(),
        )
    };
    if len < trailer::LEN {
        return Err(missing());
    }
    let mut bytes = [0u8; trailer::LEN as usize];
    file.seek(SeekFrom::Start(len - trailer::LEN))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|source| read_error(path, source))?;
    Trailer::parse(&bytes).ok_or_else(missing)
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| read_error(path, source))
}

fn read_error(path: &Path, source: std::io::Error) -> Error {
    Error::Read {
        path: path.to_owned(),
        source,
    }
}

fn corrupt(path: &Path, reason: String) -> Error {
    Error::CorruptImage {
        path: path.to_owned(),
        reason,
    }
}
