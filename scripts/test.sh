#!/usr/bin/env bash
# Somna's whole test suite, from a fresh clone on Debian/Ubuntu: installs what is missing
# (system packages, the embedding model), then format check, clippy, and every test.
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

somna_install_system_packages
somna_prune_target
# The app embeds ui/dist at compile time, so the UI is built (and type-checked) first.
somna_build_ui
somna_build_all
somna_install_model
# The Python MCP client (pinned) that the MCP tests drive `somna mcp` / `somna serve` with.
bash scripts/mcp-venv.sh >/dev/null

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "UI unit tests (vitest)"
(cd ui && npm test --silent)
step "cargo test"
# A real Postgres with pgvector on loopback for the Postgres store's tests (they fail, never
# skip, without it); stopped when this script exits, however it exits.
SOMNA_TEST_PG_URL="$(bash scripts/pg.sh start)"
export SOMNA_TEST_PG_URL
bash scripts/pg.sh clean
trap 'bash scripts/pg.sh stop' EXIT
cargo test --workspace --all-targets --locked
step "the engine's integration tests again, on a Postgres store"
# The binary the run above built, run again: `cargo test --test integration` would resolve
# the dependencies' features for fewer targets and build the engine anew (9 of CI's minutes
# on a cold cache, 2026-12-02). Run from the package's folder, as cargo runs it.
integration="$(cargo test --workspace --all-targets --locked --no-run --message-format=json 2>/dev/null |
  python3 scripts/test_binary.py integration)"
(cd crates/engine && SOMNA_TEST_BACKEND=postgres "$integration")
# The patched bhtsne (third_party/, not a workspace member) carries its own tests.
cargo test --locked -p bhtsne --lib
# So do the patched hnsw_rs and anndists; their tests need dev-dependencies, which cargo
# resolves only for a package built on its own (its own Cargo.lock).
cargo test --locked --manifest-path third_party/hnsw_rs/Cargo.toml --features simdeez_f --lib --test somna_patch
cargo test --locked --manifest-path third_party/umap-rs/Cargo.toml --test somna_patch
step "end-to-end tests of the desktop app"
bash scripts/e2e.sh
step "the Debian package: built from the tested binaries, installed, started on the demo"
bash scripts/package.sh
bash scripts/package-check.sh
step "the AppImage: packed from the same binaries with Somna's own runtime, started as a user would"
bash scripts/appimage.sh
bash scripts/appimage-check.sh
step "all tests passed"
