#!/usr/bin/env bash
# Builds Somna's AppImage offline: an AppDir of the already-built binaries, packed by
# somna-appimage-build (crates/appimage) behind Somna's own AppImage runtime.
#
#   scripts/appimage.sh            dist/Somna-<version>-x86_64.AppImage from the debug build
#   scripts/appimage.sh --release  the same from the release build
#
# The desktop app and the CLI must be built already, in $CARGO_TARGET_DIR/<profile>
# (scripts/package.sh builds both; so does `cargo build --workspace`), or in
# $SOMNA_APP_BIN_DIR when set. The AppImage tools are built here (`cargo build -p
# somna-appimage`, seconds) when missing or older than their sources.
#
# The AppImage runs `somna-app`; `Somna-<version>-x86_64.AppImage --cli ARGS` runs the `somna`
# CLI instead. Its runtime unpacks the image once into ~/.cache/somna-appimage/ and starts
# it from there, so no FUSE is needed (see crates/appimage/src/lib.rs).
#
# Why not Tauri's AppImage bundler: it downloads linuxdeploy, its plugins and appimagetool
# from GitHub at build time, and no package registry this project can reach ships them.
#
# What the AppImage does not bundle: WebKitGTK 4.1 and GTK 3. The app uses the system's
# (Debian/Ubuntu: `apt install libwebkit2gtk-4.1-0`), as the .deb does through its
# dependencies. The AppImage holds only Somna's two binaries, which need nothing beyond
# WebKitGTK, GTK and glibc.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

profile=debug
cargo_flags=()
if [ "${1:-}" = "--release" ]; then
  profile=release
  cargo_flags=(--release)
fi
fail() { echo "appimage.sh: $*" >&2; exit 1; }

bin_dir="${SOMNA_APP_BIN_DIR:-$CARGO_TARGET_DIR/$profile}"
for bin in somna-app somna; do
  [ -x "$bin_dir/$bin" ] || fail "$bin_dir/$bin is missing: build the app and the CLI first (scripts/package.sh)"
done

tools_dir="$CARGO_TARGET_DIR/$profile"
builder="$tools_dir/somna-appimage-build"
runtime="$tools_dir/somna-appimage-runtime"
if [ ! -x "$builder" ] || [ ! -x "$runtime" ] ||
  [ -n "$(find crates/appimage Cargo.lock -newer "$runtime" -type f -print -quit)" ]; then
  step "building the AppImage tools ($profile)"
  cargo build --locked "${cargo_flags[@]}" -p somna-appimage
fi

version="$(python3 -c 'import json; print(json.load(open("tauri.conf.json"))["version"])')"
out="dist/Somna-$version-x86_64.AppImage"

step "assembling the AppDir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
appdir="$work/Somna.AppDir"
mkdir -p "$appdir/usr/bin" "$appdir/usr/share/applications" "$appdir/usr/share/icons/hicolor/256x256/apps"
cp "$bin_dir/somna-app" "$bin_dir/somna" "$appdir/usr/bin/"

cat >"$appdir/AppRun" <<'SH'
#!/bin/sh
# Somna's AppImage entry point: the desktop app, or with --cli first, the somna CLI.
here="${APPDIR:-$(dirname "$(readlink -f "$0")")}"
if [ "${1:-}" = "--cli" ]; then
  shift
  exec "$here/usr/bin/somna" "$@"
fi
exec "$here/usr/bin/somna-app" "$@"
SH
chmod 755 "$appdir/AppRun"

cat >"$appdir/somna.desktop" <<DESKTOP
[Desktop Entry]
Type=Application
Name=Somna
Comment=See inside your AI agents' memory
Exec=somna-app
Icon=somna
Categories=Development;
Terminal=false
X-AppImage-Version=$version
DESKTOP
cp "$appdir/somna.desktop" "$appdir/usr/share/applications/somna.desktop"
cp src-tauri/icons/icon.png "$appdir/somna.png"
cp src-tauri/icons/icon.png "$appdir/usr/share/icons/hicolor/256x256/apps/somna.png"
ln -s somna.png "$appdir/.DirIcon"

step "packing $out"
mkdir -p dist
"$builder" --runtime "$runtime" "$appdir" "$out"
echo "$out"
