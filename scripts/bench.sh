#!/usr/bin/env bash
# The standard benchmark as the HPCC simulator runs it: import its config
# (benchmarks/hpcc-dcqcn.config.txt: run.py's DCQCN setting on the 320-host fat-tree with the
# 6,706-flow WebSearch list), then time
#   1. the path users take: `hopsim run` of the imported scenario, default records, writing its
#      run folder (wall time and peak RSS of the whole process), and
#   2. the core alone: hopsim-bench on that scenario's core JSON (no periodic samples).
# Each is compared with the HPCC ns-3 simulator's figure on the same input on a 2-core machine
# (REF_S seconds, REF_MB peak; measured once, see README "Benchmark").
# Both run the profile-guided build (scripts/pgo.sh, about 4 minutes) unless PGO=0 is set or the
# toolchain cannot make one; the first line says which build was timed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/core-build.sh
REF_S=274
REF_MB=361
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hopsim import-hpcc benchmarks/hpcc-dcqcn.config.txt --out "$work/bench.toml" > /dev/null 2>&1
python - "$work" "$REF_S" "$REF_MB" "$HOPSIM_BENCH" <<'PY'
import json, resource, subprocess, sys, time
work, ref_s, ref_mb, bench = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
t0 = time.perf_counter()
subprocess.run(["hopsim", "run", f"{work}/bench.toml", "--out", f"{work}/run"], check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
s = json.load(open(f"{work}/run/summary.json"))
print(f"scenario hash {s['scenario_hash']}")
print(f"hopsim run (CLI path): {wall:.1f} s wall, {rss:.0f} MB peak RSS, {s['events']:,} events, "
      f"{s['flows_finished']}/{s['flows']} flows")
print(f"  vs the HPCC ns-3 simulator ({ref_s:.0f} s, {ref_mb:.0f} MB): {ref_s / wall:.1f}x faster, "
      f"{ref_mb / rss:.1f}x leaner")
out = subprocess.run([bench, f"{work}/run/scenario.json"], check=True,
                     capture_output=True, text=True).stdout
print("hopsim-bench (core alone, no samples):")
print("  " + out.strip().replace("\n", "\n  "))
w = float(next(l.split()[1] for l in out.splitlines() if l.startswith("wall_s")))
print(f"  vs the HPCC ns-3 simulator: {ref_s / w:.1f}x faster")
PY
