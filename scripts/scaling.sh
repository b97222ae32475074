#!/usr/bin/env bash
# Scaling study (issue 14): wall time, peak memory and events/s vs hosts and load; writes
# benchmarks/scaling.{csv,md,png}. `--quick` runs the two smallest networks at 30% only;
# `--length` the memory-against-workload-length series (benchmarks/scaling_length.{csv,md}). The
# profile-guided core unless PGO=0 (scripts/core-build.sh); the table names the build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/core-build.sh
python scripts/scaling.py "$@"
