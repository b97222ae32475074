#!/usr/bin/env bash
# hopsim vs the HPCC ns-3 simulator on its reference runs: one summary table.
#   bash scripts/hpcc-agreement.sh [REF_ROOT] [--tol 0.10] [--keep DIR] [--only NAME]
# REF_ROOT defaults to ../shared/reference/ns3-hpcc beside the repository, else
# /work/shared/reference/ns3-hpcc; see scripts/hpcc-agreement.py for what is run and shown.
set -uo pipefail
source "$(dirname "$0")/with-venv.sh"
exec "$PY" "$here/hpcc-agreement.py" "$@"
