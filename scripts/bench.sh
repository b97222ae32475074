#!/usr/bin/env bash
# The standard benchmark as the HPCC simulator runs it: import its config
# (benchmarks/hpcc-dcqcn.config.txt: run.py's DCQCN setting on the 320-host fat-tree with the
# 6,706-flow WebSearch list), write the core scenario with `hopsim run` (whose run folder keeps
# scenario.json), then time that exact scenario in pure Rust with hopsim-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hopsim import-hpcc benchmarks/hpcc-dcqcn.config.txt --out "$work/bench.toml" > /dev/null
hopsim validate "$work/bench.toml" --core-json "$work/scenario.json" > /dev/null
cargo run --quiet --release --bin hopsim-bench -- "$work/scenario.json"
