//! Building an AppImage: the runtime with the type-2 magic patched in, the AppDir as a
//! zstd SquashFS image right after it, and the trailer that names and guards the image.

use crate::appdir::AppDir;
use crate::elf::{self, ElfHeader};
use crate::error::{Error, Result};
use crate::trailer::{self, Trailer};
use backhand::compression::{CompressionOptions, Compressor, Zstd};
use backhand::{FilesystemCompressor, FilesystemWriter, NodeHeader};
use std::fs::{self, File, Permissions};
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// zstd level for the image's blocks. Measured on Somna's debug AppDir (487 MB): level 3 gives
/// 101 MiB in 3.5 s, 9 gives 92.7 MiB in 18 s, 15 gives 91.7 MiB in 75 s; all unpack in ~1.2 s.
pub const ZSTD_LEVEL: u32 = 9;

/// SquashFS block size. On the same AppDir at level 9, 1 MiB blocks give 92.7 MiB and a 1.2 s
/// unpack; the usual 128 KiB give 98.5 MiB and 1.6 s.
pub const BLOCK_SIZE: u32 = 1 << 20;

/// The sizes of a built AppImage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built {
    pub runtime_len: u64,
    pub payload_len: u64,
}

/// Writes the AppImage of `appdir` to `out`, with `runtime` as its ELF part. `out` appears
/// complete or not at all.
pub fn build(runtime: &Path, appdir: &AppDir, out: &Path) -> Result<Built> {
    let runtime_bytes = marked_runtime(runtime)?;
    let partial = partial_path(out);
    let built = write_appimage(&runtime_bytes, appdir, &partial).and_then(|built| {
        fs::rename(&partial, out).map_err(|source| Error::Write {
            path: out.to_owned(),
            source,
        })?;
        Ok(built)
    });
    if built.is_err() {
        let _ = fs::remove_file(&partial);
    }
    built
}

/// The runtime's bytes with the type-2 magic in its ELF header, after checking that nothing
/// follows its section headers (an AppImage passed as the runtime would nest images).
fn marked_runtime(runtime: &Path) -> Result<Vec<u8>> {
    let mut bytes = fs::read(runtime).map_err(|source| Error::Read {
        path: runtime.to_owned(),
        source,
    })?;
    let invalid = |reason: String| Error::InvalidRuntime {
        path: runtime.to_owned(),
        reason,
    };
    let header =
        ElfHeader::parse(&bytes).ok_or_else(|| invalid("it is not an ELF64 file".into()))?;
    if header.end() != bytes.len() as u64 {
        return Err(invalid(format!(
            "its ELF ends at byte {} but the file has {} (is it an AppImage already?)",
            header.end(),
            bytes.len()
        )));
    }
    elf::mark_type2(&mut bytes);
    Ok(bytes)
}

fn write_appimage(runtime: &[u8], appdir: &AppDir, path: &Path) -> Result<Built> {
    let write_error = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = File::create(path).map_err(write_error)?;
    file.write_all(runtime).map_err(write_error)?;
    let runtime_len = runtime.len() as u64;
    let mut writer = squashfs_of(appdir)?;
    let mut out = BufWriter::new(&mut file);
    writer
        .write_with_offset(&mut out, runtime_len)
        .map_err(|e| Error::Squashfs {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    out.flush().map_err(write_error)?;
    drop(out);
    let payload_len = file.seek(SeekFrom::End(0)).map_err(write_error)? - runtime_len;
    let sha256 = sha256_from(path, runtime_len)?;
    file.write_all(
        &Trailer {
            payload_len,
            sha256,
        }
        .to_bytes(),
    )
    .map_err(write_error)?;
    file.set_permissions(Permissions::from_mode(0o755))
        .map_err(write_error)?;
    Ok(Built {
        runtime_len,
        payload_len,
    })
}

fn sha256_from(path: &Path, offset: u64) -> Result<[u8; 32]> {
    let read_error = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let mut file = File::open(path).map_err(read_error)?;
    file.seek(SeekFrom::Start(offset)).map_err(read_error)?;
    trailer::sha256_of(BufReader::new(file)).map_err(read_error)
}

/// A SquashFS writer holding the AppDir's tree: owned by root, with each entry's mode and
/// modification time.
fn squashfs_of(appdir: &AppDir) -> Result<FilesystemWriter<'static, 'static, 'static>> {
    let mut writer = FilesystemWriter::default();
    let level = CompressionOptions::Zstd(Zstd {
        compression_level: ZSTD_LEVEL,
    });
    let compressor = FilesystemCompressor::new(Compressor::Zstd, Some(level))
        .map_err(|e| squashfs_error(&appdir.root, e))?;
    writer.set_compressor(compressor);
    writer.set_block_size(BLOCK_SIZE);
    let root_meta = metadata(&appdir.root)?;
    writer.set_root_mode(mode_of(&root_meta));
    add_children(&mut writer, &appdir.root, Path::new("/"))?;
    Ok(writer)
}

fn add_children(
    writer: &mut FilesystemWriter<'static, 'static, 'static>,
    dir: &Path,
    at: &Path,
) -> Result<()> {
    let read_error = |source| Error::Read {
        path: dir.to_owned(),
        source,
    };
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(read_error)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .map_err(read_error)?;
    entries.sort();
    for source in entries {
        let meta = metadata(&source)?;
        let target = at.join(source.file_name().expect("read_dir yields named entries"));
        let header = NodeHeader::new(
            mode_of(&meta),
            0,
            0,
            meta.mtime().clamp(0, i64::from(u32::MAX)) as u32,
        );
        let file_type = meta.file_type();
        let pushed = if file_type.is_symlink() {
            let link = fs::read_link(&source).map_err(|source_error| Error::Read {
                path: source.clone(),
                source: source_error,
            })?;
            writer.push_symlink(link, &target, header)
        } else if file_type.is_dir() {
            writer.push_dir(&target, header)
        } else if file_type.is_file() {
            writer.push_file_from_path(source.clone(), &target, header)
        } else {
            return Err(Error::UnsupportedNode {
                path: source,
                kind: "special file",
            });
        };
        pushed.map_err(|e| squashfs_error(&source, e))?;
        if file_type.is_dir() {
            add_children(writer, &source, &target)?;
        }
    }
    Ok(())
}

fn metadata(path: &Path) -> Result<fs::Metadata> {
    fs::symlink_metadata(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })
}

fn mode_of(meta: &fs::Metadata) -> u16 {
    (meta.mode() & 0o7777) as u16
}

fn squashfs_error(path: &Path, error: backhand::BackhandError) -> Error {
    Error::Squashfs {
        path: path.to_owned(),
        reason: error.to_string(),
    }
}

fn partial_path(out: &Path) -> PathBuf {
    let name = out.file_name().unwrap_or_default().to_string_lossy();
    out.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}
