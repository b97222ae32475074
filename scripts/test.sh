#!/usr/bin/env bash
# Set up and run every test: the Rust core's unit and scenario tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
