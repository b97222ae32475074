# Sourced by demo.sh and test.sh: create .venv (Python >= 3.11) if needed, build the Rust core
# into the `hopsim` package (maturin, release mode) and install it with its dependencies.
# Needs only python3 and a Rust toolchain; everything else comes from PyPI and crates.io.

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "hopsim needs Python 3.11 or newer as '$PY' (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  rm -rf .venv
  "$PY" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
python -m pip install --quiet --disable-pip-version-check "maturin>=1.5,<2"
# builds crates/hopsim-py in release mode and installs hopsim (editable) with its dependencies, those
# of the tests and those of the documentation (MkDocs with its Material theme)
echo "building hopsim (Rust core in release mode) and installing it into .venv ..."
if ! maturin develop --release --extras test,docs > .venv/build.log 2>&1; then
  tail -n 60 .venv/build.log >&2
  echo "building hopsim failed; the whole log is .venv/build.log" >&2
  exit 1
fi
