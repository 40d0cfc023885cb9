//! A small AppDir in a temporary directory, the AppImage the real builder makes of it, and
//! helpers to run that AppImage with its own cache and working directory.

use somna_appimage::{elf, trailer, Trailer};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const RUNTIME: &str = env!("CARGO_BIN_EXE_somna-appimage-runtime");
pub const BUILDER: &str = env!("CARGO_BIN_EXE_somna-appimage-build");

/// Prints its arguments, one per line, then the variables the runtime sets.
const APP_RUN: &str = r#"#!/bin/sh
for arg in "$@"; do echo "arg=$arg"; done
echo "APPDIR=$APPDIR"
echo "APPIMAGE=$APPIMAGE"
echo "OWD=$OWD"
echo "ARGV0=$ARGV0"
"#;

pub struct Fixture {
    pub tmp: tempfile::TempDir,
}

impl Fixture {
    /// A fresh AppDir at `<tmp>/AppDir`, with an empty cache and working directory beside it.
    pub fn new() -> Fixture {
        let fixture = Fixture {
            tmp: tempfile::tempdir().unwrap(),
        };
        write_app_dir(&fixture.app_dir());
        fs::create_dir(fixture.work_dir()).unwrap();
        fixture
    }

    /// A fixture whose AppImage is already built at [`Fixture::appimage`].
    pub fn built() -> Fixture {
        let fixture = Fixture::new();
        let output = fixture.build(&fixture.app_dir(), &fixture.appimage());
        assert!(
            output.status.success(),
            "build failed: {}",
            text(&output.stderr)
        );
        fixture
    }

    pub fn app_dir(&self) -> PathBuf {
        self.tmp.path().join("AppDir")
    }

    pub fn appimage(&self) -> PathBuf {
        self.tmp.path().join("Test-1.0.AppImage")
    }

    pub fn cache_home(&self) -> PathBuf {
        self.tmp.path().join("cache")
    }

