#!/usr/bin/env bash
# Install what the browser test of the replay viewer (tests/test_viewer.py) needs:
#   * Chromium and chromedriver from the Debian/Ubuntu packages (needs root, or sudo);
#   * the Playwright Python package, pinned (constraints.txt pins its greenlet), into the project's venv.
# Idempotent and quick when everything is already there. It never runs `playwright install`:
# the test drives the system Chromium (/usr/bin/chromium), no browser download is needed.
#
#   scripts/install_browser.sh            # uses .venv/bin/python
#   PYTHON=/path/to/python scripts/install_browser.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PLAYWRIGHT_VERSION="${PLAYWRIGHT_VERSION:-1.65.2}"
PYTHON="${PYTHON:-.venv/bin/python}"

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium already installed: $(chromium --version 2>/dev/null || echo '?')"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "need root (or sudo) to install chromium" >&2; exit 1; }
        SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver
    echo "installed: $(chromium --version 2>/dev/null || echo chromium)"
fi

if [ -x "$PYTHON" ] || command -v "$PYTHON" >/dev/null 2>&1; then
    if "$PYTHON" -c "import playwright, importlib.metadata as m; import sys; \
sys.exit(m.version('playwright') != '$PLAYWRIGHT_VERSION')" 2>/dev/null; then
        echo "playwright $PLAYWRIGHT_VERSION already installed in $PYTHON"
    else
        "$PYTHON" -m pip install --quiet -c constraints.txt "playwright==$PLAYWRIGHT_VERSION"
        echo "installed playwright $PLAYWRIGHT_VERSION into $PYTHON"
    fi
else
    echo "no python at $PYTHON (make setup first, or set PYTHON=...)" >&2
    exit 1
fi
