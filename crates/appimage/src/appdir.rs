//! The AppDir the builder packs, checked for what AppImage tools and desktops expect at its
//! top: an executable `AppRun`, exactly one desktop entry, and that entry's icon.

use crate::error::{Error, Result};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Keys a desktop entry must have for the AppImage to integrate with a desktop.
const REQUIRED_KEYS: [&str; 4] = ["Type", "Name", "Exec", "Icon"];

/// Icon formats accepted at the AppDir's top, as appimagetool does.
const ICON_EXTENSIONS: [&str; 3] = ["png", "svg", "xpm"];

/// A checked AppDir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppDir {
    pub root: PathBuf,
    pub desktop_entry: PathBuf,
    pub icon: PathBuf,
}

impl AppDir {
    pub fn validate(root: &Path) -> Result<AppDir> {
        let invalid = |reason: String| Error::InvalidAppDir {
            path: root.to_owned(),
            reason,
        };
        if !root.is_dir() {
            return Err(invalid("it is not a directory".into()));
        }
        check_app_run(&root.join("AppRun")).map_err(invalid)?;
        let desktop_entry = single_desktop_entry(root).map_err(invalid)?;
        let text = fs::read_to_string(&desktop_entry)
            .map_err(|e| invalid(format!("cannot read {}: {e}", desktop_entry.display())))?;
        let missing = missing_keys(&text);
        if !missing.is_empty() {
            return Err(invalid(format!(
                "{} lacks {} in its [Desktop Entry] group",
                desktop_entry.display(),
                missing.join(", ")
            )));
        }
        let icon_name = desktop_entry_value(&text, "Icon").unwrap_or_default();
        let icon = find_icon(root, icon_name).map_err(invalid)?;
        Ok(AppDir {
            root: root.to_owned(),
            desktop_entry,
            icon,
        })
    }
}

fn check_app_run(app_run: &Path) -> std::result::Result<(), String> {
    match fs::metadata(app_run) {
        Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Ok(()),
        Ok(meta) if meta.is_file() => Err("AppRun is not executable (chmod +x it)".into()),
        Ok(_) => Err("AppRun is not a file".into()),
        Err(_) => Err("it has no AppRun at its top".into()),
    }
}

fn single_desktop_entry(root: &Path) -> std::result::Result<PathBuf, String> {
    let entries = fs::read_dir(root).map_err(|e| format!("cannot list it: {e}"))?;
    let mut desktop: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "desktop") && path.is_file())
        .collect();
    desktop.sort();
    match desktop.len() {
        1 => Ok(desktop.remove(0)),
        0 => Err("it has no *.desktop file at its top".into()),
        n => {
            let names: Vec<String> = desktop.iter().map(|p| p.display().to_string()).collect();
            Err(format!(
                "it has {n} *.desktop files at its top ({}): keep one",
                names.join(", ")
            ))
        }
    }
}

fn find_icon(root: &Path, name: &str) -> std::result::Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = ICON_EXTENSIONS
        .iter()
        .map(|ext| root.join(format!("{name}.{ext}")))
        .collect();
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .ok_or_else(|| {
            let names: Vec<String> = ICON_EXTENSIONS
                .iter()
                .map(|ext| format!("{name}.{ext}"))
                .collect();
            format!(
                "its desktop entry names the icon '{name}' but none of {} is at its top",
                names.join(", ")
            )
        })
}

/// The required keys a desktop entry's `[Desktop Entry]` group does not set.
fn missing_keys(text: &str) -> Vec<&'static str> {
    REQUIRED_KEYS
        .into_iter()
        .filter(|key| desktop_entry_value(text, key).is_none_or(str::is_empty))
        .collect()
}

/// The value of `key` in the `[Desktop Entry]` group (not in other groups, such as actions).
fn desktop_entry_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let mut in_entry = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
        } else if let Some((k, v)) = line.split_once('=').filter(|_| in_entry) {
            if k.trim() == key {
                return Some(v.trim());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &str =
        "[Desktop Entry]\nType=Application\nName=Somna\nExec=somna-app\nIcon=somna\n\
                         \n[Desktop Action New]\nIcon=other\n";

    #[test]
    fn values_are_read_from_the_desktop_entry_group_only() {
        assert_eq!(desktop_entry_value(ENTRY, "Icon"), Some("somna"));
        assert_eq!(desktop_entry_value(ENTRY, "Categories"), None);
        let action_first = "[Desktop Action New]\nIcon=other\n[Desktop Entry]\nIcon=somna\n";
        assert_eq!(desktop_entry_value(action_first, "Icon"), Some("somna"));
    }

    #[test]
    fn an_entry_without_exec_or_with_an_empty_icon_lacks_them() {
        assert!(missing_keys(ENTRY).is_empty());
        let text = "[Desktop Entry]\nType=Application\nName=Somna\nIcon=\n";
        assert_eq!(missing_keys(text), vec!["Exec", "Icon"]);
    }
}
