#!/usr/bin/env bash
# The demo: set up hopsim in .venv, run the P-PFC paper's 16:1 incast under PFC, P-PFC and CaPFC
# (a sweep, two seeds each), show a table of FCTs, and build the HTML report.
# Needs python3 (3.11+) and a Rust toolchain; a few minutes on 2 cores, mostly compiling.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh

out=runs/demo
rm -rf "$out"
hopsim sweep scenarios/sweeps/pfc-vs-ppfc.toml --out "$out"
hopsim query "$out" "
  SELECT f.label AS scheme, count(*) AS flows,
         round(avg(f.fct_ns) / 1000, 1) AS avg_fct_us,
         round(quantile_cont(f.fct_ns, 0.99) / 1000, 1) AS p99_fct_us,
         round(max(r.max_switch_buffer_bytes) / 1e3) AS peak_buffer_kb
  FROM flows f JOIN runs r ON f.run = r.run GROUP BY f.label ORDER BY f.label"
hopsim report "$out" --out "$out/report.html"
echo
echo "Report: $(pwd)/$out/report.html"
