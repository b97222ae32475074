#!/usr/bin/env bash
# hopsim vs the BFC paper's simulator (BFC_NS3_NSDI2022) on reference runs of it (run outside this
# repository): one table per run.
#   bash scripts/bfc-agreement.sh REF_ROOT [--keep DIR] [--only NAME] [--threads N]
# See scripts/bfc-agreement.py for what each run folder holds and what is run and shown.
set -uo pipefail
source "$(dirname "$0")/with-venv.sh"
exec "$PY" "$here/bfc-agreement.py" "$@"
