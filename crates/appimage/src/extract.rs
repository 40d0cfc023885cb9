//! Unpacking a SquashFS image into a directory: directories, regular files and symlinks, with
//! their permission bits. Callers unpack into a fresh directory and rename it into place, so
//! no reader ever sees a half-written tree.

use crate::error::{Error, Result};
use backhand::{FilesystemReader, InnerNode, SquashfsFileReader};
use std::fs::{self, OpenOptions, Permissions};
use std::io::{Read, Write};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// How [`unpack_into_place`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// This call's tree is now at the destination.
    Moved,
    /// Another process put a tree there first; this call's tree was discarded.
    AlreadyThere,
}

/// Unpacks `image` into `partial`, then renames it to `dest`: `dest` is either absent or
/// complete, whatever happens to this process. A failed unpack leaves neither behind.
pub fn unpack_into_place(image: &FilesystemReader, partial: &Path, dest: &Path) -> Result<Placed> {
    discard(partial);
    if let Err(error) = unpack(image, partial) {
        discard(partial);
        return Err(error);
    }
    match fs::rename(partial, dest) {
        Ok(()) => Ok(Placed::Moved),
        Err(source) => {
            discard(partial);
            if dest.is_dir() {
                Ok(Placed::AlreadyThere)
            } else {
                Err(write_error(dest, source))
            }
        }
    }
}

/// Writes every node of `image` under `dest`, which must not exist yet.
pub fn unpack(image: &FilesystemReader, dest: &Path) -> Result<()> {
    create_dir(dest)?;
    let mut dir_modes = vec![(dest.to_owned(), image.root.root().header.permissions)];
    // The first node is the root, `dest` itself; parents come before their children.
    for node in image.files().skip(1) {
        let relative = safe_relative(&node.fullpath)?;
        let path = dest.join(relative);
        match &node.inner {
            InnerNode::Dir(_) => {
                create_dir(&path)?;
                dir_modes.push((path, node.header.permissions));
            }
            InnerNode::File(file) => write_file(image, file, &path, node.header.permissions)?,
            InnerNode::Symlink(link) => {
                symlink(&link.link, &path).map_err(|e| write_error(&path, e))?
            }
            other => return Err(unsupported(relative, other)),
        }
    }
    // Deepest first, so a read-only directory is closed only after its children are written.
    for (dir, mode) in dir_modes.iter().rev() {
        set_mode(dir, *mode)?;
    }
    Ok(())
}

/// The node's path below the image root; `/` and `..` components would escape `dest`.
fn safe_relative(fullpath: &Path) -> Result<&Path> {
    let relative = fullpath.strip_prefix("/").unwrap_or(fullpath);
    let only_names = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    if !only_names || relative.as_os_str().is_empty() {
        return Err(Error::UnsafePath {
            path: fullpath.to_owned(),
        });
    }
    Ok(relative)
}

fn write_file(
    image: &FilesystemReader,
    file: &SquashfsFileReader,
    path: &Path,
    mode: u16,
) -> Result<()> {
    // create_new: never write through something already at the path.
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| write_error(path, e))?;
    let mut reader = image.file(file).reader();
    let mut buffer = vec![0u8; 1 << 17];
    loop {
        let n = reader.read(&mut buffer).map_err(|e| Error::CorruptImage {
            path: path.to_owned(),
            reason: format!("reading it from the image failed: {e}"),
        })?;
        if n == 0 {
            break;
        }
        out.write_all(&buffer[..n])
            .map_err(|e| write_error(path, e))?;
    }
    drop(out);
    set_mode(path, mode)
}

fn create_dir(path: &Path) -> Result<()> {
    // Owner-writable while children are added; the image's mode is applied afterwards.
    fs::create_dir(path).map_err(|e| write_error(path, e))
}

fn set_mode(path: &Path, mode: u16) -> Result<()> {
    let permissions = Permissions::from_mode(u32::from(mode) & 0o7777);
    fs::set_permissions(path, permissions).map_err(|e| write_error(path, e))
}

fn unsupported(path: &Path, node: &InnerNode<SquashfsFileReader>) -> Error {
    let kind = match node {
        InnerNode::CharacterDevice(_) => "character device",
        InnerNode::BlockDevice(_) => "block device",
        InnerNode::NamedPipe => "named pipe",
        InnerNode::Socket => "socket",
        InnerNode::Dir(_) | InnerNode::File(_) | InnerNode::Symlink(_) => "supported node",
    };
    Error::UnsupportedNode {
        path: path.to_owned(),
        kind,
    }
}

fn write_error(path: &Path, source: std::io::Error) -> Error {
    Error::Write {
        path: path.to_owned(),
        source,
    }
}

/// Removes a partly written tree; a failure to remove it is not worth a second error.
pub fn discard(path: &Path) {
    if fs::symlink_metadata(path).is_ok() {
        make_owner_writable(path);
        let _ = fs::remove_dir_all(path);
    }
}

/// Read-only directories (mode 0555 from the image) cannot be emptied by their owner: open them.
fn make_owner_writable(path: &Path) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = fs::set_permissions(
        path,
        Permissions::from_mode(meta.permissions().mode() | 0o700),
    );
    let children: Vec<PathBuf> = fs::read_dir(path)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    for child in children {
        make_owner_writable(&child);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_paths_become_paths_below_the_destination() {
        assert_eq!(
            safe_relative(Path::new("/usr/bin/somna")).unwrap(),
            Path::new("usr/bin/somna")
        );
    }

    #[test]
    fn parent_and_empty_components_are_refused() {
        for path in ["/usr/../../etc/passwd", "/", "//"] {
            assert!(
                matches!(
                    safe_relative(Path::new(path)),
                    Err(Error::UnsafePath { .. })
                ),
                "{path} was accepted"
            );
        }
    }

    #[test]
    fn discard_removes_a_tree_with_read_only_directories() {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        fs::create_dir_all(tree.join("locked/inner")).unwrap();
        fs::write(tree.join("locked/inner/file"), b"x").unwrap();
        fs::set_permissions(tree.join("locked/inner"), Permissions::from_mode(0o555)).unwrap();
        fs::set_permissions(tree.join("locked"), Permissions::from_mode(0o555)).unwrap();
        discard(&tree);
        assert!(!tree.exists());
    }
}
