//! Where the runtime unpacks an image: `${XDG_CACHE_HOME:-~/.cache}/somna-appimage/<name>-<id>`,
//! `<name>` from the AppImage's file name and `<id>` from the payload's SHA-256 (recorded in
//! the trailer at build time). An image is unpacked once; later starts find its directory and
//! go straight to `AppRun`. A rebuilt image has another digest, so it gets a fresh directory.
//!
//! Unpacking goes to `.<name>-<id>.partial-<pid>` beside the final directory and is renamed
//! into place, so two starts racing each other both end up with one complete tree, and an
//! unpack killed halfway leaves only a partial directory, removed by the next start once its
//! process is gone.
//!
//! After a fresh unpack, the directories of earlier builds of the same AppImage (same name,
//! another id) are removed unless a running process still uses them (its executable or its
//! working directory is inside), so updating an AppImage does not leave ~700 MB behind each
//! time.

use crate::error::{Error, Result};
use crate::extract::{self, Placed};
use crate::image::AppImage;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

/// The cache's root directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// An unpacked AppDir in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub dir: PathBuf,
    /// True when this call unpacked it; false when it was already there.
    pub fresh: bool,
}

impl Cache {
    /// The cache under `$XDG_CACHE_HOME` (when absolute) or `$HOME/.cache`.
    pub fn from_env() -> Result<Cache> {
        let root = cache_home(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
            .ok_or(Error::NoCacheHome)?;
        Ok(Cache::at(root.join("somna-appimage")))
    }

    pub fn at(root: PathBuf) -> Cache {
        Cache { root }
    }

    /// The directory `image` unpacks to.
    pub fn entry_dir(&self, image: &AppImage) -> PathBuf {
        self.root.join(entry_name(image))
    }

    /// Returns the image's unpacked directory, unpacking it first if it is not there yet;
    /// `announce` is called with the directory before an unpack starts.
    pub fn ensure(&self, image: &AppImage, announce: impl FnOnce(&Path)) -> Result<Entry> {
        let dir = self.entry_dir(image);
        if dir.is_dir() {
            return Ok(Entry { dir, fresh: false });
        }
        announce(&dir);
        image.verify()?;
        let filesystem = image.filesystem()?;
        fs::create_dir_all(&self.root).map_err(|source| Error::CacheNotWritable {
            path: self.root.clone(),
            source,
        })?;
        let name = entry_name(image);
        self.remove_abandoned_partials(&name);
        let partial = self.root.join(partial_name(&name, std::process::id()));
        let placed =
            extract::unpack_into_place(&filesystem, &partial, &dir).map_err(Error::in_cache)?;
        self.remove_superseded(&app_name_of(image), &dir);
        Ok(Entry {
            dir,
            fresh: placed == Placed::Moved,
        })
    }

    /// Removes `.<name>.partial-<pid>` directories whose process has exited.
    fn remove_abandoned_partials(&self, name: &str) {
        let Ok(entries) = fs::read_dir(&self.root) else {
            return;
        };
        let prefix = format!(".{name}.partial-");
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let Some(pid) = file_name.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
                continue;
            };
            if !process_is_running(pid) {
                extract::discard(&entry.path());
            }
        }
    }
}

impl Cache {
    /// Removes `<app>-<id>` directories other than `keep` (earlier builds of the same
    /// AppImage) that no running process uses.
    pub fn remove_superseded(&self, app: &str, keep: &Path) {
        let Ok(entries) = fs::read_dir(&self.root) else {
            return;
        };
        let in_use = dirs_in_use();
        for entry in entries.flatten() {
            let path = entry.path();
            let is_earlier_build = entry
                .file_name()
                .to_str()
                .and_then(|f| f.strip_prefix(app))
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|id| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()));
            let used = in_use.iter().any(|p| p.starts_with(&path));
            if is_earlier_build && path != keep && path.is_dir() && !used {
                extract::discard(&path);
            }
        }
    }
}

