#!/usr/bin/env bash
# End-to-end tests of the desktop app: builds the UI and the app, starts Xvfb and
# tauri-driver (WebKitWebDriver), and runs tests/e2e with Node's test runner against a
# fresh store. Screenshots go to $SOMNA_E2E_SHOTS when set. The X display and the driver
# port are random unless SOMNA_E2E_DISPLAY (e.g. :33) and SOMNA_E2E_PORT say otherwise.
# tests/e2e/postgres.test.mjs opens a fresh schema of the Postgres at $SOMNA_TEST_PG_URL (started
# here, and stopped at the end, when unset). Arguments: test files to run instead of all of tests/e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

somna_build_ui
# The same build as the tests' (a no-op after scripts/test.sh built it).
somna_build_all
somna_install_tauri_driver

# A real Postgres for tests/e2e/postgres.test.mjs: the one scripts/test.sh started, else
# started here (and stopped at the end); the app opens a fresh schema of it.
started_pg=
if [ -z "${SOMNA_TEST_PG_URL:-}" ]; then
  bash scripts/pg.sh start >/dev/null
  started_pg=1
fi
SOMNA_E2E_PG_STORE="$(bash scripts/pg.sh schema "t_$$_$(date +%s)")"
export SOMNA_E2E_PG_STORE

work="$(mktemp -d)"
cleanup() {
  [ -n "$started_pg" ] && bash scripts/pg.sh stop || true
  [ -n "${driver_pid:-}" ] && kill "$driver_pid" 2>/dev/null || true
  [ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null || true
  pkill -f "$CARGO_TARGET_DIR/debug/somna-app" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

display="${SOMNA_E2E_DISPLAY:-:$((90 + RANDOM % 400))}"
Xvfb "$display" -screen 0 1440x900x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
export DISPLAY="$display"
sleep 1

port="${SOMNA_E2E_PORT:-$((4500 + RANDOM % 400))}"
# The app opens a store in a fresh directory; the model comes from the usual place.
export SOMNA_DB="$work/store/somna.db"
export SOMNA_MODEL_DIR="${SOMNA_MODEL_DIR:-$(somna_model_dir)}"
# The data directory (the app's server token) is fresh too.
export SOMNA_HOME="$work/store"
# Without a GPU the app turns WebKit's accelerated compositing off (src-tauri/src/
# webview_env.rs). WebKitWebDriver's screenshot command then never answers (the first one
# timed out after 300 s), so a run that takes screenshots keeps WebKit's default; the
# tests themselves run the way a user's app does.
if [[ -n "${SOMNA_E2E_SHOTS:-}" ]]; then
  export SOMNA_WEBKIT_COMPOSITING=1
fi
tauri-driver --port "$port" --native-port $((port + 1)) --native-driver /usr/bin/WebKitWebDriver \
  >"$work/driver.log" 2>&1 &
driver_pid=$!
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$port/status" >/dev/null 2>&1 && break
  sleep 0.2
done

# The test files given as arguments (e.g. tests/e2e/panels.test.mjs), else all of them.
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(tests/e2e/)
step "end-to-end tests (Xvfb $display, tauri-driver :$port)"
status=0
SOMNA_APP_BIN="$CARGO_TARGET_DIR/debug/somna-app" SOMNA_CLI_BIN="$CARGO_TARGET_DIR/debug/somna" SOMNA_WEBDRIVER_URL="http://127.0.0.1:$port" \
  node --test --test-concurrency=1 "${files[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- tauri-driver log (tail) ---"
  tail -n 40 "$work/driver.log" || true
fi
exit "$status"
