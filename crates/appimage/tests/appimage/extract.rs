//! The runtime's own options: --appimage-extract, --appimage-offset, help and version.

use crate::fixture::{text, tree, Fixture, RUNTIME};
use somna_appimage::elf::ElfHeader;
use std::fs;

#[test]
fn extract_writes_the_app_dir_to_squashfs_root() {
    let fixture = Fixture::built();
    let output = fixture.run(&fixture.appimage(), &["--appimage-extract"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        tree(&fixture.work_dir().join("squashfs-root")),
        tree(&fixture.app_dir())
    );
    assert_eq!(fixture.cache_contents(), Vec::<std::path::PathBuf>::new());
}

#[test]
fn extract_refuses_to_overwrite_an_existing_squashfs_root() {
    let fixture = Fixture::built();
    fs::create_dir(fixture.work_dir().join("squashfs-root")).unwrap();
    let output = fixture.run(&fixture.appimage(), &["--appimage-extract"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("already exists"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(
        fs::read_dir(fixture.work_dir().join("squashfs-root"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn the_offset_is_where_the_runtime_s_elf_ends() {
    let fixture = Fixture::built();
    let output = fixture.run(&fixture.appimage(), &["--appimage-offset"]);
    let runtime = fs::read(RUNTIME).unwrap();
    assert_eq!(
        ElfHeader::parse(&runtime).unwrap().end(),
        runtime.len() as u64
    );
    assert_eq!(text(&output.stdout), format!("{}\n", runtime.len()));
    let appimage = fs::read(fixture.appimage()).unwrap();
    assert_eq!(&appimage[runtime.len()..runtime.len() + 4], b"hsqs");
}

#[test]
fn the_appimage_carries_the_type2_magic_and_is_executable() {
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::built();
    let appimage = fs::read(fixture.appimage()).unwrap();
    assert_eq!(&appimage[8..11], b"AI\x02");
    assert!(ElfHeader::parse(&appimage).unwrap().appimage_type2);
    assert_eq!(
        fs::metadata(fixture.appimage())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o755
    );
}

#[test]
fn help_and_version_are_the_runtime_s_not_the_app_s() {
    let fixture = Fixture::built();
    let help = text(
        &fixture
            .run(&fixture.appimage(), &["--appimage-help"])
            .stdout,
    );
    assert!(
        help.contains("--appimage-extract") && help.contains("No FUSE"),
        "{help}"
    );
    let version = text(
        &fixture
            .run(&fixture.appimage(), &["--appimage-version"])
            .stdout,
    );
    assert_eq!(
        version,
        format!("somna-appimage-runtime {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(fixture.cache_contents(), Vec::<std::path::PathBuf>::new());
}

#[test]
fn an_unknown_runtime_option_is_refused_before_anything_starts() {
    let fixture = Fixture::built();
    let output = fixture.run(&fixture.appimage(), &["--appimage-mount"]);
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("unknown runtime option --appimage-mount"));
    assert_eq!(text(&output.stdout), "");
}
