#!/usr/bin/env bash
# The official Python MCP client (PyPI `mcp`, pinned), in its own venv, for the tests that
# drive `somna mcp` and `somna serve` with a client this project does not write.
# Idempotent: does nothing when the pinned version is already installed. Prints the venv's python.
set -euo pipefail
MCP_VERSION="2.3.0"
VENV="${SOMNA_MCP_VENV:-$HOME/.cache/somna/mcp-venv}"
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
    python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" >&2
fi
echo "$VENV/bin/python"
