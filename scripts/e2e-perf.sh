#!/usr/bin/env bash
# Measures the 3D view in the real webview on a given store (not part of CI: it needs a
# large store). Usage: scripts/e2e-perf.sh STORE.db [SYNTHETIC_POINTS]
# Prints upload, recolour, selection, picking and lasso times (main-thread ms), time to the
# first frame and raster time; with SYNTHETIC_POINTS, the same for that many generated points.
# With SOMNA_E2E_SHOTS=DIR it also saves space-store.png (the store as opened) and, with
# SYNTHETIC_POINTS, space-synthetic.png (the generated points, coloured by cluster, a lasso
# selected).
# With SOMNA_PERF_BUSY=N in the environment it also measures main-thread blocking while a
# sleep cycle and an import of N messages run (this writes to STORE.db: use a copy).
#
# scripts/e2e-perf.sh --first-start: a new user's first minute instead (tests/e2e/first_start.mjs):
# the app started on a fresh, empty store with the demo; prints when the list and the Space
# first showed memories and when the demo import ended, in seconds from the launch.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh
first_start=
if [ "${1:-}" = "--first-start" ]; then
  first_start=1
  fresh="$(mktemp -d)"
  set -- "$fresh/somna.db"
  # The model stays where it is installed (it is found under SOMNA_HOME otherwise).
  export SOMNA_MODEL_DIR="${SOMNA_MODEL_DIR:-$(somna_model_dir)}"
  export SOMNA_HOME="$fresh"
fi
store="$(realpath "$1")"
somna_build_ui
somna_build_all
somna_install_tauri_driver
work="$(mktemp -d)"
trap 'kill ${driver_pid:-} ${xvfb_pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT
display="${SOMNA_E2E_DISPLAY:-:$((90 + RANDOM % 400))}"
Xvfb "$display" -screen 0 1440x900x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
export DISPLAY="$display"
port="${SOMNA_E2E_PORT:-$((4500 + RANDOM % 400))}"
export SOMNA_DB="$store"
export SOMNA_MODEL_DIR="${SOMNA_MODEL_DIR:-$(somna_model_dir)}"
# The app inherits the driver's environment: on a first start it loads the demo into the
# empty store without asking, as `scripts/setup.sh` starts it (--demo-if-empty).
if [ -n "$first_start" ]; then
  export SOMNA_DEMO_IF_EMPTY=1
fi
# Screenshots (SOMNA_E2E_SHOTS) need WebKit's compositing on (see scripts/e2e.sh); it changes
# how frames are drawn, so take the timings from runs without it.
if [ -n "${SOMNA_E2E_SHOTS:-}" ]; then
  export SOMNA_WEBKIT_COMPOSITING=1
fi
tauri-driver --port "$port" --native-port $((port + 1)) --native-driver /usr/bin/WebKitWebDriver >"$work/driver.log" 2>&1 &
driver_pid=$!
sleep 1
if [ -n "$first_start" ]; then
  SOMNA_APP_BIN="$CARGO_TARGET_DIR/debug/somna-app" SOMNA_WEBDRIVER_URL="http://127.0.0.1:$port" \
    node tests/e2e/first_start.mjs
  exit
fi
SOMNA_APP_BIN="$CARGO_TARGET_DIR/debug/somna-app" SOMNA_WEBDRIVER_URL="http://127.0.0.1:$port" \
  SOMNA_PERF_SYNTH="${2:-0}" SOMNA_PERF_BUSY="${SOMNA_PERF_BUSY:-0}" node tests/e2e/perf.mjs
