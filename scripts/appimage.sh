#!/usr/bin/env bash
# Builds Somna's AppImage offline: an AppDir of the already-built binaries and the WebKitGTK
# they run on, packed by somna-appimage-build (crates/appimage) behind Somna's own runtime.
#
#   scripts/appimage.sh                  dist/Somna-<version>-x86_64.AppImage from the debug build
#   scripts/appimage.sh --release        the same from the release build
#   scripts/appimage.sh --system-webkit  without the libraries: uses the system's WebKitGTK 4.1
#                                        and GTK 3 (Debian/Ubuntu: libwebkit2gtk-4.1-0)
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
# What is bundled: every shared library `ldd` lists for somna-app (WebKitGTK 4.1, GTK 3,
# GLib, libsoup, ICU, GStreamer's core libraries...) except those AppImages leave to the host:
# glibc, libstdc++ and libgcc_s, the GPU drivers' side (libGL, libEGL, libgbm, libdrm), X11
# and xcb, fontconfig and freetype, D-Bus, udev/systemd, ALSA, zlib, expat. Also WebKit's
# helper processes (WebKitWebProcess, WebKitNetworkProcess, the injected bundle). libwebkit2gtk
# finds those through a path compiled into it (/usr/lib/<triplet>/webkit2gtk-4.1), so the
# bundled copy is patched to the same-length relative path ././/lib/<triplet>/webkit2gtk-4.1
# and AppRun starts the app in the AppDir's usr/. The libraries come from the build machine
# (Debian 12 here), so the AppImage needs that machine's glibc (2.36) or newer. Not bundled,
# the host's are used: GSettings schemas, GDK-Pixbuf loaders, GIO modules, GTK themes and
# icons, GStreamer plugins. scripts/appimage-check.sh starts the app with the host's WebKitGTK
# hidden, to show that the bundled one is what runs.
#
# Why not Tauri's AppImage bundler: it downloads linuxdeploy, its plugins and appimagetool
# from GitHub at build time, and no package registry this project can reach ships them.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

profile=debug
cargo_flags=()
bundle=yes
for arg in "$@"; do
  case "$arg" in
    --release)
      profile=release
      cargo_flags=(--release)
      ;;
    --system-webkit) bundle=no ;;
    *) echo "usage: scripts/appimage.sh [--release] [--system-webkit]" >&2; exit 2 ;;
  esac
done
fail() { echo "appimage.sh: $*" >&2; exit 1; }

# Libraries left to the host, after AppImage's own excludelist (see the header).
HOST_LIBRARIES='^(ld-linux.*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl|libstdc\+\+|libgcc_s|libGL|libEGL|libGLX|libGLdispatch|libOpenGL|libgbm|libdrm|libX11|libX11-xcb|libxcb|libxcb-.*|libasound|libfontconfig|libfreetype|libexpat|libz|libudev|libsystemd|libcom_err|libgpg-error|libuuid|libdbus-1)\.so'

# Copies somna-app's libraries and WebKit's helper processes into the AppDir's usr/, and
# points the copied libwebkit2gtk at the copied helpers.
bundle_libraries() {
  local appdir="$1" app="$1/usr/bin/somna-app" name path webkit_lib helpers bundled
  mkdir -p "$appdir/usr/lib"
  while read -r name path; do
    [[ "$name" =~ $HOST_LIBRARIES ]] || cp -L "$path" "$appdir/usr/lib/$name"
  done < <(ldd "$app" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
  webkit_lib="$(ldd "$app" | awk '$1 == "libwebkit2gtk-4.1.so.0" { print $3 }')"
  [ -n "$webkit_lib" ] || fail "somna-app does not link libwebkit2gtk-4.1.so.0"
  helpers="/usr/lib/$(basename "$(dirname "$webkit_lib")")/webkit2gtk-4.1"
  [ -x "$helpers/WebKitWebProcess" ] || fail "no WebKit helper processes in $helpers"
  bundled="$appdir/usr/${helpers#/usr/}"
  mkdir -p "$bundled/injected-bundle"
  cp "$helpers/WebKitWebProcess" "$helpers/WebKitNetworkProcess" "$bundled/"
  cp "$helpers/injected-bundle/libwebkit2gtkinjectedbundle.so" "$bundled/injected-bundle/"
  python3 - "$appdir/usr/lib/libwebkit2gtk-4.1.so.0" "$helpers" <<'PY'
import sys
lib, helpers = sys.argv[1], sys.argv[2].encode()
relative = b"././" + helpers[len(b"/usr"):]  # the same length: nothing else in the file moves
data = open(lib, "rb").read()
if data.count(helpers) == 0:
    sys.exit(f"appimage.sh: {lib} does not contain {helpers.decode()}")
open(lib, "wb").write(data.replace(helpers, relative))
PY
  echo "bundled $(find "$appdir/usr/lib" -type f | wc -l) files ($(du -sh "$appdir/usr/lib" | cut -f1))"
}

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
if [ -e "$here/usr/lib/libwebkit2gtk-4.1.so.0" ]; then
  export LD_LIBRARY_PATH="$here/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The bundled libwebkit2gtk finds its helper processes at ././/lib/..., relative to usr/:
  # the app starts there, with relative store paths made absolute first.
  for var in SOMNA_HOME SOMNA_DB SOMNA_MODEL_DIR; do
    eval "value=\${$var:-}"
    case "$value" in
      '' | /*) ;;
      *) export "$var=$PWD/$value" ;;
    esac
  done
  cd "$here/usr"
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

if [ "$bundle" = yes ]; then
  step "bundling WebKitGTK and the libraries somna-app needs"
  bundle_libraries "$appdir"
fi

step "packing $out"
mkdir -p dist
"$builder" --runtime "$runtime" "$appdir" "$out"
echo "$out"
