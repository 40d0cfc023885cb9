//! `somna-appimage-build [--runtime PATH] <AppDir> <out.AppImage>`: packs an AppDir into an
//! AppImage whose ELF part is `somna-appimage-runtime` (by default the one beside this program).

use somna_appimage::{build, AppDir, Error};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: somna-appimage-build [--runtime PATH] <AppDir> <out.AppImage>";

struct Args {
    runtime: Option<PathBuf>,
    appdir: PathBuf,
    out: PathBuf,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("somna-appimage-build: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Error> {
    let args = parse(std::env::args_os().skip(1).collect())?;
    let runtime = match args.runtime {
        Some(runtime) => runtime,
        None => beside_this_program("somna-appimage-runtime")?,
    };
    let started = Instant::now();
    let appdir = AppDir::validate(&args.appdir)?;
    let built = build(&runtime, &appdir, &args.out)?;
    println!(
        "{}: {:.1} MiB (runtime {} KiB, image {:.1} MiB) in {:.1} s",
        args.out.display(),
        (built.runtime_len + built.payload_len) as f64 / 1048576.0,
        built.runtime_len / 1024,
        built.payload_len as f64 / 1048576.0,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn parse(args: Vec<std::ffi::OsString>) -> Result<Args, Error> {
    let mut runtime = None;
    let mut positional = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--runtime") => {
                runtime = Some(
                    args.next()
                        .ok_or_else(|| usage("--runtime needs a path"))?
                        .into(),
                )
            }
            Some("-h" | "--help") => return Err(usage("")),
            Some(flag) if flag.starts_with('-') => {
                return Err(usage(&format!("unknown option {flag}")))
            }
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let [appdir, out]: [PathBuf; 2] = positional
        .try_into()
        .map_err(|_| usage("expected an AppDir and an output path"))?;
    Ok(Args {
        runtime,
        appdir,
        out,
    })
}

fn beside_this_program(name: &str) -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(|source| Error::Read {
        path: "/proc/self/exe".into(),
        source,
    })?;
    Ok(exe.with_file_name(name))
}

fn usage(problem: &str) -> Error {
    if problem.is_empty() {
        Error::Usage(USAGE.into())
    } else {
        Error::Usage(format!("{problem}\n{USAGE}"))
    }
}
