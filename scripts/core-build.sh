# Sourced by bench.sh and scaling.sh: set up .venv with the profile-guided core (scripts/pgo.sh),
# or with the plain release build when PGO=0 is set or the toolchain cannot make one, and say
# which in HOPSIM_BUILD (the timings' tables name it: the two builds differ by 3-17% in time).
if [ "${PGO:-1}" != 0 ]; then
  bash scripts/pgo.sh # sets up .venv as scripts/venv.sh does, then installs the PGO core there
  # shellcheck disable=SC1091
  source .venv/bin/activate
else
  source scripts/venv.sh
fi
if [ "${PGO:-1}" != 0 ] && [ -f target/pgo/installed ]; then
  export HOPSIM_BUILD="profile-guided (scripts/pgo.sh)"
  HOPSIM_BENCH=target/pgo-use/release/hopsim-bench
else
  export HOPSIM_BUILD="plain release"
  cargo build --quiet --release --bin hopsim-bench
  HOPSIM_BENCH=target/release/hopsim-bench
fi
echo "build: $HOPSIM_BUILD"
