#!/usr/bin/env bash
# Builds Somna's Debian package with Tauri's bundler: the desktop app (`somna-app`), the
# `somna` CLI beside it in /usr/bin, a desktop entry and the icons.
#
#   scripts/package.sh            builds dist/somna_<version>_amd64.deb (prints its path last)
#   scripts/package.sh --release  the same from an optimised build (~25 min more when cold)
#
# The binaries are the ones `scripts/test.sh` builds (`cargo build --workspace`, the test
# profile: dependencies and the engine at opt-level 3, the shell at 1; the app is always
# built with Tauri's `custom-protocol`), and `tauri bundle` packages them as they are, so
# packaging after the tests compiles nothing. (`tauri build` would run cargo for the app
# package alone, whose feature set differs from the workspace's, and recompile most
# dependencies: 30 minutes here.) Pass --release for an optimised distribution build.
#
# Why a generated config: the app's tauri.conf.json lives at the repository root (plain
# cargo builds read it through src-tauri/build.rs), but the Tauri CLI only works when the
# config sits in the app crate's folder (upstream tauri-apps/tauri#12779). So this script
# writes src-tauri/tauri.conf.json (ignored by git) from the root one, with its paths made
# relative to src-tauri and the bundle's extra files added, and runs the CLI on it.
#
# The AppImage is not built here: Tauri's AppImage bundler downloads linuxdeploy and its
# plugins at build time, and no package registry this project can reach ships them.
# scripts/appimage.sh builds it with Somna's own runtime and builder (crates/appimage).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

profile=debug
cli_flags=(--debug)
if [ "${1:-}" = "--release" ]; then
  profile=release
  cli_flags=()
fi

# The Tauri CLI from npm (a native binary inside the package; `cargo install tauri-cli`
# takes ~40 min), pinned to the tauri crate's minor version, installed once outside the clone.
TAURI_CLI_VERSION=2.12.5
cli_home="${SOMNA_TAURI_CLI_HOME:-$HOME/.cache/somna/tauri-cli-$TAURI_CLI_VERSION}"
if [ ! -x "$cli_home/node_modules/.bin/tauri" ]; then
  step "installing @tauri-apps/cli@$TAURI_CLI_VERSION into $cli_home"
  mkdir -p "$cli_home"
  npm install --prefix "$cli_home" --no-audit --no-fund --no-save "@tauri-apps/cli@$TAURI_CLI_VERSION" >/dev/null
fi
tauri="$cli_home/node_modules/.bin/tauri"

somna_build_ui
if [ "$profile" = release ]; then
  step "cargo build --release (somna-app, somna)"
  cargo build --locked --release --workspace --bins
else
  somna_build_all
fi
cli_bin="$CARGO_TARGET_DIR/$profile/somna"
[ -x "$cli_bin" ] || { echo "package.sh: $cli_bin was not built" >&2; exit 1; }

step "writing src-tauri/tauri.conf.json for the Tauri CLI"
python3 - "$cli_bin" <<'PY'
import json, sys
cli_bin = sys.argv[1]
with open("tauri.conf.json") as f:
    conf = json.load(f)
# Paths in the root config are relative to the repository root; here, to src-tauri.
conf["build"]["frontendDist"] = "../" + conf["build"]["frontendDist"]
bundle = conf["bundle"]
bundle["icon"] = [p.removeprefix("src-tauri/") for p in bundle["icon"]]
bundle["targets"] = ["deb"]
bundle.setdefault("shortDescription", "See inside your AI agents' memory")
bundle.setdefault("longDescription",
    "Somna is a memory engine for AI agents that you can see inside: a memory browser, "
    "a live 3D projection, a retrieval X-ray, a bubble graph and sleep-cycle consolidation. "
    "The somna command-line tool is installed beside the app.")
bundle.setdefault("category", "Development")
linux = bundle.setdefault("linux", {})
deb = linux.setdefault("deb", {})
# The CLI ships in the same package: `somna model install` fetches the embedding model.
deb["files"] = {"/usr/bin/somna": cli_bin}
deb["section"] = "devel"
with open("src-tauri/tauri.conf.json", "w") as f:
    json.dump(conf, f, indent=2)
    f.write("\n")
PY

step "tauri bundle ${cli_flags[*]} --bundles deb"
[ -x "$CARGO_TARGET_DIR/$profile/somna-app" ] || { echo "package.sh: somna-app was not built" >&2; exit 1; }
# Packages the binaries already in $CARGO_TARGET_DIR/$profile; --ci: no prompts, no spinner.
TAURI_APP_PATH=src-tauri "$tauri" bundle "${cli_flags[@]}" --bundles deb --ci

deb_dir="$CARGO_TARGET_DIR/$profile/bundle/deb"
deb="$(ls -t "$deb_dir"/*.deb | head -n 1)"
mkdir -p dist
cp "$deb" dist/
step "built dist/$(basename "$deb")"
echo "dist/$(basename "$deb")"
