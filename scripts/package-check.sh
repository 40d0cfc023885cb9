#!/usr/bin/env bash
# Installs the .deb that scripts/package.sh built and checks it as a user would meet it:
# `somna --version` from the package, the desktop entry and icon in place, and the installed
# app started under Xvfb on a fresh store with the demo, its window shot to
# dist/installed-app.png. Exits non-zero when any of it fails.
#
#   scripts/package-check.sh [dist/somna_<version>_amd64.deb]
#
# Installing needs root (apt-get); CI runs as root. The package stays installed afterwards
# (`apt-get remove somna` removes it).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

deb="${1:-$(ls -t dist/*.deb 2>/dev/null | head -n 1)}"
[ -f "$deb" ] || { echo "package-check.sh: no .deb found (run scripts/package.sh first)" >&2; exit 1; }

step "installing $deb"
# apt-get resolves the package's dependencies (WebKitGTK, GTK) from Debian's archive.
sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "./$deb" >/dev/null

fail() { echo "package-check.sh: $*" >&2; exit 1; }
pkg="$(dpkg-deb -f "$deb" Package)"
dpkg -L "$pkg" | grep -qx /usr/bin/somna || fail "the package does not install /usr/bin/somna"
dpkg -L "$pkg" | grep -qx /usr/bin/somna-app || fail "the package does not install /usr/bin/somna-app"
desktop="$(dpkg -L "$pkg" | grep -E '^/usr/share/applications/.*\.desktop$' | head -n 1)"
[ -n "$desktop" ] || fail "the package has no desktop entry"
grep -q '^Exec=somna-app' "$desktop" || fail "$desktop does not start somna-app"
dpkg -L "$pkg" | grep -q '^/usr/share/icons/hicolor/.*/apps/.*\.png$' || fail "the package has no icon"

step "somna --version (installed)"
version="$(/usr/bin/somna --version)"
echo "$version"
[[ "$version" == "somna $(dpkg-deb -f "$deb" Version)"* ]] || fail "version '$version' does not match the package"

step "the installed app on a fresh store with the demo"
work="$(mktemp -d)"
cleanup() {
  [ -n "${app_pid:-}" ] && kill "$app_pid" 2>/dev/null || true
  [ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
display=":$((500 + RANDOM % 400))"
Xvfb "$display" -screen 0 1440x900x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
sleep 1
export SOMNA_HOME="$work/home" SOMNA_DB="$work/home/somna.db"
export SOMNA_MODEL_DIR="${SOMNA_MODEL_DIR:-$(SOMNA_HOME= somna_model_dir)}"
DISPLAY="$display" /usr/bin/somna-app --demo-if-empty >"$work/app.log" 2>&1 &
app_pid=$!
somna_wait_for_demo "$app_pid" "$work/app.log" "the installed app"
sleep 5
somna_screenshot "$display" dist/installed-app.png
echo "the installed app runs: $count demo memories stored so far"
step "somna stats on the app's store (installed CLI)"
/usr/bin/somna --db "$SOMNA_DB" stats | head -n 3
step "package check passed"
