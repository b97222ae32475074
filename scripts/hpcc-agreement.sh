#!/usr/bin/env bash
# hopsim vs the HPCC ns-3 simulator on its reference runs: one summary table.
#   bash scripts/hpcc-agreement.sh [REF_ROOT] [--tol 0.10] [--keep DIR] [--only NAME]
# REF_ROOT defaults to ../shared/reference/ns3-hpcc beside the repository, else
# /work/shared/reference/ns3-hpcc; see scripts/hpcc-agreement.py for what is run and shown.
# Uses the repository's .venv when it exists (scripts/venv.sh builds it), else python3.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PY=python3
[ -x "$here/../.venv/bin/python" ] && PY="$here/../.venv/bin/python"
if ! "$PY" -c 'import hopsim' 2>/dev/null; then
  echo "error: $PY cannot import hopsim; build it first: source scripts/venv.sh" >&2
  exit 2
fi
exec "$PY" "$here/hpcc-agreement.py" "$@"
