#!/usr/bin/env bash
# Checks the AppImage that scripts/appimage.sh built, as a user would meet it: the CLI through
# `--cli --version`, the first start (which unpacks the image) and the second (which does
# not), `--appimage-extract`, and the desktop app started from the AppImage under Xvfb on a
# fresh store with the demo, its window shot to dist/appimage-app.png. Exits non-zero when
# any of it fails.
#
#   scripts/appimage-check.sh [dist/Somna-<version>-x86_64.AppImage]
#
# The AppImage unpacks into a cache in a temporary directory (XDG_CACHE_HOME), so the check
# neither uses nor leaves an unpacked copy in ~/.cache. A bundled AppImage (the default) is
# started with the host's WebKitGTK hidden; one built with --system-webkit needs the system's
# WebKitGTK 4.1 and GTK 3 (scripts/appimage.sh says what is bundled).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

appimage="${1:-$(ls -t dist/Somna-*.AppImage 2>/dev/null | head -n 1)}"
[ -f "$appimage" ] || { echo "appimage-check.sh: no AppImage found (run scripts/appimage.sh first)" >&2; exit 1; }
appimage="$(readlink -f "$appimage")"
fail() { echo "appimage-check.sh: $*" >&2; exit 1; }
version="$(python3 -c 'import json; print(json.load(open("tauri.conf.json"))["version"])')"

work="$(mktemp -d)"
cleanup() {
  for pid in ${app_pid:-} ${xvfb_pid:-}; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  done
  # The app's session bus (autolaunched on the X display) starts xdg-document-portal, which
  # mounts $XDG_CACHE_HOME/doc when XDG_RUNTIME_DIR is unset; it unmounts once Xvfb is gone.
  for _ in $(seq 20); do
    grep -q " $work/" /proc/mounts || break
    sleep 0.5
  done
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_CACHE_HOME="$work/cache"
now() { date +%s.%N; }
seconds_since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }

step "first start: $(basename "$appimage") --cli --version (unpacks the image)"
started="$(now)"
cli_version="$("$appimage" --cli --version)"
echo "$cli_version (in $(seconds_since "$started") s)"
[ "$cli_version" = "somna $version" ] || fail "'$cli_version' is not 'somna $version'"
unpacked="$(find "$XDG_CACHE_HOME/somna-appimage" -mindepth 1 -maxdepth 1)"
[ "$(echo "$unpacked" | wc -l)" = 1 ] && [ -x "$unpacked/usr/bin/somna-app" ] ||
  fail "the first start did not leave one unpacked AppDir in $XDG_CACHE_HOME/somna-appimage"
echo "unpacked: $unpacked ($(du -sh "$unpacked" | cut -f1))"

step "second start (reuses the unpacked AppDir)"
started="$(now)"
"$appimage" --cli --version 2>"$work/second.err" >/dev/null
echo "in $(seconds_since "$started") s"
[ ! -s "$work/second.err" ] || { cat "$work/second.err" >&2; fail "the second start wrote to stderr (unpacked again?)"; }

step "--appimage-extract"
mkdir "$work/extract"
(cd "$work/extract" && "$appimage" --appimage-extract)
root="$work/extract/squashfs-root"
[ -x "$root/AppRun" ] || fail "squashfs-root/AppRun is missing or not executable"
grep -qx 'Exec=somna-app' "$root/somna.desktop" || fail "squashfs-root/somna.desktop does not start somna-app"
[ "$(readlink "$root/.DirIcon")" = somna.png ] && [ -s "$root/somna.png" ] || fail "squashfs-root has no icon"
diff -r "$root" "$unpacked" >/dev/null || fail "the extracted tree differs from the unpacked one"
[ "$("$root/AppRun" --cli --version)" = "somna $version" ] || fail "squashfs-root/AppRun --cli --version failed"
echo "squashfs-root matches the unpacked AppDir; its AppRun runs"
rm -rf "$work/extract"

step "the AppImage's app on a fresh store with the demo"
# An AppImage with WebKitGTK bundled (scripts/appimage.sh without --system-webkit) starts in a
# private mount namespace where the host's WebKitGTK is hidden: its libraries read as empty
# files and its helper directory as an empty one, so only the bundled copy can run.
launch=()
if [ -e "$unpacked/usr/lib/libwebkit2gtk-4.1.so.0" ]; then
  if unshare --mount --propagation private true 2>/dev/null; then
    mkdir "$work/empty"
    launch=(unshare --mount --propagation private bash -c '
      for lib in /usr/lib/*/libwebkit2gtk-4.1.so.0 /usr/lib/*/libjavascriptcoregtk-4.1.so.0; do
        [ -e "$lib" ] && mount --bind /dev/null "$(readlink -f "$lib")"
      done
      for dir in /usr/lib/*/webkit2gtk-4.1; do
        [ -d "$dir" ] && mount --bind "$1" "$dir"
      done
      shift
      exec "$@"' _ "$work/empty")
    echo "WebKitGTK is bundled: the host's is hidden from the app"
  else
    echo "WebKitGTK is bundled, but the host's cannot be hidden (unshare --mount needs root): not checked"
  fi
else
  echo "WebKitGTK is not bundled: the app uses the host's"
fi
display=":$((500 + RANDOM % 400))"
Xvfb "$display" -screen 0 1440x900x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
sleep 1
export SOMNA_HOME="$work/home" SOMNA_DB="$work/home/somna.db"
export SOMNA_MODEL_DIR="${SOMNA_MODEL_DIR:-$(SOMNA_HOME= somna_model_dir)}"
DISPLAY="$display" "${launch[@]}" "$appimage" --demo-if-empty >"$work/app.log" 2>&1 &
app_pid=$!
somna_wait_for_demo "$app_pid" "$work/app.log" "the AppImage's app"
# The webview runs in WebKitWebProcess, a child of the app: which one ran?
web_process=""
for pid in $(pgrep -P "$app_pid"); do
  exe="$(readlink -f "/proc/$pid/exe" 2>/dev/null || true)"
  [[ "$exe" == */WebKitWebProcess ]] && web_process="$exe"
done
[ -n "$web_process" ] || fail "the app has no WebKitWebProcess: its webview did not start"
echo "the webview runs in $web_process"
if [ "${#launch[@]}" -gt 0 ] && [[ "$web_process" != "$unpacked"/* ]]; then
  fail "the webview does not run the bundled WebKitGTK"
fi
sleep 5
somna_screenshot "$display" dist/appimage-app.png
echo "the AppImage's app runs: $count demo memories stored so far"
step "somna stats on the app's store (the AppImage's CLI)"
"$appimage" --cli --db "$SOMNA_DB" stats | head -n 3
step "AppImage check passed"
