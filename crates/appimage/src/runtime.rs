//! What `somna-appimage-runtime` does with its arguments: start the app, or, when the first
//! argument is a `--appimage-*` option, act on the image itself.

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::extract::{self, Placed};
use crate::image::AppImage;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `--appimage-extract` writes, relative to the working directory (as upstream).
pub const EXTRACT_DIR: &str = "squashfs-root";

pub const HELP: &str = "\
This is an AppImage of Somna, run by somna-appimage-runtime.

Without options, the image is unpacked once into
${XDG_CACHE_HOME:-~/.cache}/somna-appimage/<name>-<id> and its AppRun is started
with the arguments given here. No FUSE is needed.

Options (only as the first argument):
  --appimage-extract   unpack the image into ./squashfs-root
  --appimage-offset    print the byte offset of the SquashFS image in this file
  --appimage-help      print this help
  --appimage-version   print the runtime's version
";

/// What the runtime was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Run,
    Extract,
    Offset,
    Help,
    Version,
}

impl Action {
    /// Reads the first argument after the program name; anything else is the app's.
    pub fn from_first_arg(arg: Option<&OsStr>) -> Result<Action> {
        let Some(option) = arg
            .and_then(OsStr::to_str)
            .and_then(|a| a.strip_prefix("--appimage-"))
        else {
            return Ok(Action::Run);
        };
        match option {
            "extract" => Ok(Action::Extract),
            "offset" => Ok(Action::Offset),
            "help" => Ok(Action::Help),
            "version" => Ok(Action::Version),
            _ => Err(Error::Usage(format!(
                "unknown runtime option --appimage-{option} (see --appimage-help)"
            ))),
        }
    }
}

/// The runtime's whole run: `argv` as the process received it, `appimage` the file the
/// process was started from.
pub fn run(appimage: &Path, argv: Vec<OsString>) -> Result<()> {
    let mut argv = argv.into_iter();
    let argv0 = argv.next().unwrap_or_default();
    let args: Vec<OsString> = argv.collect();
    match Action::from_first_arg(args.first().map(OsString::as_os_str))? {
        Action::Run => return Err(start(&AppImage::open(appimage)?, &argv0, &args)),
        Action::Extract => {
            extract_here(&AppImage::open(appimage)?, Path::new(EXTRACT_DIR))?;
            println!("extracted into {EXTRACT_DIR}");
        }
        Action::Offset => println!("{}", AppImage::open(appimage)?.offset()),
        Action::Help => print!("{HELP}"),
        Action::Version => println!("somna-appimage-runtime {}", env!("CARGO_PKG_VERSION")),
    }
    Ok(())
}

/// Unpacks the image into the cache if needed and replaces this process with its `AppRun`;
/// returns only on failure.
fn start(image: &AppImage, argv0: &OsStr, args: &[OsString]) -> Error {
    let cache = match Cache::from_env() {
        Ok(cache) => cache,
        Err(error) => return error,
    };
    let announce = |dir: &Path| {
        eprintln!(
            "somna-appimage: first start of this image, unpacking it into {}",
            dir.display()
        )
    };
    let entry = match cache.ensure(image, announce) {
        Ok(entry) => entry,
        Err(error) => return error,
    };
    let app_run = entry.dir.join("AppRun");
    let mut command = Command::new(&app_run);
    command
        .args(args)
        .env("APPIMAGE", image.path())
        .env("APPDIR", &entry.dir)
        .env("ARGV0", argv0);
    if let Ok(cwd) = std::env::current_dir() {
        command.env("OWD", cwd);
    }
    Error::Launch {
        path: app_run,
        source: command.exec(),
    }
}

/// `--appimage-extract`: the image's tree at `dest`, complete or not at all.
pub fn extract_here(image: &AppImage, dest: &Path) -> Result<()> {
    if dest.symlink_metadata().is_ok() {
        return Err(Error::DestinationExists {
            path: dest.to_owned(),
        });
    }
    image.verify()?;
    let filesystem = image.filesystem()?;
    let partial = sibling(
        dest,
        &format!(".{EXTRACT_DIR}.partial-{}", std::process::id()),
    );
    match extract::unpack_into_place(&filesystem, &partial, dest)? {
        Placed::Moved => Ok(()),
        Placed::AlreadyThere => Err(Error::DestinationExists {
            path: dest.to_owned(),
        }),
    }
}

fn sibling(path: &Path, name: &str) -> PathBuf {
    path.parent()
        .map_or_else(|| PathBuf::from(name), |parent| parent.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(arg: &str) -> Result<Action> {
        Action::from_first_arg(Some(OsStr::new(arg)))
    }

    #[test]
    fn runtime_options_are_read_from_the_first_argument() {
        assert_eq!(action("--appimage-extract").unwrap(), Action::Extract);
        assert_eq!(action("--appimage-offset").unwrap(), Action::Offset);
        assert_eq!(action("--appimage-help").unwrap(), Action::Help);
        assert_eq!(action("--appimage-version").unwrap(), Action::Version);
    }

    #[test]
    fn other_arguments_and_none_start_the_app() {
        assert_eq!(action("--cli").unwrap(), Action::Run);
        assert_eq!(action("--appimage").unwrap(), Action::Run);
        assert_eq!(Action::from_first_arg(None).unwrap(), Action::Run);
    }

    #[test]
    fn an_unknown_runtime_option_is_a_usage_error() {
        let error = action("--appimage-mount").unwrap_err();
        assert!(error.to_string().contains("--appimage-mount"), "{error}");
    }

    #[test]
    fn the_partial_extraction_sits_beside_its_destination() {
        assert_eq!(
            sibling(Path::new("squashfs-root"), ".p"),
            PathBuf::from(".p")
        );
        assert_eq!(
            sibling(Path::new("/tmp/x/squashfs-root"), ".p"),
            PathBuf::from("/tmp/x/.p")
        );
    }
}
