#!/usr/bin/env bash
# hopsim vs Floodgate-NS3 on reference runs of it (built and run outside this repository): one table.
#   bash scripts/floodgate-agreement.sh REF_ROOT --tree FLOODGATE_NS3_TREE [--tol 0.10] [--keep DIR] [--only NAME]
# See scripts/floodgate-agreement.py for what each run folder holds and what is run and shown.
set -uo pipefail
source "$(dirname "$0")/with-venv.sh"
exec "$PY" "$here/floodgate-agreement.py" "$@"
