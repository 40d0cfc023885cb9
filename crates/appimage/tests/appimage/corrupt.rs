//! Damaged and non-AppImage files: a clear error, a failed exit, and no tree left anywhere.

use crate::fixture::{run, text, Fixture, RUNTIME};
use backhand::compression::Compressor;
use backhand::{FilesystemCompressor, FilesystemWriter, NodeHeader};
use somna_appimage::elf;
use somna_appimage::{trailer, Trailer};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Starts `appimage` and extracts it, asserting both fail with `message` and leave nothing.
fn assert_refused(fixture: &Fixture, appimage: &Path, message: &str) {
    for args in [&[][..], &["--appimage-extract"][..]] {
        let output = fixture.run(appimage, args);
        assert_failed_with(&output, message);
        assert_eq!(
            fixture.cache_contents(),
            Vec::<PathBuf>::new(),
            "{args:?} left a cache"
        );
        let work: Vec<_> = std::fs::read_dir(fixture.work_dir()).unwrap().collect();
        assert!(work.is_empty(), "{args:?} left {work:?}");
    }
}

/// Asserts `appimage` fails to start with `message` and leaves only the cache's empty root.
fn assert_refused_halfway(fixture: &Fixture, appimage: &Path, message: &str) {
    assert_failed_with(&fixture.run(appimage, &[]), message);
    assert_eq!(fixture.cache_contents(), [PathBuf::from("somna-appimage")]);
    assert_failed_with(&fixture.run(appimage, &["--appimage-extract"]), message);
    let work: Vec<_> = std::fs::read_dir(fixture.work_dir()).unwrap().collect();
    assert!(work.is_empty(), "extracting left {work:?}");
}

fn assert_failed_with(output: &Output, message: &str) {
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "it ran: {}", text(&output.stdout));
    assert!(
        stderr.contains(message),
        "expected '{message}' in: {stderr}"
    );
    assert_eq!(text(&output.stdout), "");
}

#[test]
fn a_truncated_appimage_is_corrupt() {
    let fixture = Fixture::built();
    let runtime_len = std::fs::metadata(RUNTIME).unwrap().len() as usize;
    let truncated = fixture.altered_copy("truncated.AppImage", |bytes| {
        let half_the_image = (bytes.len() - runtime_len) / 2;
        bytes.truncate(bytes.len() - half_the_image)
    });
    assert_refused(
        &fixture,
        &truncated,
        "is corrupt: it does not end with a somna-appimage trailer",
    );
}

#[test]
fn a_changed_byte_in_the_image_is_corrupt() {
    let fixture = Fixture::built();
    let runtime_len = std::fs::metadata(RUNTIME).unwrap().len() as usize;
    let flipped = fixture.altered_copy("flipped.AppImage", |bytes| {
        let middle_of_the_image = (runtime_len + bytes.len()) / 2;
        bytes[middle_of_the_image] ^= 0x55
    });
    assert_refused(&fixture, &flipped, "is corrupt: its SHA-256 does not match");
}

#[test]
fn an_image_that_is_not_squashfs_is_corrupt_even_with_a_matching_digest() {
    let fixture = Fixture::built();
    let runtime_len = std::fs::metadata(RUNTIME).unwrap().len() as usize;
    let forged = fixture.altered_copy("forged.AppImage", |bytes| {
        bytes.truncate(runtime_len);
        let payload = vec![0x42u8; 8192];
        let sha256 = trailer::sha256_of(&payload[..]).unwrap();
        bytes.extend_from_slice(&payload);
        bytes.extend_from_slice(
            &Trailer {
                payload_len: 8192,
                sha256,
            }
            .to_bytes(),
        );
    });
    assert_refused(&fixture, &forged, "is corrupt: SquashFS:");
}

#[test]
fn an_unpack_that_fails_halfway_leaves_no_tree() {
    let fixture = Fixture::new();
    // Sound SquashFS and a matching digest, but the pipe after the files cannot be unpacked.
    let mut writer = FilesystemWriter::default();
    writer.set_compressor(FilesystemCompressor::new(Compressor::Zstd, None).unwrap());
    let header = NodeHeader::new(0o755, 0, 0, 0);
    writer
        .push_file(Cursor::new(b"#!/bin/sh\necho ran\n"), "AppRun", header)
        .unwrap();
    writer.push_dir("usr", header).unwrap();
    writer
        .push_file(Cursor::new(vec![7u8; 300_000]), "usr/data", header)
        .unwrap();
    writer.push_fifo("usr/zz-pipe", header).unwrap();
    let mut squashfs = Cursor::new(Vec::new());
    writer.write(&mut squashfs).unwrap();
    let appimage = fixture.appimage_of("Pipe.AppImage", squashfs.get_ref());
    assert_refused_halfway(&fixture, &appimage, "usr/zz-pipe, which is a named pipe");
}

#[test]
fn a_runtime_with_nothing_appended_has_no_image() {
    let fixture = Fixture::built();
    let bare = fixture.altered_copy("bare.AppImage", |bytes| {
        let end = elf::ElfHeader::parse(bytes).unwrap().end() as usize;
        bytes.truncate(end);
    });
    assert_refused(&fixture, &bare, "has no image appended");
}

#[test]
fn the_unmarked_runtime_is_not_an_appimage() {
    let fixture = Fixture::new();
    let output = run(Command::new(RUNTIME).env("XDG_CACHE_HOME", fixture.cache_home()));
    assert_failed_with(&output, "is not an AppImage");
    assert_eq!(fixture.cache_contents(), Vec::<PathBuf>::new());
}
