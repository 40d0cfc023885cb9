#!/usr/bin/env bash
# Installs what is missing (system packages, UI packages, the embedding model), builds the
# command-line tool and the desktop app, and starts the app. With an empty store the app
# loads the bundled demo conversations (assets/demo) so every view has something to show.
# Pass --no-start to set up without starting the app.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

somna_install_system_packages
somna_build_ui
# One build of both binaries (one feature selection: see somna_build_all in env.sh).
step "building somna and the desktop app"
cargo build --locked -p somna-cli -p somna-app
somna_install_model
mkdir -p "$HOME/.local/bin"
ln -sf "$CARGO_TARGET_DIR/debug/somna" "$HOME/.local/bin/somna"
ln -sf "$CARGO_TARGET_DIR/debug/somna-app" "$HOME/.local/bin/somna-app"
step "ready: 'somna --help' and 'somna-app' are linked into ~/.local/bin"
if [ "${1:-}" = "--no-start" ]; then
  exit 0
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "No display found (DISPLAY/WAYLAND_DISPLAY unset): start the app from a desktop session with 'somna-app --demo-if-empty'." >&2
  exit 0
fi
step "starting Somna"
exec "$CARGO_TARGET_DIR/debug/somna-app" --demo-if-empty
