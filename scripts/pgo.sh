#!/usr/bin/env bash
# Profile-guided build of the Rust core (rustc's -Cprofile-generate / -Cprofile-use): build it
# instrumented, run a short training set through `hopsim run` and hopsim-bench, then build the
# Python extension and hopsim-bench again with the measured profile, and install that extension
# into .venv.
#
# Why: the engine spends its time in a few large handlers full of branches whose bias only a run
# shows (control or data, PFC or not, host or switch). With the profile, LLVM inlines and lays out
# those paths for the common case: on the standard benchmark's first 1.5 ms, callgrind counts
# 10.49 G instructions for the plain build and 8.96 G with the profile, and every table of the run
# is the same to the bit (the profile moves code, not arithmetic: Rust never fuses or reorders
# floating-point operations on its own).
#
# The training set covers every hop path so that no scheme is laid out as cold code: the standard
# benchmark (DCQCN + PFC, HPCC simulator's MMU), Floodgate, BFC, FlowSail, HPCC, DCTCP, TIMELY,
# Pulser and P-PFC, each for at most 1-2 ms of simulated time (about 30 s in all).
#
#   bash scripts/pgo.sh     # about 4 minutes on 2 cores; `bash scripts/bench.sh` calls it
#
# Needs llvm-profdata matching rustc's LLVM: rustup's `llvm-tools` component, added here when
# rustup is present. Without it the plain build stays installed and this says so (exit 0), so the
# benchmark still runs. A later `source scripts/venv.sh` (demo.sh, test.sh) puts the plain build
# back.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh

root=$(pwd)
pgo="$root/target/pgo"
# no marker left from an earlier run while the plain build is what venv.sh just installed
rm -f "$pgo/installed"

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup > /dev/null; then
  rustup component add llvm-tools > /dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "pgo: no llvm-profdata for this rustc (rustup component add llvm-tools); keeping the plain build" >&2
  exit 0
fi

rm -rf "$pgo/raw" "$pgo/train" "$pgo/profile.profdata"
mkdir -p "$pgo/train"
so=python/hopsim/_native.abi3.so
cp "$so" "$pgo/plain.so"
# the plain build goes back if anything below fails
done_ok=0
trap 'if [ "$done_ok" = 0 ]; then cp "$pgo/plain.so" "$root/$so"; echo "pgo: failed; the plain build is installed" >&2; fi' EXIT

echo "pgo: building the instrumented core ..."
gen() { RUSTFLAGS="-Cprofile-generate=$pgo/raw" CARGO_TARGET_DIR="$root/target/pgo-gen" cargo build --quiet --release "$@"; }
# the extension maturin builds (pyproject.toml's features): the example plugin scheme included
gen -p hopsim-py --features example-plugin
gen -p hopsim-core --bin hopsim-bench
# build scripts and proc macros ran instrumented too: only the training runs count
rm -rf "$pgo/raw"
cp target/pgo-gen/release/libhopsim_py.so "$so"

echo "pgo: training ..."
hopsim import-hpcc benchmarks/hpcc-dcqcn.config.txt --out "$pgo/train/bench.toml" > /dev/null 2>&1
# each scenario through both programs: the extension and hopsim-bench link the core under
# different symbol names (its features differ), so each needs its own counts
train() { # scenario, duration
  hopsim run "$1" --out "$pgo/train/run" --force --set duration="$2" > /dev/null 2>&1
  target/pgo-gen/release/hopsim-bench "$pgo/train/run/scenario.json" > /dev/null
}
train "$pgo/train/bench.toml" 2ms
train scenarios/papers/floodgate/base-websearch.toml 1ms
train scenarios/papers/bfc/fig11-facebook-incast.toml 1ms
train scenarios/papers/flowsail/fabric-webserver.toml 500us
for s in hpcc-4to1 dctcp-two-flows timely-burst pulser-24to1 ppfc-16to1; do
  train "scenarios/$s.toml" 1ms
done
"$profdata" merge -o "$pgo/profile.profdata" "$pgo/raw"

echo "pgo: building with the profile ..."
use() { RUSTFLAGS="-Cprofile-use=$pgo/profile.profdata" CARGO_TARGET_DIR="$root/target/pgo-use" cargo build --quiet --release "$@"; }
use -p hopsim-py --features example-plugin
use -p hopsim-core --bin hopsim-bench
cp target/pgo-use/release/libhopsim_py.so "$so"
done_ok=1
touch "$pgo/installed" # what bench.sh checks
echo "pgo: installed the profile-guided core into .venv; hopsim-bench: target/pgo-use/release/hopsim-bench"
