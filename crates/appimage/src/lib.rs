//! Somna's AppImage: a type-2 runtime that needs neither FUSE nor anything but glibc, and the
//! builder that makes an AppImage without downloading anything.
//!
//! Tauri's AppImage bundler fetches linuxdeploy and appimagetool from GitHub at build time,
//! and upstream's runtime mounts the image with FUSE, which containers and many locked-down
//! machines lack (`/dev/fuse`). This crate replaces both:
//!
//! - `somna-appimage-build <AppDir> <out.AppImage>` checks the AppDir ([`AppDir`]), copies the
//!   runtime with the magic `A`,`I`,2 written at byte 8 of its ELF header, appends the AppDir
//!   as a zstd SquashFS image (written by `backhand`), then a [`Trailer`] with the image's
//!   SHA-256.
//! - `somna-appimage-runtime` is that ELF part. It finds the image right after its own ELF
//!   file (at `e_shoff + e_shentsize * e_shnum`, read from `/proc/self/exe`), unpacks it
//!   once into `${XDG_CACHE_HOME:-~/.cache}/somna-appimage/<name>-<id>` ([`Cache`]) and
//!   execs `AppRun` there with `APPIMAGE`, `APPDIR`, `ARGV0` and `OWD` set, as upstream's
//!   runtime does. Extracting instead of mounting is why no FUSE is needed; the price is the
//!   disk space of the unpacked tree and a slower first start.
//!
//! The file layout is upstream's type 2 (`unsquashfs -o $(app --appimage-offset) app` reads
//! it), plus the trailer after the image's padding.

mod appdir;
mod cache;
pub mod elf;
mod error;
mod extract;
mod image;
mod pack;
pub mod runtime;
pub mod trailer;

pub use appdir::AppDir;
pub use cache::{Cache, Entry};
pub use error::{Error, Result};
pub use image::AppImage;
pub use pack::{build, Built, BLOCK_SIZE, ZSTD_LEVEL};
pub use trailer::Trailer;
