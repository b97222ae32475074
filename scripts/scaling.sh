#!/usr/bin/env bash
# Scaling study (issue 14): wall time, peak memory and events/s vs hosts and load; writes
# benchmarks/scaling.{csv,md,png}. `--quick` runs the two smallest networks at 30% only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
python scripts/scaling.py "$@"
