//! The ELF part of Somna's AppImage: see the `somna_appimage` crate's documentation.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    // /proc/self/exe is the AppImage file itself, whatever name or symlink started it.
    let appimage = match std::fs::read_link("/proc/self/exe") {
        Ok(path) => path,
        Err(error) => return fail(&format!("cannot find this program's file: {error}")),
    };
    match somna_appimage::runtime::run(Path::new(&appimage), std::env::args_os().collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error.to_string()),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("somna-appimage-runtime: {message}");
    ExitCode::FAILURE
}
