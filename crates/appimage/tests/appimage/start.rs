//! Starting an AppImage: unpack once into the cache, then exec AppRun.

use crate::fixture::{printed, printed_args, run, text, tree, Fixture, RUNTIME};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

#[test]
fn the_app_runs_with_its_arguments_and_the_appimage_variables() {
    let fixture = Fixture::built();
    let output = fixture.run(&fixture.appimage(), &["one", "two words", "--cli"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert_eq!(printed_args(&stdout), ["one", "two words", "--cli"]);
    let entry = fixture
        .cache_home()
        .join("somna-appimage")
        .join(fixture.entry_name());
    assert_eq!(printed(&stdout, "APPDIR"), Some(entry.to_str().unwrap()));
    assert_eq!(
        printed(&stdout, "APPIMAGE"),
        Some(fixture.appimage().to_str().unwrap())
    );
    assert_eq!(
        printed(&stdout, "OWD"),
        Some(fixture.work_dir().to_str().unwrap())
    );
    assert_eq!(
        printed(&stdout, "ARGV0"),
        Some(fixture.appimage().to_str().unwrap())
    );
}

#[test]
fn the_cache_entry_is_the_app_dir_with_its_modes_and_symlinks() {
    let fixture = Fixture::built();
    assert!(fixture.run(&fixture.appimage(), &[]).status.success());
    let entry = fixture
        .cache_home()
        .join("somna-appimage")
        .join(fixture.entry_name());
    assert_eq!(tree(&entry), tree(&fixture.app_dir()));
}

#[test]
fn a_second_start_reuses_the_unpacked_tree() {
    let fixture = Fixture::built();
    let first = fixture.run(&fixture.appimage(), &[]);
    assert!(
        text(&first.stderr).contains("unpacking"),
        "{}",
        text(&first.stderr)
    );
    // Marks the cached tree: a second start that unpacked again would not print this.
    let app_run = fixture
        .cache_home()
        .join("somna-appimage")
        .join(fixture.entry_name())
        .join("AppRun");
    fs::write(&app_run, "#!/bin/sh\necho from the cache\n").unwrap();
    let second = fixture.run(&fixture.appimage(), &[]);
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "from the cache\n");
    assert_eq!(text(&second.stderr), "");
}

#[test]
fn starts_racing_each_other_share_one_complete_tree() {
    let fixture = Fixture::built();
    let children: Vec<_> = (0..4)
        .map(|_| {
            fixture
                .command(&fixture.appimage())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let root = fixture.cache_home().join("somna-appimage");
    let names: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from(fixture.entry_name())]);
    assert_eq!(
        tree(&root.join(fixture.entry_name())),
        tree(&fixture.app_dir())
    );
}

#[test]
fn an_unpack_abandoned_by_a_dead_process_is_removed() {
    let fixture = Fixture::built();
    let root = fixture.cache_home().join("somna-appimage");
    // No process can have this id (Linux pids stop below 2^22).
    let abandoned = root.join(format!(".{}.partial-4294967295", fixture.entry_name()));
    fs::create_dir_all(abandoned.join("usr")).unwrap();
    fs::set_permissions(abandoned.join("usr"), fs::Permissions::from_mode(0o555)).unwrap();
    assert!(fixture.run(&fixture.appimage(), &[]).status.success());
    assert!(!abandoned.exists());
    assert!(root.join(fixture.entry_name()).is_dir());
}

#[test]
fn an_unwritable_cache_is_reported_and_nothing_runs() {
    let fixture = Fixture::built();
    fs::write(fixture.tmp.path().join("a-file"), "").unwrap();
    let output = run(fixture
        .command(&fixture.appimage())
        .env("XDG_CACHE_HOME", fixture.tmp.path().join("a-file/cache")));
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("cannot write the cache"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(text(&output.stdout), "");
}

#[test]
fn the_runtime_needs_only_glibc() {
    let output = run(Command::new("ldd").arg(RUNTIME));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let libraries: Vec<String> = text(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .filter(|name| !name.starts_with("linux-vdso"))
        .collect();
    let glibc = |name: &String| name == "libc.so.6" || name.contains("ld-linux");
    assert!(
        libraries.iter().all(glibc),
        "the runtime links {libraries:?}"
    );
}
