#!/bin/sh
# Differential fuzzing of the compiler and the CPU-side backends (issue 12):
# random race-free schedules and their mutants, for MINUTES minutes from
# seed FIRST_SEED; failing schedules (and, shrunk, their minimal forms) are
# written to OUT_DIR. See test/diff/difftest.py and test/diff/RESULTS.md.
#
# usage: scripts/difftest.sh [MINUTES=30] [FIRST_SEED=1000] [OUT_DIR=build/difftest]
# env:   JOBS (2), MUTANTS (6 per schedule), AVOID (e.g. self-copy), BIN (build/bin),
#        LDST_EVERY (1: the ld/st kernel for every Nth seed; 0: never)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-30}
start=${2:-1000}
out=${3:-$root/build/difftest}
exec python3 "$root/test/diff/difftest.py" --bin "${BIN:-$root/build/bin}" \
  --minutes "$minutes" --start "$start" --jobs "${JOBS:-2}" \
  --mutants "${MUTANTS:-6}" --out "$out" --shrink --avoid "${AVOID:-}" \
  --ldst-every "${LDST_EVERY:-1}"
