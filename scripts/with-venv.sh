# Sourced by the agreement commands: PY = the repository's .venv python when it exists (scripts/venv.sh
# builds it), else python3; exit 2 with a line when it cannot import hopsim.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY=python3
[ -x "$here/../.venv/bin/python" ] && PY="$here/../.venv/bin/python"
if ! "$PY" -c 'import hopsim' 2>/dev/null; then
  echo "error: $PY cannot import hopsim; build it first: source scripts/venv.sh" >&2
  exit 2
fi