/// The executables and working directories of the processes this user can see.
fn dirs_in_use() -> Vec<PathBuf> {
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in procs.flatten() {
        if !p
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        for link in ["exe", "cwd"] {
            if let Ok(target) = fs::read_link(p.path().join(link)) {
                out.push(target);
            }
        }
    }
    out
}

fn process_is_running(pid: &str) -> bool {
    pid.parse::<u32>()
        .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists())
}

fn partial_name(name: &str, pid: u32) -> String {
    format!(".{name}.partial-{pid}")
}

/// `$XDG_CACHE_HOME` if it is absolute (the XDG spec says to ignore a relative one), else
/// `$HOME/.cache`.
fn cache_home(xdg_cache_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let absolute = |value: Option<OsString>| value.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(xdg_cache_home).or_else(|| absolute(home).map(|home| home.join(".cache")))
}

/// `<file name without .AppImage>-<id>`, with only portable characters in the name.
fn entry_name(image: &AppImage) -> String {
    format!("{}-{}", app_name_of(image), image.trailer().short_id())
}

fn app_name_of(image: &AppImage) -> String {
    let file_name = image
        .path()
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    app_name(&file_name)
}

fn app_name(file_name: &str) -> String {
    let lower = file_name.to_ascii_lowercase();
    let stem = match lower.strip_suffix(".appimage") {
        Some(stem) => &file_name[..stem.len()],
        None => file_name,
    };
    let portable = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let name: String = stem
        .chars()
        .map(|c| if portable(c) { c } else { '_' })
        .collect();
    let name = name.trim_start_matches('.');
    if name.is_empty() {
        "app".to_owned()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_under_xdg_cache_home_when_it_is_absolute() {
        let home = Some(OsString::from("/home/ada"));
        assert_eq!(
            cache_home(Some("/var/cache/ada".into()), home.clone()),
            Some("/var/cache/ada".into())
        );
        assert_eq!(
            cache_home(Some("relative".into()), home.clone()),
            Some("/home/ada/.cache".into())
        );
        assert_eq!(cache_home(None, home), Some("/home/ada/.cache".into()));
        assert_eq!(cache_home(None, None), None);
    }

    #[test]
    fn the_app_name_is_the_file_name_without_its_extension() {
        assert_eq!(
            app_name("Somna-0.1.0-x86_64.AppImage"),
            "Somna-0.1.0-x86_64"
        );
        assert_eq!(app_name("somna.appimage"), "somna");
        assert_eq!(app_name("my app (copy)"), "my_app__copy_");
        assert_eq!(app_name(".AppImage"), "app");
        assert_eq!(app_name("..hidden.AppImage"), "hidden");
    }

    #[test]
    fn superseded_builds_are_removed_unless_a_process_uses_them() {
        let root =
            std::env::temp_dir().join(format!("somna-appimage-superseded-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let dir = |name: &str| {
            let d = root.join(name);
            fs::create_dir_all(d.join("usr")).unwrap();
            d
        };
        let (current, old, used) = (
            dir("Somna-1-00000000000000aa"),
            dir("Somna-1-00000000000000bb"),
            dir("Somna-1-00000000000000cc"),
        );
        let (other_app, not_an_id) = (dir("Other-00000000000000bb"), dir("Somna-1-notanid"));
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(used.join("usr"))
            .spawn()
            .unwrap();
        Cache::at(root.clone()).remove_superseded("Somna-1", &current);
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        assert!(
            current.is_dir() && used.is_dir(),
            "the current build and one in use stay"
        );
        assert!(!old.exists(), "an earlier build no process uses is removed");
        assert!(
            other_app.is_dir() && not_an_id.is_dir(),
            "other apps' and other names' stay"
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn only_partials_of_exited_processes_are_abandoned() {
        assert!(process_is_running(&std::process::id().to_string()));
        assert!(!process_is_running("4294967295"));
        assert!(!process_is_running("not-a-pid"));
        assert_eq!(partial_name("Somna-1-abc", 42), ".Somna-1-abc.partial-42");
    }
}
