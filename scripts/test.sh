#!/usr/bin/env bash
# Set up and run every test: the Rust workspace (core + binding), the documentation's build (MkDocs,
# warnings as errors), then the Python package's pytest suite (which needs headless Chromium for the
# report test: Debian's `chromium`).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release

source scripts/venv.sh

NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet --site-dir site

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium (headless browser for the report test)"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi

python -m pytest tests
