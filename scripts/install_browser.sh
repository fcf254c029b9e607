#!/usr/bin/env bash
# Install what the browser test needs: Debian's chromium (system package) and the playwright Python client.
# Idempotent: does nothing when both are already there. `playwright install` is deliberately not used — it downloads
# its own browser build from the network; the test drives /usr/bin/chromium instead.
#
#   scripts/install_browser.sh            # uses .venv/bin/python for playwright
#   PYTHON=python3 scripts/install_browser.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

if [ -x "$CHROMIUM" ]; then
    echo "chromium: present ($("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM"))"
else
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "chromium missing at $CHROMIUM and apt-get is not available: install Chromium with your package manager" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
            echo "chromium missing and not running as root (no sudo): run 'apt-get install -y chromium' as root" >&2
            exit 1
        fi
    fi
    echo "chromium: installing with apt-get (about 30 s, 350 MB)"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq chromium >/dev/null
    "$CHROMIUM" --version
fi

if "$PYTHON" -c "import playwright" >/dev/null 2>&1; then
    echo "playwright: present"
else
    echo "playwright: installing into $PYTHON"
    "$PYTHON" -m pip install --quiet "playwright>=1.45"
fi
