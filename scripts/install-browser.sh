#!/usr/bin/env bash
# Install what the report's browser test needs: Debian's chromium and the Playwright client
# (no browser download: the test drives /usr/bin/chromium). Idempotent and quiet.
# Usage: scripts/install-browser.sh [PYTHON]   (default: .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-.venv/bin/python}"

if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-browser: chromium is missing and installing it needs root (apt-get install chromium)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium >/dev/null
fi

if ! "$PYTHON" -c "import playwright" >/dev/null 2>&1; then
    "$PYTHON" -m pip install -q "playwright>=1.40"
fi
