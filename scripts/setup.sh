#!/usr/bin/env bash
# Installs what is missing (system packages, the embedding model), builds Somna, and
# opens the store so it is ready to use. The desktop app is not part of the build yet:
# the command-line tool `somna` is what this starts.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

somna_install_system_packages
somna_install_model
step "opening the store"
"$CARGO_TARGET_DIR/debug/somna" init
mkdir -p "$HOME/.local/bin"
ln -sf "$CARGO_TARGET_DIR/debug/somna" "$HOME/.local/bin/somna"
step "ready: 'somna --help' (linked into ~/.local/bin)"
"$CARGO_TARGET_DIR/debug/somna" --help