    pub fn work_dir(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    /// Runs the real builder.
    pub fn build(&self, app_dir: &Path, out: &Path) -> Output {
        run(Command::new(BUILDER).arg(app_dir).arg(out))
    }

    /// Runs `appimage` with `args`, the fixture's cache home and working directory.
    pub fn run(&self, appimage: &Path, args: &[&str]) -> Output {
        run(self.command(appimage).args(args))
    }

    pub fn command(&self, appimage: &Path) -> Command {
        let mut command = Command::new(appimage);
        command
            .env("XDG_CACHE_HOME", self.cache_home())
            .current_dir(self.work_dir());
        command
    }

    /// Where the fixture's AppImage unpacks: `<cache>/somna-appimage/Test-1.0-<id>`.
    pub fn entry_name(&self) -> String {
        let bytes = fs::read(self.appimage()).unwrap();
        let tail: [u8; trailer::LEN as usize] = bytes[bytes.len() - trailer::LEN as usize..]
            .try_into()
            .unwrap();
        format!("Test-1.0-{}", Trailer::parse(&tail).unwrap().short_id())
    }

    /// Every path under the cache home, relative to it.
    pub fn cache_contents(&self) -> Vec<PathBuf> {
        tree(&self.cache_home()).into_keys().collect()
    }

    /// An AppImage at `name` made by hand: the runtime, `squashfs` and a trailer that matches
    /// it, as the builder would write them.
    pub fn appimage_of(&self, name: &str, squashfs: &[u8]) -> PathBuf {
        let mut bytes = fs::read(RUNTIME).unwrap();
        elf::mark_type2(&mut bytes);
        let sha256 = trailer::sha256_of(squashfs).unwrap();
        bytes.extend_from_slice(squashfs);
        bytes.extend_from_slice(
            &Trailer {
                payload_len: squashfs.len() as u64,
                sha256,
            }
            .to_bytes(),
        );
        let path = self.tmp.path().join(name);
        fs::write(&path, bytes).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A copy of the fixture's AppImage at `name`, changed by `edit`.
    pub fn altered_copy(&self, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
        let mut bytes = fs::read(self.appimage()).unwrap();
        edit(&mut bytes);
        let path = self.tmp.path().join(name);
        fs::write(&path, bytes).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

impl Drop for Fixture {
    /// Opens read-only directories (the AppDir's, the unpacked copies'), so that the temporary
    /// directory can be removed by a user other than root too.
    fn drop(&mut self) {
        for (path, entry) in tree(self.tmp.path()) {
            if let TreeEntry::Dir { mode } = entry {
                let _ = fs::set_permissions(
                    self.tmp.path().join(path),
                    fs::Permissions::from_mode(mode | 0o700),
                );
            }
        }
    }
}

fn write_app_dir(root: &Path) {
    let file = |path: &str, contents: &[u8], mode: u32| {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    };
    file("AppRun", APP_RUN.as_bytes(), 0o755);
    file(
        "test.desktop",
        b"[Desktop Entry]\nType=Application\nName=Test\nExec=test\nIcon=test\n",
        0o644,
    );
    file("test.png", b"\x89PNG\r\n\x1a\n not really", 0o644);
    file("usr/bin/tool", b"#!/bin/sh\necho tool\n", 0o750);
    file("usr/share/doc/readme", b"read me\n", 0o600);
    file("usr/share/empty", b"", 0o644);
    file(
        "usr/lib/big.bin",
        &incompressible(3 * 1024 * 1024 + 777),
        0o644,
    );
    file(
        "usr/share/locked/inside",
        b"in a read-only directory\n",
        0o644,
    );
    fs::set_permissions(
        root.join("usr/share/locked"),
        fs::Permissions::from_mode(0o555),
    )
    .unwrap();
    symlink("test.png", root.join(".DirIcon")).unwrap();
    symlink("../share/doc/readme", root.join("usr/lib/readme-link")).unwrap();
}

/// Several 1 MiB blocks and a fragment tail of xorshift bytes, which zstd cannot shrink.
fn incompressible(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

/// One entry of a tree: what it is, its permission bits, and its contents or link target.
#[derive(Debug, PartialEq, Eq)]
pub enum TreeEntry {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        contents: Vec<u8>,
    },
    Symlink {
        target: PathBuf,
    },
    /// A named pipe, socket or device: never opened (opening a pipe would block).
    Special,
}

/// Every entry below `root`, by path relative to it.
pub fn tree(root: &Path) -> BTreeMap<PathBuf, TreeEntry> {
    let mut entries = BTreeMap::new();
    collect(root, root, &mut entries);
    entries
}

fn collect(root: &Path, dir: &Path, entries: &mut BTreeMap<PathBuf, TreeEntry>) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    for entry in listing {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let relative = path.strip_prefix(root).unwrap().to_owned();
        if meta.file_type().is_symlink() {
            entries.insert(
                relative,
                TreeEntry::Symlink {
                    target: fs::read_link(&path).unwrap(),
                },
            );
        } else if meta.is_dir() {
            entries.insert(relative, TreeEntry::Dir { mode });
            collect(root, &path, entries);
        } else if meta.is_file() {
            entries.insert(
                relative,
                TreeEntry::File {
                    mode,
                    contents: fs::read(&path).unwrap(),
                },
            );
        } else {
            entries.insert(relative, TreeEntry::Special);
        }
    }
}

/// Runs a command, retrying while the kernel reports the program busy: another test thread
/// may fork while this one has just written the program (the child holds the write handle
/// until it execs).
pub fn run(command: &mut Command) -> Output {
    for _ in 0..50 {
        match command.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            result => return result.unwrap(),
        }
    }
    panic!("{:?} stayed busy", command.get_program());
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The value the fixture's AppRun printed for `key`.
pub fn printed<'o>(stdout: &'o str, key: &str) -> Option<&'o str> {
    stdout.lines().find_map(|line| {
        line.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
    })
}

/// The arguments the fixture's AppRun printed.
pub fn printed_args(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("arg="))
        .collect()
}

pub fn file_name(path: &Path) -> &OsStr {
    path.file_name().unwrap()
}
