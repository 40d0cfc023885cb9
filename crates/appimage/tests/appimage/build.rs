//! The builder refuses AppDirs and runtimes an AppImage cannot be made of, and writes nothing.

use crate::fixture::{file_name, run, text, Fixture, BUILDER, RUNTIME};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

fn assert_refused(fixture: &Fixture, output: &Output, message: &str) {
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "it built");
    assert!(
        stderr.contains(message),
        "expected '{message}' in: {stderr}"
    );
    let left: Vec<_> = fs::read_dir(fixture.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().contains("AppImage"))
        .collect();
    assert!(left.is_empty(), "the builder left {left:?}");
}

fn build(fixture: &Fixture) -> Output {
    fixture.build(&fixture.app_dir(), &fixture.appimage())
}

#[test]
fn an_app_dir_without_app_run_is_refused() {
    let fixture = Fixture::new();
    fs::remove_file(fixture.app_dir().join("AppRun")).unwrap();
    assert_refused(&fixture, &build(&fixture), "it has no AppRun at its top");
}

#[test]
fn a_non_executable_app_run_is_refused() {
    let fixture = Fixture::new();
    fs::set_permissions(
        fixture.app_dir().join("AppRun"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    assert_refused(&fixture, &build(&fixture), "AppRun is not executable");
}

#[test]
fn two_desktop_entries_are_refused() {
    let fixture = Fixture::new();
    fs::copy(
        fixture.app_dir().join("test.desktop"),
        fixture.app_dir().join("other.desktop"),
    )
    .unwrap();
    assert_refused(
        &fixture,
        &build(&fixture),
        "it has 2 *.desktop files at its top",
    );
}

#[test]
fn a_desktop_entry_whose_icon_is_missing_is_refused() {
    let fixture = Fixture::new();
    fs::remove_file(fixture.app_dir().join("test.png")).unwrap();
    assert_refused(
        &fixture,
        &build(&fixture),
        "names the icon 'test' but none of test.png, test.svg, test.xpm",
    );
}

#[test]
fn a_desktop_entry_without_exec_is_refused() {
    let fixture = Fixture::new();
    fs::write(
        fixture.app_dir().join("test.desktop"),
        "[Desktop Entry]\nType=Application\nName=Test\nIcon=test\n",
    )
    .unwrap();
    assert_refused(
        &fixture,
        &build(&fixture),
        "lacks Exec in its [Desktop Entry] group",
    );
}

#[test]
fn a_named_pipe_in_the_app_dir_is_refused() {
    let fixture = Fixture::new();
    let status = Command::new("mkfifo")
        .arg(fixture.app_dir().join("usr/pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    assert_refused(&fixture, &build(&fixture), "which is a special file");
}

#[test]
fn an_appimage_is_refused_as_the_runtime_of_another() {
    let fixture = Fixture::built();
    let nested = fixture.tmp.path().join("Nested.AppImage");
    let output = run(Command::new(BUILDER)
        .arg("--runtime")
        .arg(fixture.appimage())
        .arg(fixture.app_dir())
        .arg(&nested));
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("is it an AppImage already?"),
        "{}",
        text(&output.stderr)
    );
    assert!(!nested.exists());
}

#[test]
fn the_runtime_beside_the_builder_is_used_by_default() {
    let fixture = Fixture::built();
    let runtime = fs::read(RUNTIME).unwrap();
    let appimage = fs::read(fixture.appimage()).unwrap();
    assert_eq!(appimage[..8], runtime[..8]);
    assert_eq!(appimage[11..runtime.len()], runtime[11..]);
    assert_eq!(file_name(&fixture.appimage()), "Test-1.0.AppImage");
}
